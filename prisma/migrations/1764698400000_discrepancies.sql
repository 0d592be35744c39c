-- Up Migration

-- Open disagreements between the sources about a site, one row per (kind, subject), kept while
-- the disagreement lasts so the report can say since when. Rewritten on every accepted
-- reflection and every cordon change (modules/discrepancies/service.ts); a row whose
-- disagreement has cleared is deleted. `subject` is the device id, or `<source>:<item key>`
-- for a pushed item that matches no device.
CREATE TABLE discrepancies (
  id uuid NOT NULL DEFAULT uuid_generate_v7(),
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  kind varchar(40) NOT NULL,
  subject varchar(240) NOT NULL,
  device_id uuid REFERENCES devices (id) ON DELETE CASCADE,
  name varchar(200) NOT NULL,
  observed jsonb NOT NULL,
  first_seen_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT discrepancies_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX discrepancies_site_id_kind_subject_key ON discrepancies (site_id, kind, subject);
CREATE INDEX discrepancies_site_id_id_idx ON discrepancies (site_id, id);
CREATE INDEX discrepancies_device_id_idx ON discrepancies (device_id);

-- Down Migration
DROP TABLE discrepancies;
