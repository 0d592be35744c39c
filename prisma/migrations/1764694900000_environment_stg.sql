-- Up Migration

-- The staging environment is named `stg`, as the rollout guide and the clusters name it
-- (fleet-mgr-stg-<deployment>); satellites recorded under the earlier name `staging` follow.
UPDATE satellites SET environment = 'stg' WHERE environment = 'staging';

-- Down Migration

UPDATE satellites SET environment = 'staging' WHERE environment = 'stg';
