-- Up Migration

CREATE TYPE device_class AS ENUM ('GPU_COMPUTE', 'CPU_BAREMETAL', 'CPU_HYPERVISOR', 'NETWORK', 'STORAGE', 'OTHER');
CREATE TYPE cpu_architecture AS ENUM ('x86_64', 'aarch64');
-- NetBox 4.x dcim.device status choices.
CREATE TYPE netbox_device_status AS ENUM ('planned', 'staged', 'active', 'offline', 'failed', 'inventory', 'decommissioning');
CREATE TYPE operational_status AS ENUM ('AVAILABLE', 'ALLOCATED', 'ENROLLING', 'BURN_IN', 'IMPAIRED', 'QUARANTINED', 'FAILED', 'STALE', 'UNKNOWN');

CREATE TABLE locations (
  id uuid NOT NULL DEFAULT uuid_generate_v7(),
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE RESTRICT,
  slug varchar(63) NOT NULL,
  name varchar(200) NOT NULL,
  netbox_id integer,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT locations_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX locations_site_id_slug_key ON locations (site_id, slug);

CREATE TABLE racks (
  id uuid NOT NULL DEFAULT uuid_generate_v7(),
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE RESTRICT,
  location_id uuid REFERENCES locations (id) ON DELETE SET NULL,
  name varchar(100) NOT NULL,
  netbox_id integer,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT racks_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX racks_site_id_name_key ON racks (site_id, name);

CREATE TABLE device_types (
  id uuid NOT NULL DEFAULT uuid_generate_v7(),
  slug varchar(100) NOT NULL,
  manufacturer varchar(100) NOT NULL,
  model varchar(100) NOT NULL,
  cpu_architecture cpu_architecture NOT NULL,
  netbox_id integer,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT device_types_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX device_types_slug_key ON device_types (slug);

CREATE TABLE device_roles (
  id uuid NOT NULL DEFAULT uuid_generate_v7(),
  slug varchar(100) NOT NULL,
  name varchar(100) NOT NULL,
  device_class device_class NOT NULL,
  netbox_id integer,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT device_roles_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX device_roles_slug_key ON device_roles (slug);

CREATE TABLE devices (
  id uuid NOT NULL DEFAULT uuid_generate_v7(),
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE RESTRICT,
  name varchar(200) NOT NULL,
  serial varchar(100),
  asset_tag varchar(100),
  rack_id uuid REFERENCES racks (id) ON DELETE SET NULL,
  rack_position numeric(6,1),
  device_type_id uuid REFERENCES device_types (id) ON DELETE RESTRICT,
  device_role_id uuid REFERENCES device_roles (id) ON DELETE RESTRICT,
  netbox_id integer,
  netbox_status netbox_device_status NOT NULL DEFAULT 'planned',
  netbox_missing boolean NOT NULL DEFAULT false,
  netbox_observed_at timestamptz(3),
  platform_class varchar(100),
  tags text[] NOT NULL DEFAULT '{}',
  bmc_address varchar(255),
  ironic_instance varchar(20),
  ironic_node_uuid uuid,
  ironic_provision_state varchar(40),
  ironic_target_provision_state varchar(40),
  ironic_power_state varchar(40),
  ironic_maintenance boolean,
  ironic_maintenance_reason text,
  ironic_last_error text,
  ironic_fault varchar(100),
  ironic_observed_at timestamptz(3),
  slurm_node_name varchar(200),
  slurm_state varchar(40),
  slurm_state_flags text[] NOT NULL DEFAULT '{}',
  slurm_reason text,
  slurm_partitions text[] NOT NULL DEFAULT '{}',
  slurm_observed_at timestamptz(3),
  health_status varchar(20),
  health_conditions jsonb,
  health_observed_at timestamptz(3),
  cordoned boolean NOT NULL DEFAULT false,
  cordon_reason text,
  cordoned_by varchar(200),
  cordoned_at timestamptz(3),
  notes text,
  -- Derived by packages/domain deriveDeviceStatus() on every write, without staleness
  -- (which depends on the reader's clock and is applied at read time).
  operational_status operational_status NOT NULL DEFAULT 'UNKNOWN',
  conditions jsonb NOT NULL DEFAULT '[]',
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT devices_pkey PRIMARY KEY (id),
  CONSTRAINT devices_cordon_reason CHECK (NOT cordoned OR cordon_reason IS NOT NULL)
);
CREATE UNIQUE INDEX devices_site_id_name_key ON devices (site_id, name);
CREATE UNIQUE INDEX devices_ironic_node_uuid_key ON devices (ironic_node_uuid);
CREATE INDEX devices_site_id_id_idx ON devices (site_id, id);
CREATE INDEX devices_device_role_id_idx ON devices (device_role_id);
CREATE INDEX devices_serial_idx ON devices (serial);
CREATE INDEX devices_updated_at_idx ON devices (updated_at);
CREATE INDEX devices_operational_status_idx ON devices (operational_status);
CREATE INDEX devices_tags_idx ON devices USING gin (tags);

CREATE TABLE device_interfaces (
  id uuid NOT NULL DEFAULT uuid_generate_v7(),
  device_id uuid NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  name varchar(64) NOT NULL,
  type varchar(50),
  mac_address varchar(17),
  ib_guid varchar(23),
  mgmt_only boolean NOT NULL DEFAULT false,
  peer_device varchar(200),
  peer_interface varchar(64),
  netbox_id integer,
  CONSTRAINT device_interfaces_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX device_interfaces_device_id_name_key ON device_interfaces (device_id, name);
CREATE INDEX device_interfaces_mac_address_idx ON device_interfaces (mac_address);

-- Every change of a tracked device field, by whom or what.
CREATE TABLE device_history (
  id bigint GENERATED ALWAYS AS IDENTITY,
  device_id uuid NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  field varchar(50) NOT NULL,
  source varchar(50) NOT NULL,
  old_value jsonb,
  new_value jsonb,
  principal varchar(200),
  request_id varchar(128),
  changed_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT device_history_pkey PRIMARY KEY (id)
);
CREATE INDEX device_history_device_id_id_idx ON device_history (device_id, id);

CREATE TABLE slurm_bootstrap_configs (
  id uuid NOT NULL DEFAULT uuid_generate_v7(),
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  device_role_id uuid NOT NULL REFERENCES device_roles (id) ON DELETE RESTRICT,
  image varchar(255) NOT NULL,
  flavor varchar(255) NOT NULL,
  gres varchar(255),
  user_data text,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT slurm_bootstrap_configs_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX slurm_bootstrap_configs_site_id_device_role_id_key ON slurm_bootstrap_configs (site_id, device_role_id);

CREATE TABLE topology_sync_requests (
  id uuid NOT NULL DEFAULT uuid_generate_v7(),
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  region varchar(100) NOT NULL,
  reason text,
  status varchar(20) NOT NULL DEFAULT 'REQUESTED',
  requested_by varchar(200) NOT NULL,
  request_id varchar(128),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT topology_sync_requests_pkey PRIMARY KEY (id)
);
CREATE INDEX topology_sync_requests_site_id_id_idx ON topology_sync_requests (site_id, id);

CREATE TABLE audit_log (
  id uuid NOT NULL DEFAULT uuid_generate_v7(),
  principal varchar(200) NOT NULL,
  action varchar(50) NOT NULL,
  resource_type varchar(50) NOT NULL,
  resource_id varchar(200) NOT NULL,
  diff jsonb NOT NULL,
  request_id varchar(128),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT audit_log_pkey PRIMARY KEY (id)
);
CREATE INDEX audit_log_resource_type_resource_id_idx ON audit_log (resource_type, resource_id);
CREATE INDEX audit_log_principal_idx ON audit_log (principal);
CREATE INDEX audit_log_created_at_idx ON audit_log (created_at);

-- Transactional outbox for the inventory change feed. Writers insert events in the same
-- transaction as the change (seq = insertion order, position NULL). A sequencer assigns
-- `position` to committed events, one sequencer at a time; readers page by position.
-- See apps/hub/src/modules/feed/repo.ts for why this cannot skip an event.
CREATE TABLE inventory_events (
  seq bigint GENERATED ALWAYS AS IDENTITY,
  position bigint,
  type varchar(50) NOT NULL,
  resource_type varchar(50) NOT NULL,
  resource_id varchar(200) NOT NULL,
  site_id uuid,
  data jsonb NOT NULL,
  request_id varchar(128),
  occurred_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT inventory_events_pkey PRIMARY KEY (seq)
);
CREATE UNIQUE INDEX inventory_events_position_key ON inventory_events (position);
-- Lets the sequencer find the unsequenced tail without scanning the whole table.
CREATE INDEX inventory_events_unpositioned_idx ON inventory_events (seq) WHERE position IS NULL;
CREATE INDEX inventory_events_resource_idx ON inventory_events (resource_type, resource_id);

-- Wake long-polling readers when writers commit (NOTIFY is delivered at commit).
CREATE FUNCTION inventory_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('inventory_events', '');
  RETURN NULL;
END $$;
CREATE TRIGGER inventory_events_notify AFTER INSERT ON inventory_events
  FOR EACH STATEMENT EXECUTE FUNCTION inventory_events_notify();

-- Down Migration
DROP TABLE inventory_events;
DROP FUNCTION inventory_events_notify();
DROP TABLE audit_log;
DROP TABLE topology_sync_requests;
DROP TABLE slurm_bootstrap_configs;
DROP TABLE device_history;
DROP TABLE device_interfaces;
DROP TABLE devices;
DROP TABLE device_roles;
DROP TABLE device_types;
DROP TABLE racks;
DROP TABLE locations;
DROP TYPE operational_status;
DROP TYPE netbox_device_status;
DROP TYPE cpu_architecture;
DROP TYPE device_class;
