-- Up Migration

-- The feed keeps events for a retention period; a purge deletes the oldest, always a prefix in
-- position order. `purged_through` is the highest position purged: durable even when every event
-- is gone, so the sequencer never hands out a position again and a reader whose cursor is below
-- it learns that events it has not seen are gone (410) instead of silently skipping them.
CREATE TABLE inventory_feed_state (
  id smallint NOT NULL DEFAULT 1,
  purged_through bigint NOT NULL DEFAULT 0,
  purged_at timestamptz(3),
  CONSTRAINT inventory_feed_state_pkey PRIMARY KEY (id),
  CONSTRAINT inventory_feed_state_single_row CHECK (id = 1)
);
INSERT INTO inventory_feed_state (id) VALUES (1);

-- Down Migration
DROP TABLE inventory_feed_state;
