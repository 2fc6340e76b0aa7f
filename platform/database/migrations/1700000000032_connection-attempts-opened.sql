-- Up Migration

-- When the attempt's user first opened its connect link in a signed-in browser. A user holds a
-- bounded number of open attempts (CONNECT_PENDING_MAX_PER_USER); a new one past it expires the
-- oldest nobody opened, never one a person is completing.
ALTER TABLE connection_attempts ADD COLUMN opened_at timestamptz;
-- The bound reads a user's open attempts on every connect: only PENDING rows, however many
-- finished ones retention still keeps.
CREATE INDEX connection_attempts_pending_idx ON connection_attempts (tenant_id, user_id, created_at) WHERE status = 'PENDING';

-- Down Migration
DROP INDEX connection_attempts_pending_idx;
ALTER TABLE connection_attempts DROP COLUMN opened_at;
