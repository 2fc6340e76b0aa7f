import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Client as TemporalClient } from '@temporalio/client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { replayHistories } from '../../bin/support/replay.js';
import { updateTenantSettings } from '../../features/accounts/store/tenants.js';
import { decide } from '../../features/approvals/decide.js';
import { executeTools } from '../../features/execution/tools/execute-tools.js';
import { pruneRows } from '../../features/retention/store/retention.js';
import { Keyring } from '../../platform/database/keyring.js';
import { createMcpTask, MCP_TASKS_WORKING_PER_USER, mcpTaskIdHash, resealMcpTasks } from '../../surfaces/mcp/store/mcp-tasks.js';
import { durableTasks } from '../../surfaces/mcp/tasks/durable-tasks.js';
import { RESULT_WAITS_PER_USER, waitingTaskResults } from '../../surfaces/mcp/tasks/mcp-task-store.js';
import { consentAs, signedInPage } from '../support/consent.js';
import { FIXTURE_KEYRING_ENV } from '../support/fixture-key.js';
import { killProcess, spawnServerProcess, spawnWorkerProcess, startWorld, type TestUser } from '../support/harness.js';
import { historyText, historyToFixture, rawHistoriesOf } from '../support/history-text.js';
import { freePort } from '../support/ports.js';

// MCP Tasks (issue 17): tool calls and waits run as tasks backed by Switchboard's durable state
// (a tool-batch workflow, a connection attempt, an approval), with the official v1 SDK client, the
// fake GitHub API, the test authorization server, chromium, and Switchboard's own processes killed.

const ISSUES_PATH = '/github/repos/octocat/hello-world/issues';
const SECRET_TITLE = 'task-argument-planted-5e1f';

const world = await startWorld({
  clients: { github: {} },
  apis: true,
  // The worker runs as its own process, so it can be killed like a crash would.
  worker: false,
  env: { ENCRYPTION_KEYS: FIXTURE_KEYRING_ENV, CONNECTION_TTL_SEC: '600' },
});
const { stack, apis, auth } = world;
const children: ChildProcess[] = [];
world.onStop(() => {
  for (const child of children) child.kill('SIGKILL');
});
afterAll(() => world.stop());

async function spawn(start: Promise<ChildProcess>): Promise<ChildProcess> {
  const child = await start;
  children.push(child);
  return child;
}

let worker = await spawn(spawnWorkerProcess(stack));
const alice = await world.githubUser('tasks-alice');
const mallory = await world.user({ tenantId: alice.user.tenantId });

async function clientOf(user: TestUser, baseUrl = stack.baseUrl, path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'tasks-test', version: '1.0.0' }, { capabilities: { tasks: {} } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}${path}`), {
      requestInit: { headers: { authorization: `Bearer ${user.apiKey}` } },
    }),
  );
  return client;
}

/** A tools/call run as a task: answers the created task. */
async function callAsTask(client: Client, name: string, args: Record<string, unknown>, ttl = 600_000) {
  const { task } = await client.request({ method: 'tools/call', params: { name, arguments: args, task: { ttl } } }, CreateTaskResultSchema);
  return task;
}

const createIssue = (title: string) => ({ tool: 'github_create_issue', args: { owner: 'octocat', repo: 'hello-world', title } });
const issueRequests = () => apis.requests.filter((r) => r.method === 'POST' && r.path === ISSUES_PATH).length;

async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const textOf = (result: unknown) => JSON.parse((result as { content: { text: string }[] }).content[0].text);

describe('tasks on /mcp', () => {
  it('declares the tasks capability and which tools may run as tasks (execution.taskSupport)', async () => {
    const client = await clientOf(alice);
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ requests: { tools: { call: {} } }, cancel: {}, list: {} });
    const support = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t.execution?.taskSupport]));
    expect(support).toMatchObject({
      execute_tools: 'optional',
      wait_for_connection: 'optional',
      wait_for_approval: 'optional',
      search_tools: 'forbidden',
      connect: 'forbidden',
    });
    // A quick tool cannot run as a task (-32601, as the spec says for "forbidden").
    await expect(callAsTask(client, 'search_tools', { query: 'issue' })).rejects.toMatchObject({ code: -32601 });
    await client.close();
  });

  it('execute_tools as a task: created before the call ends, working while it runs, its result the same body as a direct call', async () => {
    const client = await clientOf(alice);
    apis.behave.set(ISSUES_PATH, { delayMs: 1500, times: 1 });
    const task = await callAsTask(client, 'execute_tools', { executions: [createIssue(SECRET_TITLE)] });
    expect(task.taskId).toMatch(/^tsk_[A-Za-z0-9_-]{32}$/);
    expect(task).toMatchObject({ status: 'working', pollInterval: 1000, ttl: 600_000 });
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('working');

    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatchObject({ results: [{ result: { title: SECRET_TITLE } }] });
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({ taskId: task.taskId, status: 'completed' });
    // tasks/list names it (the caller's own tasks only).
    expect((await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(task.taskId);

    // The arguments and the answer are sealed at rest; the id is kept only as a hash and sealed.
    const { rows } = await stack.services.pool.query('SELECT * FROM mcp_tasks');
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(SECRET_TITLE);
    expect(dump).not.toContain(task.taskId);
    expect(stack.logs.text()).not.toContain(SECRET_TITLE);
    await client.close();
  });

  it('another user of the same tenant: their task id answers as unknown to get, result, cancel and list, and the task runs on', async () => {
    const owner = await clientOf(alice);
    const other = await clientOf(mallory);
    apis.behave.set(ISSUES_PATH, { delayMs: 1500, times: 1 });
    const task = await callAsTask(owner, 'execute_tools', { executions: [createIssue('not-mallorys')] });

    await expect(other.experimental.tasks.getTask(task.taskId)).rejects.toThrow(/not found/i);
    await expect(other.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).rejects.toThrow(/not found/i);
    await expect(other.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(/not found/i);
    expect((await other.experimental.tasks.listTasks()).tasks).toEqual([]);
    // A made-up id answers the same.
    await expect(owner.experimental.tasks.getTask('tsk_made-up-0000000000000000000000000')).rejects.toThrow(/not found/i);

    const result = await owner.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(textOf(result)).toMatchObject({ results: [{ result: { title: 'not-mallorys' } }] });
    await owner.close();
    await other.close();
  });

  it('tasks/cancel: calls not yet sent are not sent, calls already sent report their real outcome', async () => {
    const client = await clientOf(alice);
    apis.behave.set(ISSUES_PATH, { delayMs: 3000 });
    const before = issueRequests();
    // Ten writes on one account: eight go out at once, two wait for a turn.
    const titles = Array.from({ length: 10 }, (_, i) => `cancel-${i}`);
    const task = await callAsTask(client, 'execute_tools', { executions: titles.map(createIssue) });
    await until('eight calls at the service', () => issueRequests() - before >= 8);

    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    apis.behave.delete(ISSUES_PATH);
    const { results } = textOf(result);
    expect(results.slice(0, 8)).toEqual(titles.slice(0, 8).map((title) => ({ result: expect.objectContaining({ title }) })));
    expect(results.slice(8)).toEqual([
      { error: 'github__create_issue was not sent: the batch was cancelled first.' },
      { error: 'github__create_issue was not sent: the batch was cancelled first.' },
    ]);
    expect(issueRequests() - before).toBe(8);
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('cancelled');
    // An ended task cannot be cancelled again.
    await expect(client.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(/terminal status/);
    await client.close();
  });

  it('a task survives its worker being SIGKILLed and its server restarting: another server process answers it with the real result', async () => {
    const port = await freePort();
    const serverA = await spawn(spawnServerProcess(stack, port));
    await killProcess(worker);
    const before = issueRequests();
    // No worker runs: the task exists (its workflow does) though nothing has been sent yet.
    const clientA = await clientOf(alice, `http://127.0.0.1:${port}`);
    const task = await callAsTask(clientA, 'execute_tools', { executions: [createIssue('survivor')] });
    expect(task.status).toBe('working');
    await killProcess(serverA);

    worker = await spawn(spawnWorkerProcess(stack));
    await spawn(spawnServerProcess(stack, port));
    const clientB = await clientOf(alice, `http://127.0.0.1:${port}`);
    const result = await clientB.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(textOf(result)).toMatchObject({ results: [{ result: { title: 'survivor' } }] });
    expect(issueRequests() - before).toBe(1);
    expect((await clientB.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
    await clientB.close();
  }, 120_000);

  it('wait_for_connection as a task: working until consent in the browser finishes, then CONNECTED', async () => {
    const bob = await world.user({ tenantId: alice.user.tenantId });
    const client = await clientOf(bob);
    const connect = textOf(await client.callTool({ name: 'connect', arguments: { integration: 'github' } }));
    const task = await callAsTask(client, 'wait_for_connection', { connectionId: connect.connectionId });
    expect(task).toMatchObject({ status: 'working', pollInterval: 2000 });

    const page = await signedInPage(await world.browser(), bob);
    await page.goto(connect.url);
    await consentAs(page, auth, 'tasks-bob');
    await page.context().close();
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(textOf(result)).toEqual({ status: 'CONNECTED' });
    await client.close();
  });

  it('cancelling a wait_for_connection task expires the attempt, as a wait that runs out does; its result says so', async () => {
    const carol = await world.user({ tenantId: alice.user.tenantId });
    const client = await clientOf(carol);
    const connect = textOf(await client.callTool({ name: 'connect', arguments: { integration: 'github' } }));
    const task = await callAsTask(client, 'wait_for_connection', { connectionId: connect.connectionId });
    expect((await client.experimental.tasks.cancelTask(task.taskId)).status).toBe('cancelled');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
    expect(textOf(result).error).toMatch(/cancelled/);
    expect(
      textOf(await client.callTool({ name: 'wait_for_connection', arguments: { connectionId: connect.connectionId, timeoutSec: 1 } })),
    ).toEqual({
      status: 'EXPIRED',
    });
    await client.close();
  });

  it('bad arguments make a failed task whose result is the same error a direct call answers', async () => {
    const client = await clientOf(alice);
    const task = await callAsTask(client, 'wait_for_connection', { connectionId: 'con_unknown' });
    expect(task.status).toBe('failed');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toEqual({ error: 'Unknown connectionId' });
    await client.close();
  });
});

describe('more tasks', () => {
  it('tasks/result tells the waiting client of a status change on its open stream (notifications/tasks/status)', async () => {
    const client = await clientOf(alice);
    const statuses: string[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
      statuses.push(n.params.status);
    });
    apis.behave.set(ISSUES_PATH, { delayMs: 2000, times: 1 });
    const task = await callAsTask(client, 'execute_tools', { executions: [createIssue('notified')] });
    const waiting = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    // Once the result is being waited for, the task ends (here: cancelled while its call is out).
    await new Promise((r) => setTimeout(r, 300));
    const other = await clientOf(alice);
    await other.experimental.tasks.cancelTask(task.taskId);
    const result = await waiting;
    expect(statuses).toContain('cancelled');
    // The call was already out: it reports its real outcome.
    expect(textOf(result)).toMatchObject({ results: [{ result: { title: 'notified' } }] });
    await client.close();
    await other.close();
  });

  it('wait_for_approval as a task: working until a person approves, then APPROVED with the call run once', async () => {
    const dave = await world.githubUser('tasks-dave');
    await updateTenantSettings(stack.services.pool, dave.user.tenantId, { approvalTools: ['create_issue'] });
    const client = await clientOf(dave);
    const gated = textOf(await client.callTool({ name: 'execute_tools', arguments: { executions: [createIssue('approved-once')] } }));
    const { approvalId } = gated.results[0].error === 'APPROVAL_REQUIRED' ? gated.results[0] : { approvalId: undefined };
    expect(approvalId).toMatch(/^apr_/);
    const task = await callAsTask(client, 'wait_for_approval', { approvalId });
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('working');
    const before = issueRequests();
    const decided = await decide(
      stack.services,
      { ...dave.user, userId: dave.user.id, roles: dave.user.roles },
      approvalId,
      'APPROVED',
      '',
    );
    expect(decided.result).toBe('decided');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(textOf(result)).toMatchObject({ status: 'APPROVED', result: { result: { title: 'approved-once' } } });
    expect(issueRequests() - before).toBe(1);
    await client.close();
  });

  it('/mcp/agent: connections_execute runs as a task too', async () => {
    const client = await clientOf(alice, stack.baseUrl, '/mcp/agent');
    const support = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t.execution?.taskSupport]));
    expect(support).toMatchObject({ connections_execute: 'optional', wait_for_approval: 'optional', connections_search: 'forbidden' });
    const task = await callAsTask(client, 'connections_execute', {
      name: 'github__create_issue',
      arguments: { owner: 'octocat', repo: 'hello-world', title: 'agent-task' },
    });
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(textOf(result)).toMatchObject({ ok: true, result: { title: 'agent-task' } });
    await client.close();
  });

  it('TTL: a short one is raised to a minute, a task past its TTL answers as unknown, and pruning deletes it', async () => {
    const client = await clientOf(alice);
    const task = await callAsTask(client, 'execute_tools', { executions: [createIssue('short-lived')] }, 5);
    expect(task.ttl).toBe(60_000);
    await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    const { pool } = stack.services;
    await pool.query(
      `UPDATE mcp_tasks SET expires_at = now() - interval '1 second' WHERE created_at = (SELECT max(created_at) FROM mcp_tasks)`,
    );
    await expect(client.experimental.tasks.getTask(task.taskId)).rejects.toThrow(/not found/i);
    expect(await pruneRows(pool, 'mcp_tasks', new Date(), 100)).toBeGreaterThanOrEqual(1);
    await client.close();
  });

  it(`a user with ${MCP_TASKS_WORKING_PER_USER} unfinished tasks cannot start one more (no task, an error naming the bound)`, async () => {
    const erin = await world.user({ tenantId: alice.user.tenantId });
    const owner = { tenantId: erin.user.tenantId, userId: erin.user.id };
    for (let i = 0; i < MCP_TASKS_WORKING_PER_USER; i++) {
      await createMcpTask(stack.services.pool, stack.services.keyring, owner, {
        tool: 'wait_for_connection',
        arguments: { connectionId: `con_${i}` },
        ttlMs: 60_000,
        pollIntervalMs: 2000,
      });
    }
    const client = await clientOf(erin);
    await expect(callAsTask(client, 'execute_tools', { executions: [createIssue('one-too-many')] })).rejects.toThrow(
      /Too many tasks: at most 100 unfinished and 1000 kept per user/,
    );
    await client.close();
  });
});

describe('bounds', () => {
  it(`at most ${RESULT_WAITS_PER_USER} tasks/result requests of one user wait at once; one more is refused, and the waits end with the task`, async () => {
    const frank = await world.user({ tenantId: alice.user.tenantId });
    const client = await clientOf(frank);
    const connect = textOf(await client.callTool({ name: 'connect', arguments: { integration: 'github' } }));
    const task = await callAsTask(client, 'wait_for_connection', { connectionId: connect.connectionId });
    const waits = Array.from({ length: RESULT_WAITS_PER_USER }, () =>
      client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema).then(textOf),
    );
    // Every one of them waiting at the server before one more is sent (a busy machine may take a while).
    const franksCaller = { tenantId: frank.user.tenantId, userId: frank.user.id, roles: frank.user.roles };
    await expect.poll(() => waitingTaskResults(franksCaller), { timeout: 30_000 }).toBe(RESULT_WAITS_PER_USER);
    await expect(client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).rejects.toThrow(
      new RegExp(`At most ${RESULT_WAITS_PER_USER} tasks/result requests may wait at once`),
    );
    // Another user is not held back by frank's waits.
    const other = await clientOf(alice);
    const own = await callAsTask(other, 'execute_tools', { executions: [createIssue('not-held-back')] });
    expect(textOf(await other.experimental.tasks.getTaskResult(own.taskId, CallToolResultSchema))).toMatchObject({
      results: [{ result: { title: 'not-held-back' } }],
    });
    await client.experimental.tasks.cancelTask(task.taskId);
    for (const answer of await Promise.all(waits)) expect(answer.error).toMatch(/cancelled/);
    await client.close();
    await other.close();
  });
});

/** A Temporal client whose workflow starts wait at a gate: the moment between a task's row and its batch, held open. */
function gatedStarts(client: TemporalClient) {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  let reached: () => void = () => {};
  const waiting = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const start: TemporalClient['workflow']['start'] = async (...args) => {
    reached();
    await opened;
    return client.workflow.start(...args);
  };
  const workflow = Object.create(client.workflow, { start: { value: start } });
  return { temporal: Object.create(client, { workflow: { value: workflow } }) as TemporalClient, waiting, open };
}

describe('attacks', () => {
  it('a task listed before its batch is recorded: reading it is no answer yet, and cancelling it then stops the batch once it starts', async () => {
    const gate = gatedStarts(stack.services.temporal);
    const tasks = durableTasks({ ...stack.services, temporal: gate.temporal });
    const caller = { tenantId: alice.user.tenantId, userId: alice.user.id, roles: alice.user.roles };
    apis.behave.set(ISSUES_PATH, { delayMs: 3000 });
    const before = issueRequests();
    const titles = Array.from({ length: 10 }, (_, i) => `early-cancel-${i}`);
    const creating = tasks.create(caller, executeTools, { executions: titles.map(createIssue) });
    await gate.waiting;

    // Another request of the same user sees the task in tasks/list while its batch is being started.
    const client = await clientOf(alice);
    const [listed] = (await client.experimental.tasks.listTasks()).tasks;
    expect(listed.status).toBe('working');
    // Reading it now finds no batch yet: that is not its answer (it would be a false "no longer kept" for good).
    expect((await client.experimental.tasks.getTask(listed.taskId)).status).toBe('working');
    expect((await client.experimental.tasks.cancelTask(listed.taskId)).status).toBe('cancelled');

    gate.open();
    expect((await creating).taskId).toBe(listed.taskId);
    const { results } = textOf(await client.experimental.tasks.getTaskResult(listed.taskId, CallToolResultSchema));
    apis.behave.delete(ISSUES_PATH);
    expect(results.slice(8)).toEqual([
      { error: 'github__create_issue was not sent: the batch was cancelled first.' },
      { error: 'github__create_issue was not sent: the batch was cancelled first.' },
    ]);
    expect(issueRequests() - before).toBe(8);
    await client.close();
  });

  it("a task that joins the batch of the caller's own direct call (the same requestId) does not cancel it: the direct call's results stand", async () => {
    const client = await clientOf(alice);
    apis.behave.set(ISSUES_PATH, { delayMs: 2000 });
    const before = issueRequests();
    const args = { executions: [createIssue('shared-0'), createIssue('shared-1')], requestId: 'shared-with-a-task' };
    const direct = client.callTool({ name: 'execute_tools', arguments: args });
    await until('both calls at the service', () => issueRequests() - before >= 2);
    const task = await callAsTask(client, 'execute_tools', args);
    expect((await client.experimental.tasks.cancelTask(task.taskId)).status).toBe('cancelled');

    const answer = textOf(await direct);
    apis.behave.delete(ISSUES_PATH);
    expect(answer.results).toEqual([
      { result: expect.objectContaining({ title: 'shared-0' }) },
      { result: expect.objectContaining({ title: 'shared-1' }) },
    ]);
    // The task answers the same recorded results, and nothing ran twice.
    expect(textOf(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema))).toEqual(answer);
    expect(issueRequests() - before).toBe(2);
    await client.close();
  });

  it('a row whose sealed arguments were copied from another task, or whose tool was changed, does not open; the client learns nothing internal', async () => {
    const henry = await world.user({ tenantId: alice.user.tenantId });
    const client = await clientOf(henry);
    const connect = textOf(await client.callTool({ name: 'connect', arguments: { integration: 'github' } }));
    const [source, copied, retooled] = [
      await callAsTask(client, 'wait_for_connection', { connectionId: connect.connectionId }),
      await callAsTask(client, 'wait_for_connection', { connectionId: connect.connectionId }),
      await callAsTask(client, 'wait_for_connection', { connectionId: connect.connectionId }),
    ];
    const { pool } = stack.services;
    await pool.query(
      'UPDATE mcp_tasks SET sealed_arguments = (SELECT sealed_arguments FROM mcp_tasks WHERE id_hash = $1) WHERE id_hash = $2',
      [mcpTaskIdHash(source.taskId), mcpTaskIdHash(copied.taskId)],
    );
    await pool.query(`UPDATE mcp_tasks SET tool = 'execute_tools' WHERE id_hash = $1`, [mcpTaskIdHash(retooled.taskId)]);
    for (const task of [copied, retooled]) {
      const failure = await client.experimental.tasks.getTask(task.taskId).catch((err) => err);
      expect(failure).toMatchObject({ code: -32603, message: expect.stringContaining('Internal error; the server logged the details') });
      expect(failure.message).not.toMatch(/authenticate|decrypt|Invalid arguments/i);
    }
    expect(stack.logs.text()).toContain('MCP task request failed');
    // The untouched task reads as before.
    expect((await client.experimental.tasks.getTask(source.taskId)).status).toBe('working');
    await pool.query('DELETE FROM mcp_tasks WHERE id_hash = ANY($1)', [[mcpTaskIdHash(copied.taskId), mcpTaskIdHash(retooled.taskId)]]);
    await client.close();
  });

  it("a call the tenant gates for approval is gated as a task too (nothing sent), and another user's task cannot wait on that approval", async () => {
    const jack = await world.githubUser('tasks-jack');
    await updateTenantSettings(stack.services.pool, jack.user.tenantId, { approvalTools: ['create_issue'] });
    const client = await clientOf(jack);
    const before = issueRequests();
    const task = await callAsTask(client, 'execute_tools', { executions: [createIssue('gated-as-a-task')] });
    const [entry] = textOf(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).results;
    expect(entry).toMatchObject({ error: 'APPROVAL_REQUIRED', approvalId: expect.stringMatching(/^apr_/) });
    expect(issueRequests()).toBe(before);

    const colleague = await clientOf(await world.user({ tenantId: jack.user.tenantId }));
    const theirs = await callAsTask(colleague, 'wait_for_approval', { approvalId: entry.approvalId });
    expect(theirs.status).toBe('failed');
    expect(textOf(await colleague.experimental.tasks.getTaskResult(theirs.taskId, CallToolResultSchema))).toEqual({
      error: 'Unknown approvalId',
    });
    // The approval is untouched: its requester's own wait still finds it pending.
    expect(
      textOf(await client.callTool({ name: 'wait_for_approval', arguments: { approvalId: entry.approvalId, timeoutSec: 1 } })),
    ).toEqual({
      status: 'PENDING',
    });
    await client.close();
    await colleague.close();
  });

  it(`the bound of ${MCP_TASKS_WORKING_PER_USER} unfinished tasks holds under concurrent creates`, async () => {
    const ivy = await world.user({ tenantId: alice.user.tenantId });
    const owner = { tenantId: ivy.user.tenantId, userId: ivy.user.id };
    const made = await Promise.all(
      Array.from({ length: MCP_TASKS_WORKING_PER_USER + 20 }, (_, i) =>
        createMcpTask(stack.services.pool, stack.services.keyring, owner, {
          tool: 'wait_for_connection',
          arguments: { connectionId: `con_${i}` },
          ttlMs: 60_000,
          pollIntervalMs: 2000,
        }),
      ),
    );
    expect(made.filter(Boolean)).toHaveLength(MCP_TASKS_WORKING_PER_USER);
  });
});

describe('keys', () => {
  it('`keys reseal` moves a task (its sealed id, arguments and answer) to the new key; it still lists and answers', async () => {
    const client = await clientOf(alice);
    const task = await callAsTask(client, 'execute_tools', { executions: [createIssue('resealed')] });
    const answer = textOf(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema));
    const { pool, config } = stack.services;
    const keys = new Map([...config.ENCRYPTION_KEYS!, ['tasks2', randomBytes(32)]]);
    const rotated = new Keyring(keys, 'tasks2');
    expect(await resealMcpTasks(pool, rotated)).toBeGreaterThanOrEqual(1);
    expect(await resealMcpTasks(pool, rotated)).toBe(0);
    const tasks = durableTasks({ ...stack.services, keyring: rotated });
    const caller = { tenantId: alice.user.tenantId, userId: alice.user.id, roles: alice.user.roles };
    expect((await tasks.list(caller)).tasks.map((t) => t.taskId)).toContain(task.taskId);
    expect(await tasks.outcome(caller, task.taskId)).toEqual({ body: answer, isError: false });
    // Back to the stack's own key, which the server holds alone.
    expect(await resealMcpTasks(pool, new Keyring(keys, stack.services.keyring.activeKeyId))).toBeGreaterThanOrEqual(1);
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
    await client.close();
  });
});

describe('replay', () => {
  it("this run's tool batches (a cancelled one among them) replay against the current code and carry no secret", async () => {
    const histories = (await rawHistoriesOf(stack.services.temporal, stack.env.TEMPORAL_TASK_QUEUE)).filter((h) =>
      h.workflowId.startsWith('tool-batch-'),
    );
    expect(histories.length).toBeGreaterThanOrEqual(4);
    const verdicts = await replayHistories(histories, {
      keyring: stack.services.keyring,
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
    for (const { history } of histories) expect(historyText(history)).not.toContain(SECRET_TITLE);
    // RECORD_HISTORIES=1 keeps the cancelled batch as a fixture (test/integration/operators.test.ts replays every fixture).
    if (process.env.RECORD_HISTORIES === '1') {
      const { writeFileSync } = await import('node:fs');
      const cancelled = histories.find((h) => h.history.events?.some((e) => e.workflowExecutionCancelRequestedEventAttributes));
      if (cancelled) {
        writeFileSync(
          new URL('../fixtures/histories/tool-batch-cancelled.json', import.meta.url).pathname,
          historyToFixture(cancelled.workflowId, cancelled.history),
        );
      }
    }
  });
});
