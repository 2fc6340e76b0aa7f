-- Up Migration

-- Tool calls waiting for a person's approval (approvals/README.md). The call's arguments may hold
-- secrets, so they are sealed (keyring, AAD bound to the row); the approval's workflow carries the
-- id alone. `summary` is what a person is shown: secret arguments redacted, long values cut.
-- The outcome of the approved call (a small JSON outcome; a large result is a stored_results
-- reference inside it) is sealed too.
CREATE TABLE approvals (
  id                 text PRIMARY KEY,
  -- The gated call's key (its batch or agent workflow and index): a re-run of the same call finds this approval.
  call_key           text NOT NULL UNIQUE,
  tenant_id          text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  requester_user_id  text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  tool               text NOT NULL,
  account_id         text,
  account_label      text,
  -- 'tenant': the call runs on an organisation account, whose calls orgApproverRoles decide.
  account_scope      text NOT NULL DEFAULT 'user',
  sealed_call        text NOT NULL,
  summary            jsonb NOT NULL,
  -- The arguments in full as the approval page shows them: every value, secret ones replaced.
  shown_arguments    jsonb NOT NULL DEFAULT '{}',
  status             text NOT NULL DEFAULT 'PENDING',
  decided_by         text,
  decided_at         timestamptz,
  reason             text,
  sealed_outcome     text,
  outcome_code       text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  expires_at         timestamptz NOT NULL,
  finished_at        timestamptz
);
CREATE INDEX approvals_pending_idx ON approvals (tenant_id, status, created_at DESC);
CREATE INDEX approvals_requester_idx ON approvals (tenant_id, requester_user_id, created_at DESC);

-- Down Migration
DROP TABLE approvals;
