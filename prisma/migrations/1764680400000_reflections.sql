-- Up Migration

-- The last accepted push per (site, source): an older push is refused, so a slow retry can
-- never overwrite newer state.
CREATE TABLE reflection_state (
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  source varchar(30) NOT NULL,
  observed_at timestamptz(3) NOT NULL,
  applied_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT reflection_state_pkey PRIMARY KEY (site_id, source)
);

-- Down Migration
DROP TABLE reflection_state;
