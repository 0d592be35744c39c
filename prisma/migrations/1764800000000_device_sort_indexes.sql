-- Up Migration

-- The device list sorts by name, serial, operational status or last update, ties in id order,
-- and pages by (value, id). Each order has an index on (field, id), fleet-wide and within a
-- site, so a sorted page of 100 reads 100 index entries instead of sorting every matching row.
-- The (field, id) indexes replace the single-column ones, which they serve as well. Within a
-- site, names are unique: devices_site_id_name_key already reads a site's devices in name order.
DROP INDEX devices_serial_idx;
DROP INDEX devices_updated_at_idx;
DROP INDEX devices_operational_status_idx;
CREATE INDEX devices_name_id_idx ON devices (name, id);
CREATE INDEX devices_serial_id_idx ON devices (serial, id);
CREATE INDEX devices_operational_status_id_idx ON devices (operational_status, id);
CREATE INDEX devices_updated_at_id_idx ON devices (updated_at, id);
CREATE INDEX devices_site_id_serial_id_idx ON devices (site_id, serial, id);
CREATE INDEX devices_site_id_operational_status_id_idx ON devices (site_id, operational_status, id);
CREATE INDEX devices_site_id_updated_at_id_idx ON devices (site_id, updated_at, id);

-- Down Migration
DROP INDEX devices_site_id_updated_at_id_idx;
DROP INDEX devices_site_id_operational_status_id_idx;
DROP INDEX devices_site_id_serial_id_idx;
DROP INDEX devices_updated_at_id_idx;
DROP INDEX devices_operational_status_id_idx;
DROP INDEX devices_serial_id_idx;
DROP INDEX devices_name_id_idx;
CREATE INDEX devices_operational_status_idx ON devices (operational_status);
CREATE INDEX devices_updated_at_idx ON devices (updated_at);
CREATE INDEX devices_serial_idx ON devices (serial);
