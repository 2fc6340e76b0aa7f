-- Up Migration

-- MCP sessions of 2025-revision clients on /mcp and /mcp/agent: minted at `initialize`, they
-- remember what the client declared it can do (its capabilities: e.g. URL elicitation), so any
-- process answers any later request of the session. The id is a bearer value: only its hash is kept.
CREATE TABLE mcp_sessions (
  id_hash             bytea PRIMARY KEY,
  tenant_id           text NOT NULL,
  user_id             text NOT NULL,
  protocol_version    text NOT NULL,
  client_capabilities jsonb NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  expires_at          timestamptz NOT NULL
);
CREATE INDEX mcp_sessions_user_idx ON mcp_sessions (tenant_id, user_id, created_at);
CREATE INDEX mcp_sessions_expiry_idx ON mcp_sessions (expires_at);

-- Down Migration
DROP TABLE mcp_sessions;
