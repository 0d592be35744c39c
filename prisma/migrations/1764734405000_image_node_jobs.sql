-- Up Migration

-- IMAGE_NODE: deploy an image onto an available Ironic node (the inverse of TEARDOWN).
ALTER TYPE job_kind ADD VALUE IF NOT EXISTS 'IMAGE_NODE' BEFORE 'REPAIR';

-- Down Migration
-- PostgreSQL cannot drop an enum value: the type is rebuilt without it, and IMAGE_NODE jobs go.
DELETE FROM jobs WHERE kind = 'IMAGE_NODE';
ALTER TYPE job_kind RENAME TO job_kind_with_image_node;
CREATE TYPE job_kind AS ENUM ('ENROL', 'UNENROL', 'BURN_IN', 'RELEASE', 'TEARDOWN', 'REIMAGE', 'REPAIR', 'NODE_SWAP', 'SLURM_ADOPT');
ALTER TABLE jobs ALTER COLUMN kind TYPE job_kind USING kind::text::job_kind;
DROP TYPE job_kind_with_image_node;
