-- Up Migration

-- Burn-in results as data. A burn-in job's outcome per device (every test's pass or fail, exit
-- code, figures and artifacts: the domain's BurnInDeviceResult) is kept with the job's claim on
-- the device; the device keeps the status of its last burn-in, which the device list filters on
-- and RELEASE is gated by.
ALTER TABLE job_devices ADD COLUMN burn_in jsonb;
ALTER TABLE devices
  ADD COLUMN burn_in_status varchar(10) CHECK (burn_in_status IN ('PASSED', 'FAILED')),
  ADD COLUMN burn_in_job_id uuid,
  ADD COLUMN burn_in_at timestamptz(3);
CREATE INDEX devices_burn_in_status_idx ON devices (burn_in_status);
-- The site's log explorer, queried for the job, set when a job failed.
ALTER TABLE jobs ADD COLUMN logs_url text;

-- Down Migration
ALTER TABLE jobs DROP COLUMN logs_url;
DROP INDEX devices_burn_in_status_idx;
ALTER TABLE devices DROP COLUMN burn_in_at, DROP COLUMN burn_in_job_id, DROP COLUMN burn_in_status;
ALTER TABLE job_devices DROP COLUMN burn_in;
