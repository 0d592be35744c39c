-- Up Migration

CREATE TABLE satellites (
  id uuid NOT NULL DEFAULT uuid_generate_v7(),
  name varchar(63) NOT NULL,
  environment varchar(20) NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT satellites_pkey PRIMARY KEY (id),
  CONSTRAINT satellites_name_format CHECK (name ~ '^[a-z0-9][a-z0-9-]{0,62}$')
);
CREATE UNIQUE INDEX satellites_name_key ON satellites (name);

CREATE TABLE satellite_sites (
  satellite_id uuid NOT NULL REFERENCES satellites (id) ON DELETE CASCADE,
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE RESTRICT,
  CONSTRAINT satellite_sites_pkey PRIMARY KEY (satellite_id, site_id)
);

-- OAuth2 clients. Secrets are stored only as scrypt hashes; during a rotation the previous
-- hash stays valid until previous_secret_expires_at.
CREATE TABLE oauth_clients (
  client_id varchar(200) NOT NULL,
  kind varchar(20) NOT NULL,
  satellite_id uuid REFERENCES satellites (id) ON DELETE CASCADE,
  agent_kind varchar(30),
  scopes text[] NOT NULL,
  secret_hash text NOT NULL,
  previous_secret_hash text,
  previous_secret_expires_at timestamptz(3),
  revoked_at timestamptz(3),
  last_token_at timestamptz(3),
  last_heartbeat_at timestamptz(3),
  heartbeat jsonb,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT oauth_clients_pkey PRIMARY KEY (client_id)
);
CREATE INDEX oauth_clients_satellite_id_idx ON oauth_clients (satellite_id);

-- Token signing keys. The private key is encrypted (AES-256-GCM) with the hub's key
-- encryption key; a retired key stays published until every token it signed has expired.
CREATE TABLE signing_keys (
  kid varchar(64) NOT NULL,
  alg varchar(10) NOT NULL,
  public_jwk jsonb NOT NULL,
  private_jwk_encrypted text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  retired_at timestamptz(3),
  CONSTRAINT signing_keys_pkey PRIMARY KEY (kid)
);

-- Revocation must reach every hub replica at once: they cache client state and drop it on this.
CREATE FUNCTION oauth_clients_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('oauth_clients', coalesce(NEW.client_id, OLD.client_id));
  RETURN NULL;
END $$;
CREATE TRIGGER oauth_clients_notify AFTER UPDATE OR DELETE ON oauth_clients
  FOR EACH ROW EXECUTE FUNCTION oauth_clients_notify();

-- Down Migration
DROP TABLE signing_keys;
DROP TABLE oauth_clients;
DROP FUNCTION oauth_clients_notify();
DROP TABLE satellite_sites;
DROP TABLE satellites;
