import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ensurePruneSchedule, pruneScheduleId } from '../../bin/support/prune-schedule.js';
import type { Caller } from '../../core/caller.js';
import type { MetaToolError } from '../../core/errors.js';
import { chargeCalls } from '../../features/execution/batch/call-limits.js';
import { createPruneActivities } from '../../features/retention/prune.js';
import { createTestUser, startWorld, type TestUser } from '../support/harness.js';

const { stack } = await startWorld({
  env: {
    // Requests are not what is counted: the old per-request limit stays far above what is sent here.
    RATE_LIMIT_PER_MINUTE: '600',
    RATE_LIMIT_CALLS_PER_MINUTE: '500',
    TENANT_RATE_LIMIT_CALLS_PER_MINUTE: '600',
    RETENTION_DAYS: '7',
  },
});

/** Waits out the end of a minute, so a test's spending all lands in one budget window. */
async function earlyInAMinute() {
  const { rows } = await stack.services.pool.query(`SELECT extract(second FROM now())::float AS s`);
  if (rows[0].s > 45) await sleep((61 - rows[0].s) * 1000);
}

const unknownCalls = (n: number) => Array.from({ length: n }, (_, i) => ({ tool: `no_such_tool_${i}` }));

async function spentBy(bucket: string): Promise<number> {
  const { rows } = await stack.services.pool.query(
    `SELECT coalesce(sum(calls), 0)::int AS n FROM call_budgets WHERE bucket = $1 AND window_start = date_trunc('minute', now())`,
    [bucket],
  );
  return rows[0].n;
}

async function keyIdOf(user: TestUser): Promise<string> {
  const { rows } = await stack.services.pool.query(`SELECT id FROM api_keys WHERE user_id = $1`, [user.user.id]);
  return rows[0].id;
}

describe('call budgets', () => {
  it('finding 12: one 500-call batch spends the per-key budget that 500 single calls would; the next call answers 429 with Retry-After', async () => {
    await earlyInAMinute();
    const agent = await createTestUser(stack);
    const batch = agent.call('execute_tools', { executions: unknownCalls(500) });
    await expect.poll(async () => spentBy(`key:${await keyIdOf(agent)}:${agent.user.id}`), { timeout: 20_000 }).toBe(500);

    const res = await fetch(`${stack.baseUrl}/v1/tools/connections_execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'github__get_authenticated_user', arguments: {} }),
    });
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await res.json()).toEqual({
      error: `Too many tool calls for this API key: 500 per minute. Retry after ${retryAfter} s.`,
      retryAfterSec: retryAfter,
    });
    // The batch itself ran, every entry answered.
    const done = await batch;
    expect(done.status).toBe(200);
    expect(done.body.results).toHaveLength(500);
  }, 120_000);

  it('finding 12 + 17: collecting a batch again with its requestId spends no budget (it runs nothing); new calls still do', async () => {
    await earlyInAMinute();
    const agent = await createTestUser(stack);
    const bucket = `key:${await keyIdOf(agent)}:${agent.user.id}`;
    const request = { executions: unknownCalls(300), requestId: 'collect-again' };
    const first = await agent.call('execute_tools', request);
    expect(first.status).toBe(200);
    expect(await spentBy(bucket)).toBe(300);
    // A client retrying after a dropped connection collects the recorded results for free.
    const again = await agent.call('execute_tools', request);
    expect(again).toEqual(first);
    expect(await spentBy(bucket)).toBe(300);
    // New calls spend the rest of the budget…
    expect((await agent.call('execute_tools', { executions: unknownCalls(200) })).status).toBe(200);
    expect(await spentBy(bucket)).toBe(500);
    // …and the recorded batch can still be collected; the same requestId with other calls is still refused (409), not run.
    expect(await agent.call('execute_tools', request)).toEqual(first);
    expect((await agent.call('execute_tools', { ...request, executions: unknownCalls(1) })).status).toBe(409);
    expect((await agent.call('execute_tools', { executions: unknownCalls(1) })).status).toBe(429);
  }, 120_000);

  it('finding 12: a tenant that spent its budget is limited on all its keys, and another tenant is not limited by it', async () => {
    await earlyInAMinute();
    const first = await createTestUser(stack);
    const colleague = await createTestUser(stack, { tenantId: first.user.tenantId });
    const elsewhere = await createTestUser(stack);

    expect((await first.call('execute_tools', { executions: unknownCalls(450) })).status).toBe(200);
    // 450 + 200 is over the tenant's 600, though the colleague's own key has spent nothing.
    const refused = await colleague.call('execute_tools', { executions: unknownCalls(200) });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(/^Too many tool calls for your organisation: 600 per minute\. Retry after \d+ s\.$/);
    // Another tenant, the same size of batch, at the same moment: served.
    const served = await elsewhere.call('execute_tools', { executions: unknownCalls(200) });
    expect(served.status).toBe(200);
    expect(served.body.results).toHaveLength(200);
    // What was refused was not spent: the tenant's remaining 150 still run.
    expect(await spentBy(`tenant:${first.user.tenantId}`)).toBe(450);
    expect((await colleague.call('execute_tools', { executions: unknownCalls(150) })).status).toBe(200);
  }, 120_000);

  it("finding 3 + 12: the delegates of one source key each have their own per-key budget; one cannot spend another's", async () => {
    await earlyInAMinute();
    // Two local users of a remote source act through one source key (features/sources/delegation.ts).
    const template = await createTestUser(stack);
    const keyId = await keyIdOf(template);
    const delegate = (userId: string): Caller => ({ tenantId: `ten_${keyId}`, userId, roles: ['member'], keyId, sourceKey: true });
    await chargeCalls(stack.services, delegate('usr_delegate_a'), 500);
    const refusedA = await chargeCalls(stack.services, delegate('usr_delegate_a'), 1).catch((err: MetaToolError) => err);
    expect(refusedA).toMatchObject({ status: 429 });
    // The other delegate of the same key still has its whole budget.
    await expect(chargeCalls(stack.services, delegate('usr_delegate_b'), 100)).resolves.toBeUndefined();
    expect(await spentBy(`key:${keyId}:usr_delegate_b`)).toBe(100);
  }, 120_000);
});

describe('retention', () => {
  it('finding 12: the prune activity deletes rows past retention, in batches, and keeps recent ones', async () => {
    const { pool, logger } = stack.services;
    const user = await createTestUser(stack);
    const tenant = user.user.tenantId;
    const old = `now() - interval '40 days'`;
    await pool.query(
      `INSERT INTO audit_log (tenant_id, kind, actor_user_id, tool, created_at)
       SELECT $1, 'tool_call', $2, 'old', ${old} FROM generate_series(1, 5)
       UNION ALL SELECT $1, 'tool_call', $2, 'recent', now()`,
      [tenant, user.user.id],
    );
    await pool.query(
      `INSERT INTO login_tokens (token_hash, user_id, expires_at) VALUES
         (decode(md5($2 || 'old'), 'hex'), $1, ${old}), (decode(md5($2 || 'new'), 'hex'), $1, now() + interval '10 minutes')`,
      [user.user.id, tenant],
    );
    await pool.query(
      `INSERT INTO connection_attempts (id, tenant_id, user_id, integration, auth_mode, status, expires_at, created_at) VALUES
         ($3 || '-old-done', $1, $2, 'github', 'oauth2', 'CONNECTED', ${old}, ${old}),
         ($3 || '-old-expired', $1, $2, 'github', 'oauth2', 'PENDING', ${old}, ${old}),
         ($3 || '-recent', $1, $2, 'github', 'oauth2', 'CONNECTED', now() + interval '1 hour', now())`,
      [tenant, user.user.id, tenant],
    );
    await pool.query(
      `INSERT INTO tool_batch_requests (batch_id, tenant_id, user_id, request_hash, created_at) VALUES
         ($1 || '-old', $1, $2, '\\x00', ${old}), ($1 || '-recent', $1, $2, '\\x00', now())`,
      [tenant, user.user.id],
    );
    await pool.query(
      `INSERT INTO call_budgets (bucket, window_start, calls) VALUES ($1, now() - interval '2 hours', 5), ($1, date_trunc('minute', now()), 1)`,
      [`tenant:${tenant}`],
    );

    const deleted = await createPruneActivities({ pool, logger }).pruneOldRows({ retentionDays: 30, idempotencyDays: 30, batchSize: 2 });
    expect(deleted.audit_log).toBeGreaterThanOrEqual(5);
    expect(deleted.connection_attempts).toBeGreaterThanOrEqual(2);

    const left = async (sql: string) => (await pool.query(sql, [tenant])).rows.map((r) => Object.values(r)[0]);
    expect(await left(`SELECT tool FROM audit_log WHERE tenant_id = $1`)).toEqual(['recent']);
    expect(await left(`SELECT id FROM connection_attempts WHERE tenant_id = $1`)).toEqual([`${tenant}-recent`]);
    expect(await left(`SELECT batch_id FROM tool_batch_requests WHERE tenant_id = $1`)).toEqual([`${tenant}-recent`]);
    expect(await left(`SELECT calls FROM call_budgets WHERE bucket = 'tenant:' || $1`)).toEqual([1]);
    const tokens = await pool.query(`SELECT expires_at > now() AS fresh FROM login_tokens WHERE user_id = $1`, [user.user.id]);
    expect(tokens.rows).toEqual([{ fresh: true }]);
  }, 60_000);

  it('finding 12: the worker creates the daily retention schedule at start, updates it idempotently, and it runs the prune', async () => {
    const { temporal, config, logger } = stack.services;
    const handle = temporal.schedule.getHandle(pruneScheduleId(config));
    const described = await handle.describe();
    expect(described.spec.intervals).toEqual([expect.objectContaining({ every: 24 * 60 * 60 * 1000 })]);
    expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'pruneWorkflow', taskQueue: config.TEMPORAL_TASK_QUEUE });
    expect(described.action.type === 'startWorkflow' && described.action.args).toEqual([
      expect.objectContaining({ retentionDays: 7, idempotencyDays: expect.any(Number) }),
    ]);

    // A second start (another worker, or a new RETENTION_DAYS) updates the same schedule.
    await ensurePruneSchedule(temporal, { ...config, RETENTION_DAYS: 9 }, logger);
    const updated = await handle.describe();
    expect(updated.action.type === 'startWorkflow' && updated.action.args).toEqual([expect.objectContaining({ retentionDays: 9 })]);
    let schedules = 0;
    for await (const s of temporal.schedule.list()) if (s.scheduleId === pruneScheduleId(config)) schedules++;
    expect(schedules).toBe(1);

    // Triggered now, it runs the prune workflow on this deployment's worker to completion.
    await handle.trigger();
    await expect.poll(async () => (await handle.describe()).info.recentActions.length, { timeout: 20_000 }).toBeGreaterThan(0);
    const run = (await handle.describe()).info.recentActions[0].action;
    const result = await temporal.workflow.getHandle(run.workflow.workflowId, run.workflow.firstExecutionRunId).result();
    expect(result).toMatchObject({ audit_log: expect.any(Number), login_tokens: expect.any(Number) });
  }, 60_000);
});
