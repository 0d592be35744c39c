-- Up Migration

CREATE TYPE job_kind AS ENUM ('ENROL', 'UNENROL', 'BURN_IN', 'RELEASE', 'TEARDOWN', 'REIMAGE', 'REPAIR', 'NODE_SWAP');
CREATE TYPE job_status AS ENUM ('PENDING', 'SUBMITTED', 'RUNNING', 'CANCELLING', 'SUCCEEDED', 'FAILED', 'CANCELLED');

CREATE TABLE jobs (
  id uuid NOT NULL DEFAULT uuid_generate_v7(),
  name varchar(100) NOT NULL,
  kind job_kind NOT NULL,
  status job_status NOT NULL DEFAULT 'PENDING',
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE RESTRICT,
  params jsonb NOT NULL DEFAULT '{}',
  steps jsonb NOT NULL DEFAULT '[]',
  progress double precision NOT NULL DEFAULT 0,
  error jsonb,
  workflow_id varchar(200),
  created_by varchar(200) NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  cancel_requested_at timestamptz(3),
  finished_at timestamptz(3),
  version integer NOT NULL DEFAULT 1,
  CONSTRAINT jobs_pkey PRIMARY KEY (id),
  CONSTRAINT jobs_progress CHECK (progress >= 0 AND progress <= 1)
);
CREATE UNIQUE INDEX jobs_name_key ON jobs (name);
CREATE INDEX jobs_site_id_status_idx ON jobs (site_id, status);

CREATE TABLE job_devices (
  job_id uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  device_id uuid NOT NULL REFERENCES devices (id) ON DELETE RESTRICT,
  active boolean NOT NULL DEFAULT true,
  CONSTRAINT job_devices_pkey PRIMARY KEY (job_id, device_id)
);
CREATE INDEX job_devices_device_id_idx ON job_devices (device_id);
-- At most one active job per device, whatever the code does: two operators racing to enrol
-- the same node get one job and one 409.
CREATE UNIQUE INDEX job_devices_one_active_job ON job_devices (device_id) WHERE active;
