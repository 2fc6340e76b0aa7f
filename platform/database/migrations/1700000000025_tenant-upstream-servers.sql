-- Up Migration

-- A tenant's own upstream MCP servers, added by its administrators (admin CLI `upstream`, the
-- portal's admin page). `entry` is the server's entry (providers/mcp-upstream/entry.ts) without its
-- secrets; a pre-registered OAuth client secret (`auth.clientSecret`) is sealed apart in
-- `client_secret_sealed` (keyring purpose at-rest, bound to tenant and name).
CREATE TABLE tenant_upstream_servers (
  tenant_id             text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name                  text NOT NULL,
  entry                 jsonb NOT NULL,
  client_secret_sealed  text,
  created_by            text,
  created_at            timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, name)
);

-- Down Migration
DROP TABLE tenant_upstream_servers;
