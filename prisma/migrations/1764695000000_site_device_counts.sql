-- Up Migration

-- The number of devices at each site, kept in the transaction that inserts, deletes or moves
-- them, so the device list's exact count for a whole site (or the whole fleet) is one row read
-- instead of a scan of the site's rows. Statement-level triggers with transition tables: a bulk
-- insert of 50,000 devices updates each site's row once. Sites are locked in id order, so two
-- statements touching the same sites cannot deadlock on them.
CREATE TABLE site_device_counts (
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  devices bigint NOT NULL,
  CONSTRAINT site_device_counts_pkey PRIMARY KEY (site_id)
);

INSERT INTO site_device_counts (site_id, devices)
SELECT s.id, (SELECT count(*) FROM devices d WHERE d.site_id = s.id) FROM sites s;

CREATE FUNCTION site_device_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO site_device_counts AS c (site_id, devices)
  SELECT site_id, count(*) FROM added GROUP BY site_id ORDER BY site_id
  ON CONFLICT (site_id) DO UPDATE SET devices = c.devices + EXCLUDED.devices;
  RETURN NULL;
END $$;

CREATE FUNCTION site_device_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE site_device_counts AS c SET devices = c.devices - r.n
    FROM (SELECT site_id, count(*) AS n FROM removed GROUP BY site_id ORDER BY site_id) r
   WHERE c.site_id = r.site_id;
  RETURN NULL;
END $$;

-- A device moved to another site (rare; fires only when site_id is set and differs).
CREATE FUNCTION site_device_counts_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE site_device_counts SET devices = devices - 1 WHERE site_id = OLD.site_id;
  INSERT INTO site_device_counts AS c (site_id, devices) VALUES (NEW.site_id, 1)
  ON CONFLICT (site_id) DO UPDATE SET devices = c.devices + 1;
  RETURN NULL;
END $$;

CREATE TRIGGER devices_count_insert AFTER INSERT ON devices
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION site_device_counts_add();
CREATE TRIGGER devices_count_delete AFTER DELETE ON devices
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION site_device_counts_remove();
CREATE TRIGGER devices_count_move AFTER UPDATE OF site_id ON devices
  FOR EACH ROW WHEN (OLD.site_id IS DISTINCT FROM NEW.site_id) EXECUTE FUNCTION site_device_counts_move();
