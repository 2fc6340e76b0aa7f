-- Up Migration

-- What an idempotent tool batch was asked (a hash of tenant, user and the calls): the same
-- requestId with other calls is refused instead of answering the first batch's results. Kept at
-- least as long as Temporal keeps the batch (see RETENTION_DAYS).
CREATE TABLE tool_batch_requests (
  batch_id      text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id       text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  request_hash  bytea NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tool_batch_requests_created_idx ON tool_batch_requests (created_at);

-- A token refresh is claimed by a short lease on the account (compare-and-set on
-- credential_version), so no database connection is held while the token endpoint answers.
ALTER TABLE accounts ADD COLUMN refresh_lease_id text, ADD COLUMN refresh_lease_until timestamptz;

-- Calls per minute, per API key and per tenant (fixed one-minute windows), shared by every
-- server process.
CREATE TABLE call_budgets (
  bucket        text NOT NULL,
  window_start  timestamptz NOT NULL,
  calls         integer NOT NULL,
  PRIMARY KEY (bucket, window_start)
);

-- Retention: the prune job deletes by age.
CREATE INDEX audit_log_created_idx ON audit_log (created_at);
CREATE INDEX connection_attempts_created_idx ON connection_attempts (created_at);
CREATE INDEX login_tokens_expires_idx ON login_tokens (expires_at);

-- Down Migration
DROP INDEX login_tokens_expires_idx;
DROP INDEX connection_attempts_created_idx;
DROP INDEX audit_log_created_idx;
DROP TABLE call_budgets;
ALTER TABLE accounts DROP COLUMN refresh_lease_until, DROP COLUMN refresh_lease_id;
DROP TABLE tool_batch_requests;
