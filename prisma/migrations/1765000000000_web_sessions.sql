-- Up Migration

-- The web UI's logins, held by the hub (the backend-for-frontend pattern of "OAuth 2.0 for
-- Browser-Based Applications", draft-ietf-oauth-browser-based-apps §6.1): the browser holds only
-- an HttpOnly cookie whose value is the session id; this table holds the id's SHA-256 (so a
-- database dump gives no session to ride), the person's tokens sealed under the key encryption
-- key, and the scopes the hub granted them at the last token. A row ends at logout, at a
-- refusal of its refresh token, after FM_WEB_SESSION_IDLE_S without a request, and at
-- expires_at (FM_WEB_SESSION_MAX_S after login) whatever happens.
CREATE TABLE web_sessions (
  id_hash char(64) NOT NULL,
  principal varchar(400) NOT NULL,
  scopes text[] NOT NULL,
  tokens_sealed text NOT NULL,
  access_expires_at timestamptz(3) NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  last_seen_at timestamptz(3) NOT NULL DEFAULT now(),
  expires_at timestamptz(3) NOT NULL,
  CONSTRAINT web_sessions_pkey PRIMARY KEY (id_hash)
);

-- The sweep of ended sessions reads by either end.
CREATE INDEX web_sessions_expires_at_idx ON web_sessions (expires_at);
CREATE INDEX web_sessions_last_seen_at_idx ON web_sessions (last_seen_at);

-- Down Migration

DROP TABLE web_sessions;
