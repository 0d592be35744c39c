-- Up Migration

-- "The site has SLURM" (slurm_enabled: burn-in runs there) and "SLURM reached through OpenStack
-- (Nova)" (openstack_slurm_enabled, the rollout guide's openstack.slurm.enabled: SLURM adoption
-- and the release's SLURM step) were one flag. Every site that had it keeps both on, so every
-- workflow behaves as before; a standalone-Ironic site with SLURM turns the second off.
ALTER TABLE sites ADD COLUMN openstack_slurm_enabled boolean NOT NULL DEFAULT false;
UPDATE sites SET openstack_slurm_enabled = slurm_enabled;
-- SLURM through Nova is SLURM: the second flag without the first means nothing coherent.
ALTER TABLE sites ADD CONSTRAINT sites_openstack_slurm_needs_slurm CHECK (NOT openstack_slurm_enabled OR slurm_enabled);

-- A Nova server on each Ironic node from the site's SlurmBootstrapConfig, until its SLURM node is up.
ALTER TYPE job_kind ADD VALUE IF NOT EXISTS 'SLURM_ADOPT';

-- Down Migration
ALTER TABLE sites DROP CONSTRAINT sites_openstack_slurm_needs_slurm;
ALTER TABLE sites DROP COLUMN openstack_slurm_enabled;
-- PostgreSQL cannot drop an enum value; SLURM_ADOPT stays in job_kind.
