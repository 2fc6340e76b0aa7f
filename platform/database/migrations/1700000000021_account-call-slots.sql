-- Up Migration

-- At most CONNECTIONS_ACCOUNT_MAX_CONCURRENCY calls in flight per account, across every worker
-- process. A call takes a ticket (its place in the account's queue); the first N live tickets hold
-- the slots. Every ticket is a lease its worker keeps renewing: a worker that dies (even SIGKILL)
-- stops renewing, and its tickets lapse within a lease, so no slot is ever held forever.
CREATE TABLE account_call_slots (
  ticket       bigserial PRIMARY KEY,
  tenant_id    text NOT NULL,
  account_id   text NOT NULL,
  granted      boolean NOT NULL DEFAULT false,
  lease_until  timestamptz NOT NULL
);
CREATE INDEX account_call_slots_account_idx ON account_call_slots (tenant_id, account_id, ticket);
CREATE INDEX account_call_slots_lease_idx ON account_call_slots (lease_until);

-- Down Migration
DROP TABLE account_call_slots;
