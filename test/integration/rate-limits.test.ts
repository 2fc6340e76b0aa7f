import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountSlots, SLOT_LEASE_MS } from '../../features/execution/account-slots.js';
import { DEFAULT_RETRY_AFTER_SEC, MAX_RETRY_AFTER_SEC } from '../../providers/sdk/rate-limit.js';
import type { ExecuteOptions, ToolCallRequest, ToolOutcome } from '../../surfaces/workflow-sdk/index.js';
import { type AgentWorker, startAgentWorker } from '../support/agent-worker.js';
import { type FakeApis, startFakeApis } from '../support/fake-apis.js';
import { connectGithubAccount } from '../support/github-account.js';
import { createTestUser, type Stack, spawnWorkerProcess, startStack, type TestUser } from '../support/harness.js';
import { startAuthServer, type TestAuthServer } from '../support/oauth-server.js';
import { freePort } from '../support/ports.js';

const github = {
  clientId: 'gh-limits',
  clientSecret: 'gh-limits-secret-0123456789',
  redirectUris: ['http://127.0.0.1/cb'],
};
const MAX_PER_ACCOUNT = 3;

let auth: TestAuthServer;
let apis: FakeApis;
let stack: Stack;

beforeAll(async () => {
  auth = await startAuthServer([github]);
  apis = await startFakeApis((token) => auth.subjectOf(token));
  stack = await startStack({
    env: {
      PORT: String(await freePort()),
      ...auth.envFor('GITHUB', github),
      GITHUB_API_BASE_URL: `${apis.baseUrl}/github`,
      CONNECTIONS_TOOL_TIMEOUT_MS: '5000',
      CONNECTIONS_ACCOUNT_MAX_CONCURRENCY: String(MAX_PER_ACCOUNT),
    },
  });
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await apis?.close();
  await auth?.close();
});

/** A user with a GitHub account of their own. */
async function githubUser(login: string) {
  const user = await createTestUser(stack);
  const { account, tokens } = await connectGithubAccount(stack, auth, github.clientId, user, login);
  return { user, account, tokens };
}

const execute = (user: TestUser, name: string, args: Record<string, unknown> = {}) =>
  user.call('connections_execute', { name, arguments: args }).then((r) => r.body);

const limitNext = (path: string, status: number, headers: Record<string, string>, times = 1, message = 'API rate limit exceeded') =>
  apis.behave.set(path, { status, headers, times, body: { message } });

describe('a provider that says "slow down" answers rate_limited with retryAfterSec', () => {
  let user: TestUser;
  let accessToken: string;
  beforeAll(async () => {
    const made = await githubUser('rl-gh');
    user = made.user;
    accessToken = made.tokens.accessToken;
  });

  it('429 with Retry-After in seconds: rate_limited on connections_execute, RATE_LIMITED on execute_tools, audited', async () => {
    limitNext('/github/user/repos', 429, { 'retry-after': '17' });
    expect(await execute(user, 'github__list_repos')).toEqual({
      ok: false,
      error: {
        code: 'rate_limited',
        status: 429,
        integration: 'github',
        retryAfterSec: 17,
        message: 'github is limiting calls (HTTP 429); try again in 17 s: {"message":"API rate limit exceeded"}',
      },
    });
    limitNext('/github/user/repos', 429, { 'retry-after': '17' });
    const meta = await user.call('execute_tools', {
      executions: [{ tool: 'github_list_repos' }, { tool: 'github_get_authenticated_user' }],
    });
    expect(meta.body.results[0]).toEqual({
      error: 'RATE_LIMITED',
      integration: 'github',
      retryAfterSec: 17,
      message: expect.stringContaining('try again in 17 s'),
    });
    expect(meta.body.results[1]).toEqual({ result: expect.objectContaining({ login: 'rl-gh' }) });
    const { rows } = await stack.services.pool.query(
      `SELECT error_code FROM audit_log WHERE actor_user_id = $1 AND tool = 'github__list_repos' ORDER BY id`,
      [user.user.id],
    );
    expect(rows.map((r) => r.error_code)).toEqual(['rate_limited', 'rate_limited']);
  });

  it('429 with Retry-After as an HTTP-date', async () => {
    limitNext('/github/user/repos', 429, { 'retry-after': new Date(Date.now() + 120_000).toUTCString() });
    const { error } = await execute(user, 'github__list_repos');
    expect(error.code).toBe('rate_limited');
    expect(error.retryAfterSec).toBeGreaterThanOrEqual(117);
    expect(error.retryAfterSec).toBeLessThanOrEqual(121);
  });

  it("GitHub's primary limit: 403 with x-ratelimit-remaining 0 and x-ratelimit-reset (epoch seconds)", async () => {
    const reset = Math.floor(Date.now() / 1000) + 300;
    limitNext('/github/user/repos', 403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset), 'x-ratelimit-limit': '5000' });
    const { error } = await execute(user, 'github__list_repos');
    expect(error).toMatchObject({ code: 'rate_limited', status: 403, integration: 'github' });
    expect(error.retryAfterSec).toBeGreaterThanOrEqual(297);
    expect(error.retryAfterSec).toBeLessThanOrEqual(301);
    // A 403 without rate-limit headers stays what it was.
    limitNext('/github/user/repos', 403, {}, 1, 'Resource not accessible by integration');
    expect(await execute(user, 'github__list_repos')).toMatchObject({ ok: false, error: { code: 'tool_failed', status: 403 } });
  });

  it('hostile headers: garbage, negative and absurd values clamp or fall back; a plain 503 stays tool_failed', async () => {
    const cases: [Record<string, string>, number][] = [
      [{ 'retry-after': '-30' }, DEFAULT_RETRY_AFTER_SEC],
      [{ 'retry-after': 'banana' }, DEFAULT_RETRY_AFTER_SEC],
      [{ 'retry-after': '1e99' }, DEFAULT_RETRY_AFTER_SEC],
      [{ 'retry-after': '999999999999' }, MAX_RETRY_AFTER_SEC],
      [{ 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' }, MAX_RETRY_AFTER_SEC],
      [{ 'retry-after': `Mon, 01 Jan 2001 00:00:00 GMT` }, 0],
      [{ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '-99999999999999' }, DEFAULT_RETRY_AFTER_SEC],
    ];
    for (const [headers, expected] of cases) {
      limitNext('/github/user/repos', 429, headers);
      const outcome = await execute(user, 'github__list_repos');
      expect(outcome.error, JSON.stringify(headers)).toMatchObject({ code: 'rate_limited', retryAfterSec: expected });
    }
    limitNext('/github/user/repos', 503, { 'retry-after': 'later' });
    expect(await execute(user, 'github__list_repos')).toMatchObject({ ok: false, error: { code: 'tool_failed', status: 503 } });
    limitNext('/github/user/repos', 503, { 'retry-after': '5' });
    expect(await execute(user, 'github__list_repos')).toMatchObject({ ok: false, error: { code: 'rate_limited', retryAfterSec: 5 } });
  });

  it("redacts the caller's token in the rate limit's text and cuts it like other provider errors", async () => {
    limitNext('/github/user/repos', 429, { 'retry-after': '3' }, 1, `token ${accessToken} is over its limit ${'x'.repeat(500)}`);
    const { error } = await execute(user, 'github__list_repos');
    expect(error.code).toBe('rate_limited');
    expect(error.message).toContain('[redacted]');
    expect(error.message).not.toContain(accessToken);
    expect(error.message.length).toBeLessThanOrEqual(300 + 'github is limiting calls (HTTP 429); try again in 3 s: '.length);
  });

  it('MCP: the same answers on /mcp/agent (connections_execute) and /mcp (execute_tools)', async () => {
    const connect = async (path: string) => {
      const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}${path}`), {
          requestInit: { headers: { authorization: `Bearer ${user.apiKey}` } },
        }),
      );
      return client;
    };
    const bodyOf = (result: Awaited<ReturnType<Client['callTool']>>) => JSON.parse((result.content as { text: string }[])[0].text);
    const agent = await connect('/mcp/agent');
    const meta = await connect('/mcp');
    try {
      limitNext('/github/user/repos', 429, { 'retry-after': '9' });
      const one = await agent.callTool({ name: 'connections_execute', arguments: { name: 'github__list_repos' } });
      expect(bodyOf(one)).toMatchObject({ ok: false, error: { code: 'rate_limited', retryAfterSec: 9, status: 429 } });
      limitNext('/github/user/repos', 429, { 'retry-after': '9' });
      const batch = await meta.callTool({ name: 'execute_tools', arguments: { executions: [{ tool: 'github_list_repos' }] } });
      expect(bodyOf(batch).results[0]).toMatchObject({ error: 'RATE_LIMITED', integration: 'github', retryAfterSec: 9 });
    } finally {
      await agent.close();
      await meta.close();
    }
  });
});

describe('agent workflows (switchboard/workflow) wait out a rate-limited read durably', () => {
  let agents: AgentWorker;
  let user: TestUser;
  let login: string;

  beforeAll(async () => {
    agents = await startAgentWorker(stack);
    login = 'rl-agent';
    user = (await githubUser(login)).user;
  }, 120_000);

  afterAll(async () => {
    await agents?.stop();
  });

  async function runAgent(call: ToolCallRequest, options?: ExecuteOptions) {
    const {
      result: outcome,
      timers,
      elapsedMs,
    } = await agents.run<ToolOutcome>('executeOnce', { tenantId: user.user.tenantId, userId: user.user.id }, { call, options });
    return { outcome, timers, elapsedMs };
  }
  const requestsTo = (method: string, path: string) => apis.requests.filter((r) => r.method === method && r.path === path).length;

  it('a read sleeps on a workflow timer until the reset and then succeeds', async () => {
    const before = requestsTo('GET', '/github/user/repos');
    limitNext('/github/user/repos', 429, { 'retry-after': '2' });
    const { outcome, timers, elapsedMs } = await runAgent({ tool: 'github__list_repos', args: { perPage: 2 } });
    expect(outcome).toMatchObject({ ok: true, result: [expect.objectContaining({ full_name: `${login}/repo-0` }), expect.any(Object)] });
    expect(timers).toBe(1);
    expect(elapsedMs).toBeGreaterThanOrEqual(2000);
    expect(requestsTo('GET', '/github/user/repos') - before).toBe(2);
  }, 60_000);

  it('gives the answer back after rateLimitRetries waits, and never starts a wait past maxRateLimitWaitSec', async () => {
    const before = requestsTo('GET', '/github/user/repos');
    limitNext('/github/user/repos', 429, { 'retry-after': '1' }, 3);
    const bounded = await runAgent({ tool: 'github__list_repos', args: {} }, { rateLimitRetries: 1 });
    expect(bounded.outcome).toMatchObject({ ok: false, error: { code: 'rate_limited', retryAfterSec: 1 } });
    expect(bounded.timers).toBe(1);
    expect(requestsTo('GET', '/github/user/repos') - before).toBe(2);
    apis.behave.delete('/github/user/repos');

    limitNext('/github/user/repos', 429, { 'retry-after': '30' });
    const tooLong = await runAgent({ tool: 'github__list_repos', args: {} }, { maxRateLimitWaitSec: 10 });
    expect(tooLong.outcome).toMatchObject({ ok: false, error: { code: 'rate_limited', retryAfterSec: 30 } });
    expect(tooLong.timers).toBe(0);
  }, 60_000);

  it('a write is not repeated by itself; with retryWrites it is, after the reset', async () => {
    const path = '/github/repos/octocat/hello-world/issues';
    const call = { tool: 'github__create_issue', args: { owner: 'octocat', repo: 'hello-world', title: 'Rate-limited write' } };
    const before = requestsTo('POST', path);
    limitNext(path, 429, { 'retry-after': '1' });
    const plain = await runAgent(call);
    expect(plain.outcome).toMatchObject({ ok: false, error: { code: 'rate_limited', retryAfterSec: 1 } });
    expect(plain.timers).toBe(0);
    expect(requestsTo('POST', path) - before).toBe(1);

    limitNext(path, 429, { 'retry-after': '1' });
    const optedIn = await runAgent(call, { retryWrites: true });
    expect(optedIn.outcome).toMatchObject({ ok: true, result: expect.objectContaining({ title: 'Rate-limited write' }) });
    expect(optedIn.timers).toBe(1);
    expect(requestsTo('POST', path) - before).toBe(3);
  }, 60_000);
});

describe(`per-account concurrency (CONNECTIONS_ACCOUNT_MAX_CONCURRENCY=${MAX_PER_ACCOUNT})`, () => {
  it('20 concurrent calls on one account: never more than 3 at the service at once, all succeed', async () => {
    const { user, account } = await githubUser('rl-busy');
    apis.behave.set('/github/user', { delayMs: 250 });
    apis.maxInFlight = 0;
    try {
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => execute(user, 'github__get_authenticated_user')));
      expect(outcomes.filter((o) => o.ok)).toHaveLength(20);
      expect(apis.maxInFlight).toBeLessThanOrEqual(MAX_PER_ACCOUNT);
      expect(apis.maxInFlight).toBeGreaterThan(1);
    } finally {
      apis.behave.delete('/github/user');
    }
    expect(await queued(account.id)).toBe(0);
  }, 60_000);

  /** Tickets (held or waiting) of one account. */
  const queued = async (accountId: string): Promise<number> =>
    (await stack.services.pool.query('SELECT count(*)::int AS n FROM account_call_slots WHERE account_id = $1', [accountId])).rows[0].n;

  /** Slots held by a worker that was SIGKILLed: rows nobody renews, lapsing at `lapseSec`. */
  const deadHolders = (account: { tenantId: string; id: string }, lapseSec: number) =>
    stack.services.pool.query(
      `INSERT INTO account_call_slots (tenant_id, account_id, granted, lease_until)
       SELECT $1, $2, true, now() + make_interval(secs => $3) FROM generate_series(1, $4)`,
      [account.tenantId, account.id, lapseSec, MAX_PER_ACCOUNT],
    );

  it("a dead worker's slots come back when their lease lapses; a call that never gets one answers timeout", async () => {
    const { user, account } = await githubUser('rl-dead');
    await deadHolders(account, 2);
    const started = Date.now();
    expect(await execute(user, 'github__get_authenticated_user')).toMatchObject({ ok: true, result: { login: 'rl-dead' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);

    await deadHolders(account, 60);
    const requests = apis.requests.length;
    const timedOut = await execute(user, 'github__get_authenticated_user');
    expect(timedOut).toMatchObject({ ok: false, error: { code: 'timeout', message: expect.stringContaining('did not get a turn') } });
    expect(apis.requests.length).toBe(requests);
    // The call left the queue; only the dead holders' rows remain.
    expect(await queued(account.id)).toBe(MAX_PER_ACCOUNT);
    await stack.services.pool.query('DELETE FROM account_call_slots WHERE account_id = $1', [account.id]);
  }, 60_000);

  it('a worker process SIGKILLed while it holds every slot of an account: its slots come back within a lease', async () => {
    const { user, account } = await githubUser('rl-killed');
    await stack.stopWorker();
    const child = await spawnWorkerProcess(stack);
    try {
      const before = apis.requests.filter((r) => r.path === '/github/user').length;
      apis.behave.set('/github/user', { delayMs: 60_000, times: MAX_PER_ACCOUNT });
      // Three calls take the three slots in the child and hang at the service.
      const hanging = Array.from({ length: MAX_PER_ACCOUNT }, () => execute(user, 'github__get_authenticated_user').catch(() => undefined));
      await expect
        .poll(() => apis.requests.filter((r) => r.path === '/github/user').length - before, { timeout: 30_000 })
        .toBe(MAX_PER_ACCOUNT);
      expect(await queued(account.id)).toBe(MAX_PER_ACCOUNT);
      child.kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
      await stack.startWorker();
      // Nobody renews the dead worker's slots: calls wait (each answering timeout after its 5 s deadline)
      // until the slots' lease lapses, then one gets through.
      const killedAt = Date.now();
      let outcome = await execute(user, 'github__get_authenticated_user');
      while (!outcome.ok && outcome.error.code === 'timeout' && Date.now() - killedAt < SLOT_LEASE_MS + 15_000) {
        expect(outcome.error.message).toContain('did not get a turn');
        outcome = await execute(user, 'github__get_authenticated_user');
      }
      expect(outcome).toMatchObject({ ok: true, result: { login: 'rl-killed' } });
      expect(Date.now() - killedAt).toBeLessThan(SLOT_LEASE_MS + 10_000);
      await Promise.all(hanging);
      await expect.poll(() => queued(account.id), { timeout: 30_000 }).toBe(0);
    } finally {
      child.kill('SIGKILL');
      if (!stack.worker) await stack.startWorker();
    }
  }, 120_000);

  it('waiting calls get their turn first come, first served', async () => {
    const slots = new AccountSlots(stack.services.pool, 1);
    const account = { tenantId: 'ten_fifo', id: `acct_${randomUUID()}` };
    const never = new AbortController().signal;
    const first = await slots.acquire(account, never);
    const order: number[] = [];
    const waiters: Promise<void>[] = [];
    for (let i = 0; i < 4; i++) {
      waiters.push(
        slots.acquire(account, never).then(async (release) => {
          order.push(i);
          await new Promise((r) => setTimeout(r, 20));
          await release();
        }),
      );
      // Each joins the queue before the next.
      await expect.poll(() => queued(account.id)).toBe(i + 2);
    }
    await first();
    await Promise.all(waiters);
    expect(order).toEqual([0, 1, 2, 3]);
  });
});
