-- The connector's durable state: where it is in the hub feed, and what it has not delivered yet.

-- One row per connector instance: the feed cursor, written in the same transaction as the
-- records of the page it advances past, so a crash never loses a page nor reads it twice.
CREATE TABLE connector_state (
  connector        text PRIMARY KEY,
  position         bigint NOT NULL,
  -- Highest feed position the hub had assigned at the last read: head - position is the lag.
  head             bigint NOT NULL,
  -- Last time the cursor reached the head: the lag in seconds is measured from it.
  caught_up_at     timestamptz NOT NULL,
  snapshot_position bigint,
  snapshot_at      timestamptz,
  last_error_class text,
  last_error_at    timestamptz,
  updated_at       timestamptz NOT NULL DEFAULT now()
);

-- Undelivered records, delivered in `seq` order (so in order per resource) and deleted once acknowledged.
CREATE TABLE connector_queue (
  seq          bigserial PRIMARY KEY,
  connector    text NOT NULL,
  record_id    text NOT NULL,
  resource_key text NOT NULL,
  position     bigint NOT NULL,
  -- When the hub committed the change: the freshness the customer sees is measured from it.
  changed_at   timestamptz NOT NULL,
  enqueued_at  timestamptz NOT NULL DEFAULT now(),
  attempts     integer NOT NULL DEFAULT 0,
  record       jsonb NOT NULL,
  UNIQUE (connector, record_id)
);
CREATE INDEX connector_queue_next ON connector_queue (connector, seq);

-- Records the sink refused for good, with its reason; they block nothing.
CREATE TABLE connector_dead_letters (
  id           bigserial PRIMARY KEY,
  connector    text NOT NULL,
  record_id    text NOT NULL,
  resource_key text NOT NULL,
  position     bigint NOT NULL,
  record       jsonb NOT NULL,
  reason       text NOT NULL,
  dead_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (connector, record_id)
);
