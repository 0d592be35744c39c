-- Up Migration

-- The NetBox settings the hub holds for every site's netbox agent, in one row: which NetBox
-- clusters each site ingests, and the device-role -> device-class mapping. `configured` is the
-- value the hub's configuration last supplied, so a changed configuration is applied once at
-- start, and an admin's change through the API stands until the configuration changes again.
CREATE TABLE netbox_settings (
  id smallint NOT NULL DEFAULT 1,
  device_filters jsonb NOT NULL DEFAULT '[]',
  device_role_class_mapping jsonb NOT NULL DEFAULT '{}',
  configured jsonb,
  version integer NOT NULL DEFAULT 1,
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT netbox_settings_pkey PRIMARY KEY (id),
  CONSTRAINT netbox_settings_one_row CHECK (id = 1)
);

-- Down Migration

DROP TABLE netbox_settings;
