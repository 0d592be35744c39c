-- Up Migration

-- Machine clients (connectors, automation) say what they are for; agent and bootstrap clients
-- leave it empty.
ALTER TABLE oauth_clients ADD COLUMN description varchar(500);

-- Down Migration
ALTER TABLE oauth_clients DROP COLUMN description;
