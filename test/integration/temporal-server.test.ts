import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';
import { msToTs } from '@temporalio/common/lib/time.js';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ensureSearchAttributes } from '../../bin/support/search-attributes.js';
import { createWorker, installTemporalRuntime } from '../../bin/support/services.js';
import { SA } from '../../core/search-attributes.js';
import { toolBatchWorkflow } from '../../features/execution/workflow.js';
import { createPool } from '../../platform/database/database.js';
import { createLogger } from '../../platform/telemetry/logger.js';
import { createTestUser, type Stack, spawnServerProcess, startStack, testInfra } from '../support/harness.js';
import { freePort } from '../support/ports.js';

// What Switchboard relies on from its Temporal server, checked on whichever server the suite runs:
// the dev server in `npm test`, the real server on PostgreSQL in `npm run test:cluster`, where a
// namespace's search attributes reach the server's caches seconds after they are registered, and
// eager start happens only where the starting process also runs a worker.

// Temporal's runtime as Switchboard installs it (once per process, before any connection).
await installTemporalRuntime(createLogger({ level: 'warn' }));
const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
afterAll(() => connection.close());

/** A namespace of this test's own, with no search attributes yet, as an operator creates one. */
async function newNamespace(): Promise<string> {
  const namespace = `sb-${randomBytes(4).toString('hex')}`;
  await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  return namespace;
}

describe('search attributes', () => {
  it('a Switchboard started on a namespace without them registers them, and its first batch carries them', async () => {
    const namespace = await newNamespace();
    const stack = await startStack({ env: { TEMPORAL_NAMESPACE: namespace } });
    try {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      for (const key of Object.values(SA)) expect(customAttributes?.[key.name], key.name).toBeDefined();

      const user = await createTestUser(stack);
      const { status, body } = await user.call('execute_tools', {
        executions: [{ tool: 'jots_create_note', args: { title: 'first', body: 'text' } }],
      });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.results[0].result).toMatchObject({ title: 'first' });
      const batchId = await batchOf(stack, user.user.id);
      const description = await stack.services.temporal.workflow.getHandle(batchId).describe();
      expect(description.typedSearchAttributes.get(SA.user)).toBe(user.user.id);
      // Visibility (what Temporal UI searches) has the run too, once it caught up: a moment later on a real server.
      const listed = async () =>
        (
          await connection.workflowService.listWorkflowExecutions({ namespace, query: `SwitchboardUser = '${user.user.id}'` })
        ).executions?.map((e) => e.execution?.workflowId);
      await expect.poll(listed, { timeout: 10_000 }).toEqual([batchId]);
    } finally {
      await stack.close();
    }
  });

  it('processes registering them at once on a new namespace each return only when a start carrying them is accepted, and register each once', async () => {
    const namespace = await newNamespace();
    const pool = createPool({ url: inject('testDatabaseUrl') });
    const client = new Client({ connection, namespace });
    try {
      await Promise.all(
        Array.from({ length: 4 }, async (_, i) => {
          await ensureSearchAttributes(connection, namespace, { pool });
          // At once, as a Switchboard's first batch would: on a real server, a start naming an attribute
          // registered a moment ago is refused until the frontend's namespace cache has it.
          const started = await client.workflow.start('neverRuns', {
            taskQueue: `nobody-polls-${namespace}`,
            workflowId: `probe-${i}`,
            typedSearchAttributes: [
              { key: SA.tenant, value: 'ten_probe' },
              { key: SA.user, value: 'usr_probe' },
              { key: SA.integration, value: 'github' },
              { key: SA.tool, value: ['github__create_issue'] },
              { key: SA.outcome, value: 'PENDING' },
            ],
          });
          await started.terminate('probe');
        }),
      );
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      const ours = Object.fromEntries(Object.entries(customAttributes ?? {}).filter(([name]) => name.startsWith('Switchboard')));
      expect(ours).toEqual(Object.fromEntries(Object.values(SA).map((key) => [key.name, encodeSearchAttributeIndexedValueType(key.type)])));
      // Registered again, nothing changes.
      await ensureSearchAttributes(connection, namespace, { pool });
      expect((await connection.operatorService.listSearchAttributes({ namespace })).customAttributes).toEqual(customAttributes);
    } finally {
      await pool.end();
    }
  });

  it('a namespace that does not exist stops the start with an error naming it', async () => {
    await expect(ensureSearchAttributes(connection, 'no-such-namespace-here')).rejects.toThrow(
      /Temporal namespace no-such-namespace-here does not exist: create it first/,
    );
  });
});

describe('eager workflow start', () => {
  it('a batch started by a process whose worker shares its connection starts eagerly; one from a server process without a worker goes through matching', async () => {
    const stack = await startStack({ worker: false });
    // This process's worker, on the connection its client uses (what bin/worker.ts and `npm start` set up).
    const worker = await createWorker(stack.services, { workflowBundle: { codePath: testInfra().workflowBundlePath } });
    const running = worker.run();
    const port = await freePort();
    const server = await spawnServerProcess(stack, port);
    try {
      const user = await createTestUser(stack);
      const eager = await stack.services.temporal.workflow.start(toolBatchWorkflow, {
        workflowId: `eager-${randomUUID()}`,
        taskQueue: stack.env.TEMPORAL_TASK_QUEUE,
        requestEagerStart: stack.services.eagerStart,
        args: [{ tenantId: user.user.tenantId, userId: user.user.id, calls: [], timeoutMs: 1_000, maxResultBytes: 1_024 }],
      });
      expect(await eager.result()).toEqual([]);
      expect(await eagerlyAccepted(stack.services.temporal, eager.workflowId)).toBe(true);

      const res = await fetch(`http://127.0.0.1:${port}/v1/tools/execute_tools`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ executions: [{ tool: 'jots_create_note', args: { title: 'through matching', body: 'text' } }] }),
      });
      const answer = await res.json();
      expect(res.status, JSON.stringify(answer)).toBe(200);
      expect(answer.results[0].result, JSON.stringify(answer)).toMatchObject({ title: 'through matching' });
      expect(await eagerlyAccepted(stack.services.temporal, await batchOf(stack, user.user.id))).toBe(false);
    } finally {
      server.kill('SIGTERM');
      worker.shutdown();
      await running;
      await stack.close();
    }
  });
});

/** The workflow id of the one batch `userId` ran, from its audit row's call key (`tool-batch-<id>/<run>#<index>`). */
async function batchOf(stack: Stack, userId: string): Promise<string> {
  const { rows } = await stack.services.pool.query(
    `SELECT DISTINCT split_part(split_part(call_key, '#', 1), '/', 1) AS id FROM audit_log WHERE actor_user_id = $1`,
    [userId],
  );
  expect(rows).toHaveLength(1);
  return rows[0].id;
}

async function eagerlyAccepted(client: import('@temporalio/client').Client, workflowId: string): Promise<boolean> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return history.events?.[0]?.workflowExecutionStartedEventAttributes?.eagerExecutionAccepted === true;
}
