-- Up Migration

-- Whose account a connection attempt produces: the user's own, or (started by an administrator
-- in the portal) the organisation's.
ALTER TABLE connection_attempts ADD COLUMN account_scope text NOT NULL DEFAULT 'user' CHECK (account_scope IN ('user', 'tenant'));

-- Down Migration
ALTER TABLE connection_attempts DROP COLUMN account_scope;
