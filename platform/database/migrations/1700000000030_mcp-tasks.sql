-- Up Migration

-- MCP Tasks (server/tasks/): a tool call or a wait that a client runs as a task. The work itself is
-- durable elsewhere (a tool-batch workflow, a connection attempt, an approval); this row binds the
-- task to its caller and says which work it is. Tasks are looked up by the id's hash; the id itself
-- is kept sealed only so tasks/list can name the owner's tasks. The call's arguments (which may hold
-- secrets) and its answer are sealed with the keyring too.
CREATE TABLE mcp_tasks (
  id_hash          bytea PRIMARY KEY,
  tenant_id        text NOT NULL,
  user_id          text NOT NULL,
  tool             text NOT NULL,
  sealed_id        text NOT NULL,
  sealed_arguments text NOT NULL,
  -- The tool batch behind a call (its workflow id), once started.
  workflow_id      text,
  status           text NOT NULL DEFAULT 'working'
                   CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
  status_message   text,
  -- The answer, once known: sealed, with whether it is an error result.
  sealed_outcome   text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL,
  poll_interval_ms integer NOT NULL
);
CREATE INDEX mcp_tasks_user_idx ON mcp_tasks (tenant_id, user_id, created_at DESC);
CREATE INDEX mcp_tasks_expiry_idx ON mcp_tasks (expires_at);

-- Down Migration
DROP TABLE mcp_tasks;
