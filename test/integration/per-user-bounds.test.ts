import type { ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { connectionWorkflowId } from '../../core/ids.js';
import { updateTenantSettings } from '../../features/accounts/store/tenants.js';
import { getAttempt } from '../../features/connections/store/connection-attempts.js';
import { pruneRows } from '../../features/retention/store/retention.js';
import { createJot } from '../../platform/database/jots.js';
import { waitingTaskResults } from '../../surfaces/mcp/tasks/mcp-task-store.js';
import { consentAs, signedInPage } from '../support/consent.js';
import { killProcess, spawnServerProcess, startWorld, type TestUser } from '../support/harness.js';
import { freePort } from '../support/ports.js';
import { createWaitingApproval } from '../support/waiting-approval.js';

/**
 * What one caller can make Switchboard hold, bounded per user (and per tenant): open connection
 * attempts, each a workflow living its TTL (CONNECT_PENDING_MAX_PER_USER), and long waits, each a
 * held connection (WAITS_MAX_PER_USER / WAITS_MAX_PER_TENANT), and notes kept for good
 * (JOTS_MAX_NOTES_PER_USER / JOTS_MAX_BYTES_PER_USER), and results kept for their retention
 * (STORED_RESULTS_MAX_BYTES_PER_USER). Small bounds here, the defaults' logic.
 */
const MAX_PENDING = 3;
const world = await startWorld({
  clients: { github: {} },
  env: {
    CONNECT_PENDING_MAX_PER_USER: String(MAX_PENDING),
    WAITS_MAX_PER_USER: '2',
    WAITS_MAX_PER_TENANT: '3',
    JOTS_MAX_NOTES_PER_USER: '3',
    JOTS_MAX_BYTES_PER_USER: '1000',
    // A 6 kB result is cut (and stored, with a resultRef); three fit in a user's stored results.
    CONNECTIONS_TOOL_RESULT_MAX_BYTES: '4000',
    STORED_RESULTS_MAX_BYTES_PER_USER: '20000',
  },
});
const { auth, stack } = world;
const { pool, temporal } = stack.services;
const browser = await world.browser();
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) await killProcess(child);
});

const connect = async (user: TestUser) => {
  const { status, body } = await user.call('connect', { integration: 'github' });
  expect(status).toBe(200);
  return body as { connectionId: string; url: string };
};
const statusOf = async (id: string) => (await getAttempt(pool, id))?.status;
const openCount = async (user: TestUser) =>
  (
    await pool.query(
      `SELECT count(*)::int AS n FROM connection_attempts WHERE user_id = $1 AND status = 'PENDING' AND expires_at > now()`,
      [user.user.id],
    )
  ).rows[0].n as number;
const workflowResult = (id: string) => temporal.workflow.getHandle(connectionWorkflowId(id)).result();

describe('open connection attempts per user (CONNECT_PENDING_MAX_PER_USER)', () => {
  it('an agent looping connect keeps the user at the bound: the oldest unopened attempts end EXPIRED at once, workflows and waits included', async () => {
    const looping = await world.user();
    const made = [];
    for (let i = 0; i < MAX_PENDING + 2; i++) made.push(await connect(looping));
    expect(await openCount(looping)).toBe(MAX_PENDING);
    const [first, second, ...kept] = made;
    expect(await statusOf(first.connectionId)).toBe('EXPIRED');
    expect(await statusOf(second.connectionId)).toBe('EXPIRED');
    for (const a of kept) expect(await statusOf(a.connectionId)).toBe('PENDING');
    // Exactly as a timeout ends it: its workflow is over, a wait answers EXPIRED at once, its link is dead.
    expect(await workflowResult(first.connectionId)).toEqual({ status: 'EXPIRED' });
    expect(await workflowResult(second.connectionId)).toEqual({ status: 'EXPIRED' });
    const started = Date.now();
    expect((await looping.call('wait_for_connection', { connectionId: first.connectionId, timeoutSec: 30 })).body).toEqual({
      status: 'EXPIRED',
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    const page = await signedInPage(browser, looping);
    expect((await page.goto(first.url))?.status()).toBe(410);
    // The newest still works: its link leads to the consent page.
    await page.goto(kept.at(-1)!.url);
    await page.waitForURL((url) => url.href.startsWith(auth.issuer));
    await page.context().close();
  });

  it('an attempt its person opened is never displaced; with all opened, connect answers 429 naming the bound and creates nothing; others are unaffected', async () => {
    const bob = await world.user();
    const mallory = await world.user({ tenantId: bob.user.tenantId });
    const page = await signedInPage(browser, bob);
    const openInBrowser = async (url: string) => {
      await page.goto(url);
      await page.waitForURL((u) => u.href.startsWith(auth.issuer));
    };
    const opened = [await connect(bob), await connect(bob)];
    for (const a of opened) await openInBrowser(a.url);
    const unopened = await connect(bob);
    const newest = await connect(bob);
    // The one nobody opened made way; the two in the person's hands did not.
    expect(await statusOf(unopened.connectionId)).toBe('EXPIRED');
    for (const a of opened) expect(await statusOf(a.connectionId)).toBe('PENDING');
    await openInBrowser(newest.url);

    const before = (await pool.query('SELECT count(*)::int AS n FROM connection_attempts WHERE user_id = $1', [bob.user.id])).rows[0].n;
    const res = await fetch(`${stack.baseUrl}/v1/tools/connect`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bob.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ integration: 'github' }),
    });
    expect(res.status).toBe(429);
    const body = await res.json();
    expect(body.error).toMatch(
      new RegExp(
        `^Too many connection attempts open: a user has at most ${MAX_PENDING} \\(CONNECT_PENDING_MAX_PER_USER\\), and all ${MAX_PENDING} were opened in a browser to be completed\\. Finish one there, or call connect again after \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\(in \\d+ min\\), when the first of them expires\\.$`,
      ),
    );
    expect(body.retryAfterSec).toBeGreaterThan(0);
    expect(res.headers.get('retry-after')).toBe(String(body.retryAfterSec));
    expect((await pool.query('SELECT count(*)::int AS n FROM connection_attempts WHERE user_id = $1', [bob.user.id])).rows[0].n).toBe(
      before,
    );
    for (const a of [...opened, newest]) expect(await statusOf(a.connectionId)).toBe('PENDING');

    // Another user of the same tenant connects as usual.
    await connect(mallory);

    // Finishing one in the browser makes room again.
    await consentAs(page, auth, 'bounded-bob');
    expect((await bob.call('wait_for_connection', { connectionId: newest.connectionId, timeoutSec: 30 })).body).toEqual({
      status: 'CONNECTED',
    });
    await connect(bob);
    await page.context().close();
  });

  it('50 connects at once through two server processes never pass the bound, and every displaced workflow ends', async () => {
    const carol = await world.user();
    const port = await freePort();
    children.push(await spawnServerProcess(stack, port));
    const servers = [stack.baseUrl, `http://127.0.0.1:${port}`];
    const answers = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const res = await fetch(`${servers[i % 2]}/v1/tools/connect`, {
          method: 'POST',
          headers: { authorization: `Bearer ${carol.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ integration: 'github' }),
        });
        return { status: res.status, body: await res.json() };
      }),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
    expect(await openCount(carol)).toBe(MAX_PENDING);
    const ids = answers.map((a) => a.body.connectionId as string);
    const statuses = await Promise.all(ids.map(statusOf));
    expect(statuses.filter((s) => s === 'PENDING')).toHaveLength(MAX_PENDING);
    expect(statuses.filter((s) => s === 'EXPIRED')).toHaveLength(50 - MAX_PENDING);
    // Temporal holds none of the displaced ones: each workflow has ended EXPIRED.
    const displaced = ids.filter((_, i) => statuses[i] === 'EXPIRED');
    const ended = await Promise.all(displaced.map(workflowResult));
    expect(ended).toEqual(Array(displaced.length).fill({ status: 'EXPIRED' }));
  }, 120_000);
});

describe('long waits held at once (WAITS_MAX_PER_USER, WAITS_MAX_PER_TENANT)', () => {
  it('a user past the bound is refused at once (429, nothing waited on); another tenant still waits; a slot frees when a wait ends', async () => {
    const dave = await world.user();
    const erin = await world.user({ tenantId: dave.user.tenantId });
    const frank = await world.user();
    const held = [await connect(dave), await connect(dave)].map((a) =>
      dave.call('wait_for_connection', { connectionId: a.connectionId, timeoutSec: 6 }),
    );
    const third = await connect(dave);
    // The two waits are under way on the server before the third asks.
    await new Promise((r) => setTimeout(r, 1_500));
    const started = Date.now();
    const refused = await fetch(`${stack.baseUrl}/v1/tools/wait_for_connection`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dave.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ connectionId: third.connectionId, timeoutSec: 30 }),
    });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('10');
    expect(await refused.json()).toEqual({
      error:
        'Too many waits at once: a user has at most 2 wait_for_connection and wait_for_approval calls waiting at once (WAITS_MAX_PER_USER), and all are taken. Nothing was waited on: let one of them answer, then wait again.',
      retryAfterSec: 10,
    });
    // The refused wait reaped nothing: the attempt is still open.
    expect(await statusOf(third.connectionId)).toBe('PENDING');

    // wait_for_approval draws on the same slots.
    const approval = await createWaitingApproval(stack, dave, `waits-${dave.user.id}`);
    const approvalWait = await dave.call('wait_for_approval', { approvalId: approval.id, timeoutSec: 30 });
    expect(approvalWait.status).toBe(429);
    expect(approvalWait.body.error).toContain('(WAITS_MAX_PER_USER)');

    // The tenant's third slot is erin's; her next one passes the tenant's bound.
    const erinHeld = erin.call('wait_for_connection', { connectionId: (await connect(erin)).connectionId, timeoutSec: 6 });
    await new Promise((r) => setTimeout(r, 1_000));
    const erinRefused = await erin.call('wait_for_connection', { connectionId: (await connect(erin)).connectionId, timeoutSec: 30 });
    expect(erinRefused.status).toBe(429);
    expect(erinRefused.body.error).toBe(
      'Too many waits at once: your organisation has at most 3 requests waiting at once (wait_for_connection, wait_for_approval, MCP tasks/result and task subscriptions, calls asking a person) (WAITS_MAX_PER_TENANT), and all are taken. Nothing was waited on: try again shortly.',
    );

    // Another tenant is not held by theirs.
    expect((await frank.call('wait_for_connection', { connectionId: (await connect(frank)).connectionId, timeoutSec: 1 })).body).toEqual({
      status: 'TIMEOUT',
    });

    // The held waits answer as usual; then dave waits again.
    expect((await Promise.all(held)).map((r) => r.body)).toEqual([{ status: 'TIMEOUT' }, { status: 'TIMEOUT' }]);
    expect((await erinHeld).body).toEqual({ status: 'TIMEOUT' });
    expect((await dave.call('wait_for_connection', { connectionId: third.connectionId, timeoutSec: 1 })).body).toEqual({
      status: 'TIMEOUT',
    });
  });

  it("MCP tasks/result waits count against the same tenant bound: one tenant's users cannot hold every connection through tasks either", async () => {
    const gail = await world.user();
    const hugo = await world.user({ tenantId: gail.user.tenantId });
    const hugoCaller = { tenantId: hugo.user.tenantId, userId: hugo.user.id, roles: hugo.user.roles };
    // gail holds two of her tenant's three slots with wait_for_connection.
    const held = [await connect(gail), await connect(gail)].map((a) =>
      gail.call('wait_for_connection', { connectionId: a.connectionId, timeoutSec: 8 }),
    );
    const client = new Client({ name: 'bounds-test', version: '1.0.0' }, { capabilities: { tasks: {} } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${hugo.apiKey}` } },
      }),
    );
    const { connectionId } = await connect(hugo);
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'wait_for_connection', arguments: { connectionId }, task: { ttl: 600_000 } } },
      CreateTaskResultSchema,
    );
    // hugo's first tasks/result takes the tenant's third slot (his own bound is 20)…
    const first = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema).catch((err: Error) => err);
    await expect.poll(() => waitingTaskResults(hugoCaller), { timeout: 30_000 }).toBe(1);
    // …so his second is refused at once, naming the tenant's bound, and so is a wait of another kind.
    await expect(client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).rejects.toThrow(/\(WAITS_MAX_PER_TENANT\)/);
    const refused = await hugo.call('wait_for_connection', { connectionId, timeoutSec: 30 });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toContain('(WAITS_MAX_PER_TENANT)');
    // When the task ends, its result wait ends and gives its slot back.
    await client.experimental.tasks.cancelTask(task.taskId);
    expect(JSON.stringify(await first)).toMatch(/cancelled/);
    await expect.poll(() => waitingTaskResults(hugoCaller), { timeout: 30_000 }).toBe(0);
    expect((await Promise.all(held)).map((r) => r.body)).toEqual([{ status: 'TIMEOUT' }, { status: 'TIMEOUT' }]);
    expect((await hugo.call('wait_for_connection', { connectionId: (await connect(hugo)).connectionId, timeoutSec: 1 })).body).toEqual({
      status: 'TIMEOUT',
    });
    await client.close();
  });
});

describe('notes one user keeps (JOTS_MAX_NOTES_PER_USER, JOTS_MAX_BYTES_PER_USER)', () => {
  const execute = (user: TestUser, name: string, args: Record<string, unknown>) =>
    user.call('connections_execute', { name, arguments: args }).then((r) => r.body);
  const noteCount = async (user: TestUser) =>
    (await pool.query('SELECT count(*)::int AS n FROM jots WHERE user_id = $1', [user.user.id])).rows[0].n as number;

  it('ten creates at once keep exactly the bound; the rest are refused by name and save nothing; deleting one makes room', async () => {
    const gus = await world.user();
    // delete_note asks a person first by default; here the user deletes directly.
    await updateTenantSettings(pool, gus.user.tenantId, { approveDestructive: false });
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => execute(gus, 'jots__create_note', { title: `n${i}`, body: 'short' })),
    );
    const saved = answers.filter((a) => a.ok);
    expect(saved).toHaveLength(3);
    const refused = answers.filter((a) => !a.ok);
    expect(refused).toHaveLength(7);
    for (const a of refused) {
      expect(a.error).toMatchObject({
        code: 'tool_failed',
        message:
          'jots__create_note failed: Notes are full: a user keeps at most 3 notes (JOTS_MAX_NOTES_PER_USER). Nothing was saved; delete some with delete_note first.',
      });
    }
    expect(await noteCount(gus)).toBe(3);
    // Another user of the same tenant still writes notes.
    const hana = await world.user({ tenantId: gus.user.tenantId });
    expect((await execute(hana, 'jots__create_note', { title: 'mine', body: 'text' })).ok).toBe(true);
    expect((await execute(gus, 'jots__delete_note', { id: saved[0].result.id })).ok).toBe(true);
    expect((await execute(gus, 'jots__create_note', { title: 'again', body: 'text' })).ok).toBe(true);
  });

  it('the bytes of all notes together are bounded too: a note or an update that would pass it is refused, one that shrinks is not', async () => {
    const ida = await world.user();
    const big = await execute(ida, 'jots__create_note', { title: 't', body: 'b'.repeat(900) });
    expect(big.ok).toBe(true);
    const tooMuch = await execute(ida, 'jots__create_note', { title: 't', body: 'c'.repeat(200) });
    expect(tooMuch.error.message).toBe(
      "jots__create_note failed: Notes are full: a user's notes hold at most 1000 bytes of text together (JOTS_MAX_BYTES_PER_USER), and this would pass it. Nothing was saved; delete or shorten some notes first.",
    );
    const growing = await execute(ida, 'jots__update_note', { id: big.result.id, body: 'b'.repeat(1200) });
    expect(growing.error.message).toContain('(JOTS_MAX_BYTES_PER_USER)');
    expect((await execute(ida, 'jots__get_note', { id: big.result.id })).result.body).toBe('b'.repeat(900));
    expect((await execute(ida, 'jots__update_note', { id: big.result.id, body: 'b'.repeat(500) })).ok).toBe(true);
    expect((await execute(ida, 'jots__create_note', { title: 't', body: 'c'.repeat(200) })).ok).toBe(true);
  });
});

describe('stored results one user holds (STORED_RESULTS_MAX_BYTES_PER_USER)', () => {
  const usageOf = async (user: TestUser) => {
    const { rows } = await pool.query(
      `SELECT (SELECT coalesce(sum(total_bytes), 0)::int FROM stored_results WHERE user_id = $1) AS stored,
              (SELECT count(*)::int FROM stored_results WHERE user_id = $1) AS n,
              (SELECT bytes::int FROM stored_result_usage WHERE user_id = $1) AS counted`,
      [user.user.id],
    );
    return rows[0] as { stored: number; n: number; counted: number };
  };
  const bigResult = async (user: TestUser) => {
    const note = await createJot(
      pool,
      { tenantId: user.user.tenantId, userId: user.user.id },
      { title: 'big', body: 'x'.repeat(6000), tags: [] },
    );
    return async () => {
      const answer = (await user.call('connections_execute', { name: 'jots__get_note', arguments: { id: note.id } })).body;
      expect(answer).toMatchObject({ ok: true, truncated: true, resultRef: expect.stringMatching(/^res_/) });
      return answer.resultRef as string;
    };
  };

  /** As if the user's results were stored an hour ago: past the grace that keeps results on their way to the caller. */
  const age = (user: TestUser) =>
    pool.query(`UPDATE stored_results SET created_at = created_at - interval '1 hour' WHERE user_id = $1`, [user.user.id]);

  it('a caller making result after result keeps only the newest within the bound: the oldest go first, and read like expired ones', async () => {
    const jay = await world.user();
    const kim = await world.user({ tenantId: jay.user.tenantId });
    const jayCall = await bigResult(jay);
    const kimRef = await (await bigResult(kim))();
    const refs: string[] = [];
    for (let i = 0; i < 3; i++) refs.push(await jayCall());
    await age(jay);
    for (let i = 0; i < 3; i++) refs.push(await jayCall());
    const jays = await usageOf(jay);
    expect(jays.n).toBe(3);
    expect(jays.stored).toBeLessThanOrEqual(20_000);
    expect(jays.counted).toBe(jays.stored);
    for (const ref of refs.slice(0, 3)) {
      expect(await jay.call('read_result', { resultRef: ref })).toEqual({ status: 404, body: { error: 'Unknown resultRef' } });
    }
    for (const ref of refs.slice(3)) expect((await jay.call('read_result', { resultRef: ref })).status).toBe(200);
    // Another user of the same tenant keeps theirs.
    expect((await kim.call('read_result', { resultRef: kimRef })).status).toBe(200);
    expect((await usageOf(kim)).n).toBe(1);
  });

  it('results stored side by side all reach their caller; the next store past the grace brings the user back within the bound; the count stays exact through the daily prune', async () => {
    const lee = await world.user();
    const leeCall = await bigResult(lee);
    // Each answer reads its result back after the batch: none is taken from under it.
    const refs = await Promise.all(Array.from({ length: 8 }, () => leeCall()));
    expect(new Set(refs).size).toBe(8);
    const burst = await usageOf(lee);
    expect(burst.n).toBe(8);
    expect(burst.counted).toBe(burst.stored);
    await age(lee);
    await leeCall();
    const after = await usageOf(lee);
    expect(after.stored).toBeLessThanOrEqual(20_000);
    expect(after.counted).toBe(after.stored);
    await pool.query(`UPDATE stored_results SET expires_at = now() - interval '1 day' WHERE user_id = $1`, [lee.user.id]);
    await pruneRows(pool, 'stored_results', new Date(), 1000);
    expect(await usageOf(lee)).toEqual({ stored: 0, n: 0, counted: 0 });
  });
});
