-- Up Migration

CREATE TABLE tenants (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  -- enabledProviders, allowedTools, includeTools, excludeTools, connectionRoles
  settings    jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  email       text NOT NULL,
  roles       text[] NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, email)
);
CREATE UNIQUE INDEX users_email_idx ON users (lower(email));

-- The key itself is shown once; only its SHA-256 is kept.
CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id       text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  key_hash      bytea NOT NULL UNIQUE,
  label         text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz
);

CREATE TABLE accounts (
  id                 text PRIMARY KEY,
  tenant_id          text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  -- NULL for an organisation (tenant-scoped) account.
  owner_user_id      text REFERENCES users(id) ON DELETE CASCADE,
  scope              text NOT NULL CHECK (scope IN ('user', 'tenant')),
  integration        text NOT NULL,
  label              text NOT NULL,
  is_default         boolean NOT NULL DEFAULT false,
  sharing_roles      text[] NOT NULL DEFAULT '{}',
  status             text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'needs_reauth')),
  credential_sealed  text,
  credential_key_id  text,
  granted_scopes     text[] NOT NULL DEFAULT '{}',
  access_expires_at  timestamptz,
  -- Bumped on every credential write; a refresh only lands on the version it read.
  credential_version integer NOT NULL DEFAULT 0,
  external_id        text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  CHECK ((scope = 'user') = (owner_user_id IS NOT NULL))
);
CREATE INDEX accounts_owner_idx ON accounts (tenant_id, owner_user_id, integration);
CREATE UNIQUE INDEX accounts_one_default_per_owner
  ON accounts (tenant_id, coalesce(owner_user_id, ''), integration) WHERE is_default;

CREATE TABLE connection_attempts (
  id             text PRIMARY KEY,
  tenant_id      text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id        text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  integration    text NOT NULL,
  auth_mode      text NOT NULL,
  status         text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'CONNECTED', 'EXPIRED', 'FAILED')),
  -- OAuth state is kept as a hash; the PKCE verifier sealed.
  state_hash     bytea UNIQUE,
  pkce_sealed    text,
  account_id     text REFERENCES accounts(id) ON DELETE SET NULL,
  error          text,
  expires_at     timestamptz NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  completed_at   timestamptz
);
CREATE INDEX connection_attempts_user_idx ON connection_attempts (tenant_id, user_id, created_at DESC);

CREATE TABLE audit_log (
  id             bigserial PRIMARY KEY,
  tenant_id      text NOT NULL,
  kind           text NOT NULL,
  actor_user_id  text,
  owner_user_id  text,
  account_id     text,
  tool           text,
  outcome        text,
  error_code     text,
  duration_ms    integer,
  arg_names      text[],
  detail         jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_tenant_idx ON audit_log (tenant_id, created_at DESC);

-- One-time sign-in links for the portal (admin login-link), kept as hashes.
CREATE TABLE login_tokens (
  token_hash  bytea PRIMARY KEY,
  user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);

-- Down Migration
DROP TABLE login_tokens;
DROP TABLE audit_log;
DROP TABLE connection_attempts;
DROP TABLE accounts;
DROP TABLE api_keys;
DROP TABLE users;
DROP TABLE tenants;
