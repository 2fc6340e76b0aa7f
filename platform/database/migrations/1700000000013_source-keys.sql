-- Up Migration

-- A source key: an API key another Switchboard instance uses to act, here, for each of its own
-- users. Every request with it must carry an assertion signed by the other instance's private key;
-- only the public key is stored. Its API key row's user is the template of the delegates: their
-- tenant and first roles.
CREATE TABLE source_keys (
  api_key_id  text PRIMARY KEY REFERENCES api_keys(id) ON DELETE CASCADE,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  source      text NOT NULL,
  public_key  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- One user here per (source, the other instance's tenant and user): created on first use, with its
-- own notes and accounts. Keyed by the source's name, not the key, so a rotated key keeps them.
CREATE TABLE source_delegates (
  tenant_id        text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  source           text NOT NULL,
  origin_tenant_id text NOT NULL,
  origin_user_id   text NOT NULL,
  user_id          text NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, source, origin_tenant_id, origin_user_id)
);

-- Down Migration
DROP TABLE source_delegates;
DROP TABLE source_keys;
