import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:cluster`: the end-to-end tests again, against the Temporal server itself on
 * PostgreSQL (not the dev server), each Switchboard as two HTTP server processes behind a load
 * balancer and two worker processes (test/support/cluster-setup.ts).
 */
export const CLUSTER_TEST_FILES = [
  // Connect in chromium, waits, a wait across a worker SIGKILL, no secret in histories.
  'test/integration/connect.test.ts',
  // Search, execute, policy, results, audit, local tool calls, refresh.
  'test/integration/execute.test.ts',
  // 100 concurrent calls on one expiring rotating token across two workers.
  'test/integration/refresh-storm.test.ts',
  // Worker and server SIGKILLed with work in flight.
  'test/integration/faults.test.ts',
  // Approvals: parked waits (an agent workflow's durable wait), chromium, SIGKILL, replay.
  'test/integration/approvals.test.ts',
  // What differs on a real server: search attributes registered at start, visibility that lags.
  'test/integration/temporal-server.test.ts',
];

export default defineConfig({
  test: {
    ...base.test,
    include: CLUSTER_TEST_FILES,
    globalSetup: ['test/support/cluster-setup.ts'],
  },
});
