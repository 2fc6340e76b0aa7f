-- Up Migration

-- The most recent tool listing of each upstream MCP server, as the server sent it (names,
-- descriptions, input schemas, annotations: public metadata, never a credential). Search shows it
-- to users who have not connected yet, in every process and after a restart; each process still
-- lists again with the caller's own credential before a call.
CREATE TABLE upstream_tool_catalogs (
  catalog_key text PRIMARY KEY,
  tools       jsonb NOT NULL,
  listed_at   timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE upstream_tool_catalogs;
