import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolOutcome } from '../../core/execution.js';
import { cutUtf8 as cutText } from '../../core/result-limits.js';
import { createExecuteActivities } from '../../features/execution/execute-tool.js';
import { createWorkflowHelperActivities } from '../../features/execution/workflow-helpers.js';
import { createPruneActivities } from '../../features/retention/prune.js';
import { createJot } from '../../platform/database/jots.js';
import { startAgentWorker } from '../support/agent-worker.js';
import { createTestUser, type Stack, startStack, type TestUser } from '../support/harness.js';
import { historyText } from '../support/history-text.js';

const { temporal } = proto;

/**
 * Results never lost, history kept small (issue 14): results above RESULT_INLINE_MAX_BYTES are
 * stored sealed in Postgres and the tool batch carries references; read_result reads a cut result
 * on, for its own user only.
 */

const PLATFORM_TENANT = 'ten_platform_results';
const OPS_EMAIL = 'ops@results.example';
const LIMIT = 32 * 1024;

let stack: Stack;
let alice: TestUser;
let bob: TestUser; // alice's colleague, same tenant
let carol: TestUser; // another tenant
let operator: TestUser;

beforeAll(async () => {
  stack = await startStack({
    env: {
      CONNECTIONS_TOOL_RESULT_MAX_BYTES: String(LIMIT),
      // The 500-call batch alone would spend the default per-key minute.
      RATE_LIMIT_CALLS_PER_MINUTE: '5000',
      TENANT_RATE_LIMIT_CALLS_PER_MINUTE: '10000',
      CODEC_OPERATOR_TENANT: PLATFORM_TENANT,
      CODEC_OPERATORS: OPS_EMAIL,
    },
  });
  alice = await createTestUser(stack);
  bob = await createTestUser(stack, { tenantId: alice.user.tenantId });
  carol = await createTestUser(stack);
  operator = await createTestUser(stack, { tenantId: PLATFORM_TENANT, email: OPS_EMAIL });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

const noteOf = (user: TestUser, body: string, title = 'Big note') =>
  createJot(stack.services.pool, { tenantId: user.user.tenantId, userId: user.user.id }, { title, body, tags: ['big'] });

/** The raw (still encrypted) history of the user's latest tool batch, and its size as Temporal stores it. */
async function latestBatchHistory(user: TestUser): Promise<{ workflowId: string; history: History; bytes: number }> {
  const { temporal: client } = stack.services;
  const query = `TaskQueue = '${stack.env.TEMPORAL_TASK_QUEUE}' AND SwitchboardUser = '${user.user.id}'`;
  for (let tries = 0; ; tries++) {
    const ids: string[] = [];
    for await (const wf of client.workflow.list({ query })) ids.push(wf.workflowId);
    if (ids.length || tries > 50) {
      const workflowId = ids[0];
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      return { workflowId, history, bytes: temporal.api.history.v1.History.encode(history).finish().length };
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

const readResult = (user: TestUser, args: Record<string, unknown>) => user.call('read_result', args);

/** Reads the whole text behind a resultRef, `maxBytes` at a time; checks every slice on the way. */
async function readAll(user: TestUser, resultRef: string, maxBytes: number, select?: string[]): Promise<string> {
  let offset: number | null = 0;
  let text = '';
  while (offset !== null) {
    const { status, body } = await readResult(user, { resultRef, offset, maxBytes, ...(select && { select }) });
    expect(status).toBe(200);
    expect(body.offset).toBe(offset);
    expect(Buffer.byteLength(body.result)).toBeLessThanOrEqual(maxBytes);
    expect(body.result).not.toContain('\uFFFD');
    text += body.result;
    offset = body.nextOffset;
  }
  return text;
}

describe('every result of a batch reaches its caller', () => {
  it('80 × jots_get_note of one 100 kB note: 80 results, each cut at the limit with a resultRef; the history stays small', async () => {
    const user = await createTestUser(stack);
    const marker = `stored-plaintext-${randomBytes(6).toString('hex')}`;
    const note = await noteOf(user, `${marker} ${'x'.repeat(99_000)}`);
    const { status, body } = await user.call('execute_tools', {
      executions: Array.from({ length: 80 }, () => ({ tool: 'jots_get_note', args: { id: note.id } })),
    });
    expect(status).toBe(200);
    expect(body.results).toHaveLength(80);
    const refs = new Set<string>();
    for (const entry of body.results) {
      expect(entry).toEqual({
        result: expect.any(String),
        truncated: true,
        originalBytes: Buffer.byteLength(JSON.stringify(note)),
        resultRef: expect.stringMatching(/^res_[A-Za-z0-9_-]{32}$/),
        totalBytes: Buffer.byteLength(JSON.stringify(note)),
      });
      expect(Buffer.byteLength(entry.result)).toBeLessThanOrEqual(LIMIT);
      expect(Buffer.byteLength(entry.result)).toBeGreaterThan(LIMIT - 4);
      expect(entry.result.startsWith(JSON.stringify(note).slice(0, 100))).toBe(true);
      refs.add(entry.resultRef);
    }
    expect(refs.size).toBe(80);
    const { history, bytes } = await latestBatchHistory(user);
    expect(bytes).toBeLessThan(150_000);
    // Sealed in history and in Postgres: neither holds the note's text.
    expect(historyText(history)).not.toContain(marker);
    const { rows } = await stack.services.pool.query('SELECT * FROM stored_results WHERE user_id = $1', [user.user.id]);
    expect(rows).toHaveLength(80);
    expect(JSON.stringify(rows)).not.toContain(marker);
    expect(rows.map((r) => Buffer.from(r.sealed).toString('utf8')).join('')).not.toContain(marker);
  }, 120_000);

  it('the largest accepted batch, 500 maximal results: every result returned, history under 400 KB', async () => {
    const user = await createTestUser(stack);
    const note = await noteOf(user, 'y'.repeat(40_000));
    const { status, body } = await user.call('execute_tools', {
      executions: Array.from({ length: 500 }, () => ({ tool: 'jots_get_note', args: { id: note.id } })),
    });
    expect(status).toBe(200);
    expect(body.results).toHaveLength(500);
    for (const entry of body.results) {
      expect(entry).toMatchObject({ truncated: true, resultRef: expect.any(String) });
      expect(Buffer.byteLength(entry.result)).toBe(LIMIT);
    }
    const { bytes } = await latestBatchHistory(user);
    expect(bytes).toBeLessThan(400_000);
  }, 300_000);

  it('small results stay inline and unchanged in shape; results between the inline limit and the cut come back whole', async () => {
    const user = await createTestUser(stack);
    const small = await noteOf(user, 'tiny', 'Small');
    const medium = await noteOf(user, 'é'.repeat(5000), 'Medium');
    const { body } = await user.call('execute_tools', {
      executions: [
        { tool: 'jots_get_note', args: { id: small.id } },
        { tool: 'jots_get_note', args: { id: medium.id } },
        { tool: 'jots_get_note', args: { id: 'jot_missing' } },
      ],
    });
    expect(body.results).toEqual([{ result: small }, { result: medium }, { error: 'jots__get_note failed: No note with id jot_missing.' }]);
    const { rows } = await stack.services.pool.query('SELECT total_bytes FROM stored_results WHERE user_id = $1', [user.user.id]);
    expect(rows).toEqual([{ total_bytes: Buffer.byteLength(JSON.stringify(medium)) }]);
    const agent = await user.call('connections_execute', { name: 'jots__get_note', arguments: { id: medium.id } });
    expect(agent.body).toEqual({ ok: true, result: medium });
  });

  it('an agent workflow (the activity without an inline limit) gets its result inline, cut, with a resultRef it can read on', async () => {
    const note = await noteOf(alice, 'z'.repeat(50_000));
    const { executeToolCall } = createExecuteActivities(stack.services);
    const base = { tenantId: alice.user.tenantId, userId: alice.user.id, call: { tool: 'jots__get_note', args: { id: note.id } } };
    const inline = await executeToolCall({ ...base, callKey: `agent-wf#${randomBytes(4).toString('hex')}` });
    expect(inline).toMatchObject({
      ok: true,
      truncated: true,
      resultRef: expect.any(String),
      totalBytes: Buffer.byteLength(JSON.stringify(note)),
    });
    expect(JSON.parse(await readAll(alice, (inline as { resultRef: string }).resultRef, LIMIT))).toEqual(note);
    // switchboard/workflow's readResult reads on through its helper activity, for the same user only.
    const { readResult: readInWorkflow } = createWorkflowHelperActivities(stack.services);
    const ref = (inline as { resultRef: string }).resultRef;
    const slice = await readInWorkflow({
      tenantId: alice.user.tenantId,
      userId: alice.user.id,
      resultRef: ref,
      offset: LIMIT,
      maxBytes: 10,
    });
    expect(slice).toEqual({
      resultRef: ref,
      result: JSON.stringify(note).slice(LIMIT, LIMIT + 10),
      offset: LIMIT,
      nextOffset: LIMIT + 10,
      totalBytes: expect.any(Number),
    });
    const foreign = readInWorkflow({ tenantId: bob.user.tenantId, userId: bob.user.id, resultRef: ref, maxBytes: 10 });
    await expect(foreign).rejects.toMatchObject({ message: 'Unknown resultRef', type: 'SwitchboardUnknownResultRef', nonRetryable: true });
    const stored = await executeToolCall({ ...base, callKey: `batch#${randomBytes(4).toString('hex')}`, inlineResultMaxBytes: 2048 });
    expect(stored).toEqual({ ok: true, stored: { resultRef: expect.any(String), totalBytes: Buffer.byteLength(JSON.stringify(note)) } });
  });
});

describe('an agent workflow reads a cut result to its end', () => {
  it('switchboard/workflow: execute answers a cut result with its resultRef; readResult reads the rest, slice by slice, in the workflow', async () => {
    const body = `${'é'.repeat(30_000)}${'z'.repeat(20_000)}`;
    const note = await noteOf(alice, body);
    const agents = await startAgentWorker(stack);
    try {
      const { result } = await agents.run<{ outcome: ToolOutcome; text?: string; slices: number }>(
        'executeAndReadAll',
        { tenantId: alice.user.tenantId, userId: alice.user.id },
        { call: { tool: 'jots__get_note', args: { id: note.id } }, sliceBytes: 16_001 },
      );
      const whole = JSON.stringify(note);
      expect(result.outcome).toMatchObject({
        ok: true,
        truncated: true,
        resultRef: expect.any(String),
        totalBytes: Buffer.byteLength(whole),
      });
      expect(result.text).toBe(whole);
      // Slices end on character boundaries, so some are a byte short of sliceBytes.
      expect(result.slices).toBeGreaterThanOrEqual(Math.ceil(Buffer.byteLength(whole) / 16_001));
    } finally {
      await agents.stop();
    }
  }, 120_000);
});

describe('read_result', () => {
  let note: Awaited<ReturnType<typeof noteOf>>;
  let resultRef: string;
  let fullText: string;

  beforeAll(async () => {
    note = await noteOf(alice, 'aé€😀'.repeat(5000), 'Multi-byte ☃');
    fullText = JSON.stringify(note);
    const { body } = await alice.call('execute_tools', { executions: [{ tool: 'jots_get_note', args: { id: note.id } }] });
    resultRef = body.results[0].resultRef;
    expect(body.results[0]).toMatchObject({ truncated: true, totalBytes: Buffer.byteLength(fullText) });
  });

  it('pages across multi-byte characters on character boundaries, back to the exact result', async () => {
    // 1000 is no multiple of the 10-byte group "aé€😀": slices end inside characters unless cut back.
    expect(await readAll(alice, resultRef, 1000)).toBe(fullText);
    const first = await readResult(alice, { resultRef });
    expect(first.body).toMatchObject({ resultRef, offset: 0, nextOffset: expect.any(Number), totalBytes: Buffer.byteLength(fullText) });
    expect(Buffer.byteLength(first.body.result)).toBeLessThanOrEqual(LIMIT);
  });

  it('an offset inside a character starts at that character (the answer says where)', async () => {
    const bytes = Buffer.from(fullText);
    const euro = bytes.indexOf(Buffer.from('€'));
    const { status, body } = await readResult(alice, { resultRef, offset: euro + 1, maxBytes: 7 });
    expect(status).toBe(200);
    expect(body.offset).toBe(euro);
    expect(body.result.startsWith('€')).toBe(true);
    const end = await readResult(alice, { resultRef, offset: bytes.length });
    expect(end.body).toMatchObject({ result: '', nextOffset: null, totalBytes: bytes.length });
  });

  it('select reads only the parts JSON pointers name, and lists the ones that name nothing', async () => {
    const { status, body } = await readResult(alice, { resultRef, select: ['/title', '/tags/0', '/nope', '/id'] });
    expect(status).toBe(200);
    expect(JSON.parse(body.result)).toEqual({ '/title': 'Multi-byte ☃', '/tags/0': 'big', '/id': note.id });
    expect(body).toMatchObject({ nextOffset: null, missing: ['/nope'] });
    expect(JSON.parse(await readAll(alice, resultRef, 333, ['/body']))).toEqual({ '/body': note.body });
  });

  it("another user's, another tenant's, a made-up and an expired resultRef all answer the same 404", async () => {
    const unknown = { status: 404, body: { error: 'Unknown resultRef' } };
    expect(await readResult(bob, { resultRef })).toEqual(unknown);
    expect(await readResult(carol, { resultRef })).toEqual(unknown);
    expect(await readResult(alice, { resultRef: `res_${randomBytes(24).toString('base64url')}` })).toEqual(unknown);
    expect(await readResult(alice, { resultRef: 'res_1' })).toEqual(unknown);
    const doomed = await noteOf(alice, 'q'.repeat(40_000));
    const { body } = await alice.call('execute_tools', { executions: [{ tool: 'jots_get_note', args: { id: doomed.id } }] });
    const expiring = body.results[0].resultRef;
    expect((await readResult(alice, { resultRef: expiring })).status).toBe(200);
    await stack.services.pool.query(`UPDATE stored_results SET expires_at = now() - interval '1 second' WHERE id = $1`, [expiring]);
    expect(await readResult(alice, { resultRef: expiring })).toEqual(unknown);
    // The daily prune deletes it (and only expired rows).
    const deleted = await createPruneActivities(stack.services).pruneOldRows({ retentionDays: 30, idempotencyDays: 30 });
    expect(deleted.stored_results).toBeGreaterThanOrEqual(1);
    const { rows } = await stack.services.pool.query('SELECT id FROM stored_results WHERE id = ANY($1)', [[expiring, resultRef]]);
    expect(rows).toEqual([{ id: resultRef }]);
  });

  it('hostile arguments fail cleanly with 400 and say why', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ resultRef, maxBytes: 1_000_000_000 }, /^Invalid arguments for read_result: maxBytes: /],
      [{ resultRef, maxBytes: 0 }, /^Invalid arguments for read_result: maxBytes: /],
      [{ resultRef, offset: -1 }, /^Invalid arguments for read_result: offset: /],
      [{ resultRef, offset: 1.5 }, /^Invalid arguments for read_result: offset: /],
      [
        { resultRef, offset: 10_000_000 },
        /^Invalid arguments for read_result: offset 10000000 is past the end of the result \(totalBytes \d+\)\.$/,
      ],
      [{ resultRef, select: ['title'] }, /^Invalid arguments for read_result: select: "title" is not a JSON pointer/],
      [{ resultRef, select: ['/a~2'] }, /^Invalid arguments for read_result: select: "\/a~2" has a "~" not followed by 0 or 1/],
      [{ resultRef, select: Array.from({ length: 51 }, (_, i) => `/${i}`) }, /^Invalid arguments for read_result: select: /],
      [{ resultRef, select: [] }, /^Invalid arguments for read_result: select: /],
      [{ resultRef: 'x'.repeat(201) }, /^Invalid arguments for read_result: resultRef: /],
      [{ resultRef, extra: 1 }, /^Invalid arguments for read_result: /],
      [{}, /^Invalid arguments for read_result: resultRef: /],
    ];
    for (const [args, message] of cases) {
      const { status, body } = await readResult(alice, args);
      expect({ args, status }).toEqual({ args, status: 400 });
      expect(body.error).toMatch(message);
    }
    // A malformed pointer on someone else's ref says nothing about the ref: 404 first.
    expect(await readResult(bob, { resultRef, select: ['bad'] })).toEqual({ status: 404, body: { error: 'Unknown resultRef' } });
  });

  it('is in the OpenAPI document, and reads a stored result over MCP too', async () => {
    const doc = await (await fetch(`${stack.baseUrl}/openapi.json`)).json();
    expect(doc.paths['/v1/tools/read_result'].post.requestBody.content['application/json'].schema.required).toEqual(['resultRef']);
    for (const path of ['/mcp', '/mcp/agent']) {
      const client = new Client({ name: 'stored-results-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}${path}`), {
          requestInit: { headers: { authorization: `Bearer ${alice.apiKey}` } },
        }),
      );
      const answer = await client.callTool({ name: 'read_result', arguments: { resultRef, maxBytes: 100 } });
      expect(answer.isError).toBeUndefined();
      expect(answer.structuredContent).toEqual((await readResult(alice, { resultRef, maxBytes: 100 })).body);
      expect((answer.structuredContent as { result: string }).result).toBe(cutText(fullText, 100));
      await client.close();
    }
  });
});

describe('operators', () => {
  it('the codec endpoint puts stored results back in a batch result and in each local activity marker', async () => {
    const user = await createTestUser(stack);
    const note = await noteOf(user, 'w'.repeat(10_000));
    const { body } = await user.call('execute_tools', {
      executions: [
        { tool: 'jots_get_note', args: { id: note.id } },
        { tool: 'jots_get_note', args: { id: 'jot_missing' } },
      ],
    });
    const { history } = await latestBatchHistory(user);
    const events = history.events ?? [];
    const completed = events.find((e) => e.workflowExecutionCompletedEventAttributes)!.workflowExecutionCompletedEventAttributes!;
    const markers = events.flatMap((e) => (e.markerRecordedEventAttributes?.details?.result?.payloads ?? []).slice(0, 1));
    const toJson = (p: { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null }) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      data: Buffer.from(p.data ?? []).toString('base64'),
    });
    const decode = (key: string) =>
      fetch(`${stack.baseUrl}/codec/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ payloads: [completed.result!.payloads![0], ...markers].map(toJson) }),
      });
    expect((await decode(user.apiKey)).status).toBe(403);
    const res = await decode(operator.apiKey);
    expect(res.status).toBe(200);
    const [batchResult, ...markerResults] = (await res.json()).payloads.map((p: { data: string }) =>
      JSON.parse(Buffer.from(p.data, 'base64').toString()),
    );
    const stored = { resultRef: expect.stringMatching(/^res_/), totalBytes: Buffer.byteLength(JSON.stringify(note)) };
    expect(batchResult).toEqual([
      { ok: true, result: note, stored },
      { ok: false, error: expect.objectContaining({ code: 'tool_failed' }) },
    ]);
    expect(body.results[0]).toEqual({ result: note });
    expect(markerResults).toEqual(expect.arrayContaining([{ ok: true, result: note, stored }]));
    expect(stack.logs.text()).toMatch(/"storedResults":1/);
    // Past its retention the UI shows the reference, saying so.
    await stack.services.pool.query(`UPDATE stored_results SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [
      user.user.id,
    ]);
    const later = await (await decode(operator.apiKey)).json();
    expect(JSON.parse(Buffer.from(later.payloads[0].data, 'base64').toString())[0]).toEqual({ ok: true, stored, resultExpired: true });
  });
});
