-- Up Migration

-- Time-ordered UUIDs (RFC 9562 version 7): new rows sort after existing ones, so keyset
-- pagination by id reaches rows inserted while a client pages, and B-tree inserts stay local.
-- PostgreSQL 18 has uuidv7(); this function gives the same layout on 15-17.
CREATE OR REPLACE FUNCTION uuid_generate_v7() RETURNS uuid
LANGUAGE plpgsql VOLATILE PARALLEL SAFE AS $$
DECLARE
  ts_ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
  bytes bytea := uuid_send(gen_random_uuid());
BEGIN
  bytes := overlay(bytes PLACING substring(int8send(ts_ms) FROM 3) FROM 1 FOR 6);
  bytes := set_byte(bytes, 6, (get_byte(bytes, 6) & 15) | 112);
  bytes := set_byte(bytes, 8, (get_byte(bytes, 8) & 63) | 128);
  RETURN encode(bytes, 'hex')::uuid;
END $$;

CREATE TABLE sites (
  id uuid NOT NULL DEFAULT uuid_generate_v7(),
  slug varchar(63) NOT NULL,
  name varchar(200) NOT NULL,
  region varchar(100),
  netbox_site_id integer,
  netbox_cluster_id integer,
  slurm_enabled boolean NOT NULL DEFAULT false,
  configure_dhcp boolean NOT NULL DEFAULT false,
  platform_class_activity_ready boolean NOT NULL DEFAULT false,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT sites_pkey PRIMARY KEY (id),
  CONSTRAINT sites_slug_format CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$')
);
CREATE UNIQUE INDEX sites_slug_key ON sites (slug);

CREATE TABLE idempotency_keys (
  id uuid NOT NULL DEFAULT uuid_generate_v7(),
  principal varchar(200) NOT NULL,
  key varchar(200) NOT NULL,
  method varchar(10) NOT NULL,
  path varchar(2000) NOT NULL,
  request_hash char(64) NOT NULL,
  response_status integer,
  response_body jsonb,
  response_headers jsonb,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  completed_at timestamptz(3),
  CONSTRAINT idempotency_keys_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX idempotency_keys_principal_key_key ON idempotency_keys (principal, key);
CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys (created_at);

-- Down Migration
DROP TABLE idempotency_keys;
DROP TABLE sites;
DROP FUNCTION uuid_generate_v7();
