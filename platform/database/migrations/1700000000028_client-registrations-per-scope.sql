-- Up Migration

-- Dynamic client registrations are kept per scope: the operator's upstream servers share one
-- registration per authorization server ('operator'); each tenant's own servers get their own
-- ('tenant:<id>'), so a tenant administrator's server never uses the client — and the consent
-- users already gave it — that the deployment registered for the operator's servers.
ALTER TABLE mcp_client_registrations ADD COLUMN scope text NOT NULL DEFAULT 'operator';
ALTER TABLE mcp_client_registrations DROP CONSTRAINT mcp_client_registrations_pkey;
ALTER TABLE mcp_client_registrations ADD PRIMARY KEY (scope, issuer);

-- Down Migration
DELETE FROM mcp_client_registrations WHERE scope <> 'operator';
ALTER TABLE mcp_client_registrations DROP CONSTRAINT mcp_client_registrations_pkey;
ALTER TABLE mcp_client_registrations ADD PRIMARY KEY (issuer);
ALTER TABLE mcp_client_registrations DROP COLUMN scope;
