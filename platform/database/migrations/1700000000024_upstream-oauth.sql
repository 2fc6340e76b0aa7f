-- Up Migration

-- OAuth to upstream MCP servers is discovered, not configured: what a consent was asked with
-- (issuer, RFC 8707 resource, client id, scopes) is kept with the attempt until its callback, so
-- the code is exchanged at the same authorization server for the same resource. Public values only.
ALTER TABLE connection_attempts ADD COLUMN oauth_context jsonb;

-- Scopes an upstream asked for with a 403 insufficient_scope (step-up): the next connect of this
-- account's owner asks for them too; a reconnect that stores a new credential clears them.
ALTER TABLE accounts ADD COLUMN step_up_scopes text[] NOT NULL DEFAULT '{}';

-- Down Migration
ALTER TABLE accounts DROP COLUMN step_up_scopes;
ALTER TABLE connection_attempts DROP COLUMN oauth_context;
