-- Up Migration

-- One audit row per tool call, whatever happens to the worker: the call's key makes a second
-- write of the same call a no-op.
ALTER TABLE audit_log ADD COLUMN call_key text;
CREATE UNIQUE INDEX audit_log_call_key_idx ON audit_log (call_key) WHERE call_key IS NOT NULL;
CREATE INDEX audit_log_tool_idx ON audit_log (tenant_id, tool, created_at DESC);

-- Down Migration
DROP INDEX audit_log_tool_idx;
DROP INDEX audit_log_call_key_idx;
ALTER TABLE audit_log DROP COLUMN call_key;
