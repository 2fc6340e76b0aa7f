-- Up Migration

-- Switchboard's dynamic client registrations (RFC 7591) at the authorization servers of upstream
-- MCP servers: one per issuer, shared by every tenant (it is Switchboard's client, not a user's).
-- The client secret and the registration access token are sealed together (`sealed`, keyring
-- purpose client-registration, bound to issuer and client id); everything else is public metadata.
CREATE TABLE mcp_client_registrations (
  issuer                     text PRIMARY KEY,
  client_id                  text NOT NULL,
  token_endpoint_auth_method text NOT NULL,
  redirect_uris              jsonb NOT NULL,
  client_secret_expires_at   bigint,
  registration_client_uri    text,
  sealed                     text,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  updated_at                 timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE mcp_client_registrations;
