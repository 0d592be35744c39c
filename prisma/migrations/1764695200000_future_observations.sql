-- Up Migration

-- Observations stamped in the future (an agent's clock far ahead, or a year-10000 observedAt the
-- API accepted before it bounded times) made every read of the device fail and every later push
-- of the source look stale. The API refuses them now; rows written before are brought back to
-- the time of this migration, which is when they are known to have been observed at the latest.
UPDATE devices SET netbox_observed_at = now() WHERE netbox_observed_at > now() + interval '5 minutes';
UPDATE devices SET ironic_observed_at = now() WHERE ironic_observed_at > now() + interval '5 minutes';
UPDATE devices SET slurm_observed_at = now() WHERE slurm_observed_at > now() + interval '5 minutes';
UPDATE devices SET health_observed_at = now() WHERE health_observed_at > now() + interval '5 minutes';
UPDATE reflection_state SET observed_at = now() WHERE observed_at > now() + interval '5 minutes';
