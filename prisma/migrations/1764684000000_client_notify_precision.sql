-- Up Migration

-- Notify hub replicas only when what authentication checks changes. Before, every token
-- issued (last_token_at) and every heartbeat emptied the client caches of every replica.
DROP TRIGGER oauth_clients_notify ON oauth_clients;
CREATE TRIGGER oauth_clients_notify_delete AFTER DELETE ON oauth_clients
  FOR EACH ROW EXECUTE FUNCTION oauth_clients_notify();
CREATE TRIGGER oauth_clients_notify_update AFTER UPDATE ON oauth_clients
  FOR EACH ROW WHEN (
    OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.scopes IS DISTINCT FROM NEW.scopes OR
    OLD.kind IS DISTINCT FROM NEW.kind OR OLD.agent_kind IS DISTINCT FROM NEW.agent_kind OR
    OLD.satellite_id IS DISTINCT FROM NEW.satellite_id
  ) EXECUTE FUNCTION oauth_clients_notify();

-- A satellite's sites are part of its agents' authorization: '*' drops every cached client.
CREATE FUNCTION satellite_sites_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('oauth_clients', '*');
  RETURN NULL;
END $$;
CREATE TRIGGER satellite_sites_notify AFTER INSERT OR UPDATE OR DELETE ON satellite_sites
  FOR EACH STATEMENT EXECUTE FUNCTION satellite_sites_notify();

-- Down Migration
DROP TRIGGER satellite_sites_notify ON satellite_sites;
DROP FUNCTION satellite_sites_notify();
DROP TRIGGER oauth_clients_notify_update ON oauth_clients;
DROP TRIGGER oauth_clients_notify_delete ON oauth_clients;
CREATE TRIGGER oauth_clients_notify AFTER UPDATE OR DELETE ON oauth_clients
  FOR EACH ROW EXECUTE FUNCTION oauth_clients_notify();
