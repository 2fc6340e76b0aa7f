-- Up Migration

-- Tool results kept outside Temporal's history (claim check): a tool batch carries only the id.
-- The result's JSON text is sealed with the keyring's `result` key, bound by its AAD to the id,
-- tenant and user; only that user reads it back (read_result), until expires_at (RESULT_RETENTION_DAYS).
CREATE TABLE stored_results (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id      text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  total_bytes  integer NOT NULL,
  key_id       text NOT NULL,
  sealed       bytea NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX stored_results_expires_idx ON stored_results (expires_at);

-- Down Migration
DROP TABLE stored_results;
