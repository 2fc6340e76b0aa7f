import { beforeAll, describe, expect, it } from 'vitest';
import { createExecuteActivities } from '../../features/execution/execute-tool.js';
import { claimToolCall, recordToolCall } from '../../features/execution/store/audit.js';
import { createTestUser, startWorld, type TestUser } from '../support/harness.js';

const world = await startWorld({
  clients: { github: { rotateRefreshTokens: true } },
  apis: true,
  env: {
    // Room for 100 calls racing one refresh on a loaded machine; the slow call below outlasts it.
    CONNECTIONS_TOOL_TIMEOUT_MS: '5000',
    CONNECTIONS_TOOL_RESULT_MAX_BYTES: '4096',
    // The refresh tests need 100 calls on one account in flight at once, all racing to refresh
    // (the default lets 8 through; rate-limits.test.ts tests that queue).
    CONNECTIONS_ACCOUNT_MAX_CONCURRENCY: '100',
  },
});
const { auth, apis, stack } = world;
const alice = await world.user({ email: 'alice-exec@example.com' });
const connectGithub = world.connectGithub;

const execute = (user: TestUser, name: string, args: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  user.call('connections_execute', { name, arguments: args, ...extra }).then((r) => r.body);

describe('search', () => {
  it('search_tools ranks by keywords deterministically and answers {name, description, integration}', async () => {
    const first = await alice.call('search_tools', { query: 'github repos' });
    expect(first.status).toBe(200);
    expect(first.body.tools[0]).toEqual({ name: 'github_list_repos', description: expect.any(String), integration: 'github' });
    expect((await alice.call('search_tools', { query: 'github repos' })).body).toEqual(first.body);
    expect((await alice.call('search_tools', { query: 'list PRs' })).body.tools[0].name).toBe('github_list_pull_requests');
  });

  it("SEARCH_DEBUG=1 logs each result's score parts for the operator; the answer keeps its fields", async () => {
    const query = 'file a github issue about the debug flag';
    const logged = (on: typeof stack) =>
      on.logs
        .text()
        .split('\n')
        .filter((line) => line.includes('search score parts') && line.includes(query));
    await alice.call('search_tools', { query, limit: 3 });
    expect(logged(stack)).toEqual([]);
    // The operator sets the variable on a Switchboard (in every one of its server processes, when it runs as several).
    const debugging = await world.startStack({ env: { SEARCH_DEBUG: '1' }, worker: false });
    const { body } = await (await createTestUser(debugging)).call('search_tools', { query, limit: 3 });
    expect(body.tools[0]).toEqual({ name: 'github_create_issue', description: expect.any(String), integration: 'github' });
    // A server process's log line arrives through its stdout, a moment after its answer may.
    await expect.poll(() => logged(debugging).length).toBeGreaterThan(0);
    const [line] = logged(debugging);
    expect(JSON.parse(line).results[0]).toMatchObject({
      name: 'github__create_issue',
      score: expect.any(Number),
      text: expect.any(Number),
      operation: expect.any(Number),
      integration: expect.any(Number),
      connected: expect.any(Boolean),
    });
  });

  it('validates query and limit', async () => {
    expect((await alice.call('search_tools', { query: '' })).status).toBe(400);
    expect((await alice.call('search_tools', { query: 'x'.repeat(201) })).status).toBe(400);
    expect((await alice.call('search_tools', { query: 'issue', limit: 21 })).status).toBe(400);
    expect((await alice.call('search_tools', { query: 'issue' })).body.tools.length).toBeLessThanOrEqual(8);
    const bad = await alice.call('connections_search', { query: 'issue', limit: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      ok: false,
      error: { code: 'invalid_arguments', issues: [expect.objectContaining({ path: ['limit'] })] },
    });
  });

  it('connections_search answers the full result shape with a hint when not connected', async () => {
    const bob = await createTestUser(stack);
    const { body } = await bob.call('connections_search', { query: 'create issue', provider: 'github' });
    expect(body.ok).toBe(true);
    const hit = body.results.find((r: { name: string }) => r.name === 'github__create_issue');
    expect(hit).toMatchObject({
      name: 'github__create_issue',
      access: 'write',
      provider: 'github',
      connected: false,
      accounts: [],
      parameters: { type: 'object', properties: expect.objectContaining({ owner: expect.any(Object) }) },
      hint: expect.stringContaining('connect'),
    });
    expect(hit.status).toBeUndefined();
    expect(body.results.every((r: { provider: string }) => r.provider === 'github')).toBe(true);
  });
});

describe('get_tool_schema', () => {
  it('converts the zod schema to JSON Schema; an unknown tool is "Tool not found"', async () => {
    const { body } = await alice.call('get_tool_schema', { tool: 'github_list_repos' });
    expect(body.schema.type).toBe('object');
    expect(body.schema.properties.perPage).toMatchObject({ type: 'integer', default: 30, maximum: 100 });
    expect(body.schema.$schema).toBeUndefined();
    expect(await alice.call('get_tool_schema', { tool: 'github_nope' })).toEqual({ status: 404, body: { error: 'Tool not found' } });
  });
});

describe('execution', () => {
  let carol: TestUser;
  beforeAll(async () => {
    carol = await createTestUser(stack, { email: 'carol-exec@example.com' });
    await connectGithub(carol, 'carol-gh');
  });

  it('execute_tools: {result} entries, index-aligned, one failure never aborts the others', async () => {
    const { status, body } = await carol.call('execute_tools', {
      executions: [
        { tool: 'github_list_repos', args: { perPage: 2 } },
        { tool: 'github_list_repos', args: { perPage: 'two' } },
        { tool: 'slack_send_message', args: { channel: 'C1', text: 'hi' } },
        { tool: 'github_get_authenticated_user' },
        { tool: 'nope_tool' },
      ],
    });
    expect(status).toBe(200);
    expect(body.results).toHaveLength(5);
    expect(body.results[0]).toEqual({ result: [expect.objectContaining({ full_name: 'carol-gh/repo-0' }), expect.any(Object)] });
    expect(body.results[1].error).toMatch(/^Invalid arguments for github_list_repos: perPage: /);
    expect(body.results[2]).toEqual({
      error: 'NOT_CONNECTED',
      integration: 'slack',
      message: "slack not connected. Use connect('slack') to connect.",
    });
    expect(body.results[3]).toEqual({ result: expect.objectContaining({ login: 'carol-gh' }) });
    expect(body.results[4]).toEqual({ error: 'Tool not found' });
  });

  it('connections_execute answers {ok: true, result}', async () => {
    expect(await execute(carol, 'github__get_authenticated_user')).toEqual({
      ok: true,
      result: expect.objectContaining({ login: 'carol-gh' }),
    });
  });

  it('answers every error code', async () => {
    expect(await execute(carol, 'github__nope')).toMatchObject({ ok: false, error: { code: 'not_found' } });
    const invalid = await execute(carol, 'github__list_repos', { perPage: 1000 });
    expect(invalid).toMatchObject({
      ok: false,
      error: { code: 'invalid_arguments', issues: [expect.objectContaining({ path: ['perPage'] })] },
    });
    expect(await execute(alice, 'github__list_repos')).toEqual({
      ok: false,
      error: { code: 'not_connected', message: 'You are not connected to github.', integration: 'github' },
    });

    apis.behave.set('/github/user/repos', { status: 500, body: { message: 'boom' }, times: 1 });
    expect(await execute(carol, 'github__list_repos')).toMatchObject({ ok: false, error: { code: 'tool_failed', status: 500 } });

    apis.behave.set('/github/user', { delayMs: 12_000, times: 1 });
    const abandoned = apis.abandoned;
    const started = Date.now();
    expect(await execute(carol, 'github__get_authenticated_user')).toMatchObject({ ok: false, error: { code: 'timeout' } });
    expect(Date.now() - started).toBeLessThan(11_000);
    // The deadline's AbortSignal really closed the request to the service.
    await expect.poll(() => apis.abandoned).toBe(abandoned + 1);
  });

  it('policy: provider_disabled, tool settings and connection roles (forbidden), for search and execute alike', async () => {
    const { pool } = stack.services;
    const dave = await createTestUser(stack);
    await connectGithub(dave, 'dave-gh');
    const setSettings = (settings: object) => pool.query('UPDATE tenants SET settings = $2 WHERE id = $1', [dave.user.tenantId, settings]);
    const names = async (query: string) =>
      (await dave.call('search_tools', { query, limit: 20 })).body.tools.map((t: { name: string }) => t.name);

    await setSettings({ enabledProviders: ['slack'] });
    expect(await execute(dave, 'github__list_repos')).toMatchObject({ ok: false, error: { code: 'provider_disabled' } });
    expect(await names('github repos')).not.toContain('github_list_repos');

    await setSettings({ excludeTools: ['*_repos'] });
    expect(await execute(dave, 'github__list_repos')).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await names('github repos')).not.toContain('github_list_repos');
    expect((await dave.call('get_tool_schema', { tool: 'github_list_repos' })).status).toBe(404);

    await setSettings({ includeTools: ['get_*'] });
    expect(await execute(dave, 'github__list_repos')).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect((await execute(dave, 'github__get_authenticated_user')).ok).toBe(true);

    await setSettings({ allowedTools: ['list_repos'] });
    expect((await execute(dave, 'github__list_repos')).ok).toBe(true);
    expect(await execute(dave, 'github__get_authenticated_user')).toMatchObject({ ok: false, error: { code: 'forbidden' } });

    await setSettings({ connectionRoles: ['eng'] });
    expect(await execute(dave, 'github__list_repos')).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await names('github repos')).toEqual([]);
    await setSettings({});
  });

  it('forbidden when the connection lacks a required scope', async () => {
    const erin = await createTestUser(stack);
    await connectGithub(erin, 'erin-gh', { scopes: ['read:user'] });
    const outcome = await execute(erin, 'github__create_issue', { owner: 'erin-gh', repo: 'repo-0', title: 'x' });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringContaining('repo') } });
  });

  it('needs_reauth for an account marked so, visible in search and list_integrations', async () => {
    const fay = await createTestUser(stack);
    const { account } = await connectGithub(fay, 'fay-gh');
    await stack.services.pool.query(`UPDATE accounts SET status = 'needs_reauth' WHERE id = $1`, [account.id]);
    expect(await execute(fay, 'github__list_repos')).toMatchObject({ ok: false, error: { code: 'needs_reauth', integration: 'github' } });
    const hit = (await fay.call('connections_search', { query: 'list repos' })).body.results[0];
    expect(hit).toMatchObject({ connected: false, status: 'needs_reauth', hint: expect.stringContaining('reconnect') });
    const integrations = (await fay.call('list_integrations')).body.integrations;
    expect(integrations.find((i: { name: string }) => i.name === 'github').connected).toBe(false);
  });
});

describe('results and audit', () => {
  it('cuts a result over the byte cap at a character boundary, with originalBytes', async () => {
    const gus = await createTestUser(stack);
    await connectGithub(gus, 'gus-gh');
    const repos = Array.from({ length: 60 }, (_, i) => ({
      full_name: `gus/r${i}`,
      private: false,
      description: 'é€😀'.repeat(20),
      default_branch: 'main',
      updated_at: 'x',
    }));
    apis.behave.set('/github/user/repos', { status: 200, body: repos, times: 1 });
    const outcome = await execute(gus, 'github__list_repos');
    expect(outcome.ok).toBe(true);
    expect(outcome.truncated).toBe(true);
    expect(outcome.originalBytes).toBeGreaterThan(4096);
    expect(typeof outcome.result).toBe('string');
    expect(Buffer.byteLength(outcome.result)).toBeLessThanOrEqual(4096);
    expect(Buffer.byteLength(outcome.result)).toBeGreaterThan(4090);
    expect(outcome.result).not.toContain('\uFFFD');
    // The meta surface carries the same cut.
    apis.behave.set('/github/user/repos', { status: 200, body: repos, times: 1 });
    const meta = await gus.call('execute_tools', { executions: [{ tool: 'github_list_repos' }] });
    expect(meta.body.results[0]).toMatchObject({ truncated: true, originalBytes: outcome.originalBytes });
  });

  it("replaces the caller's token in provider error text and cuts it to 300 characters", async () => {
    const hal = await createTestUser(stack);
    const { tokens } = await connectGithub(hal, 'hal-gh');
    apis.behave.set('/github/user/repos', {
      status: 422,
      body: { message: `token ${tokens.accessToken} is odd ${'x'.repeat(500)}` },
      times: 1,
    });
    const outcome = await execute(hal, 'github__list_repos');
    expect(outcome.error.code).toBe('tool_failed');
    expect(outcome.error.status).toBe(422);
    expect(outcome.error.message).toContain('[redacted]');
    expect(outcome.error.message).not.toContain(tokens.accessToken);
    expect(outcome.error.message.length).toBeLessThanOrEqual(300 + 'github answered HTTP 422: '.length);
  });

  it('writes one tool_call audit row per call with argument names only', async () => {
    const ivy = await createTestUser(stack);
    await connectGithub(ivy, 'ivy-gh');
    await execute(ivy, 'github__list_repos', { perPage: 3, page: 1 });
    await execute(ivy, 'github__list_repos', { perPage: 'secret-argument-value' });
    const { rows } = await stack.services.pool.query(
      `SELECT kind, tool, outcome, error_code, duration_ms, arg_names, actor_user_id, owner_user_id, detail FROM audit_log WHERE actor_user_id = $1 ORDER BY id`,
      [ivy.user.id],
    );
    expect(rows).toEqual([
      expect.objectContaining({
        kind: 'tool_call',
        tool: 'github__list_repos',
        outcome: 'ok',
        error_code: null,
        arg_names: ['perPage', 'page'],
        owner_user_id: ivy.user.id,
      }),
      expect.objectContaining({ outcome: 'error', error_code: 'invalid_arguments', arg_names: ['perPage'] }),
    ]);
    expect(rows[0].duration_ms).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(rows)).not.toContain('secret-argument-value');
  });
});

describe('accounts', () => {
  it('organisation accounts: shared by role, audited with the real user as actor and no owner', async () => {
    const admin = await createTestUser(stack, { roles: ['admin'] });
    const tenantId = admin.user.tenantId;
    const eng = await createTestUser(stack, { tenantId, roles: ['eng'] });
    const sales = await createTestUser(stack, { tenantId, roles: ['sales'] });
    await connectGithub(admin, 'org-bot', { tenantScoped: true, sharingRoles: ['eng'], label: 'org-bot' });

    const engHit = (await eng.call('connections_search', { query: 'list repos' })).body.results[0];
    expect(engHit.accounts).toEqual([{ id: expect.any(String), label: 'org-bot', scope: 'tenant', default: true, status: 'active' }]);
    expect(engHit.connected).toBe(true);
    expect(await execute(eng, 'github__get_authenticated_user')).toMatchObject({ ok: true, result: { login: 'org-bot' } });
    expect(await execute(sales, 'github__get_authenticated_user')).toMatchObject({ ok: false, error: { code: 'not_connected' } });

    const { rows } = await stack.services.pool.query(`SELECT actor_user_id, owner_user_id FROM audit_log WHERE actor_user_id = $1`, [
      eng.user.id,
    ]);
    expect(rows).toEqual([{ actor_user_id: eng.user.id, owner_user_id: null }]);
  });

  it("picks an account by id, label or connection id; without one, the caller's default", async () => {
    const jo = await createTestUser(stack);
    const work = await connectGithub(jo, 'jo-work', { label: 'work' });
    const home = await connectGithub(jo, 'jo-home', { label: 'home' });
    const login = async (account?: string) =>
      (await execute(jo, 'github__get_authenticated_user', {}, account ? { account } : {})).result?.login;
    expect(await login()).toBe('jo-work');
    expect(await login('home')).toBe('jo-home');
    expect(await login(work.account.id)).toBe('jo-work');
    await stack.services.pool.query(
      `INSERT INTO connection_attempts (id, tenant_id, user_id, integration, auth_mode, status, account_id, expires_at)
       VALUES ('11111111-2222-3333-4444-555555555555', $1, $2, 'github', 'oauth2', 'CONNECTED', $3, now())`,
      [jo.user.tenantId, jo.user.id, home.account.id],
    );
    expect(await login('11111111-2222-3333-4444-555555555555')).toBe('jo-home');
    expect(await execute(jo, 'github__get_authenticated_user', {}, { account: 'nope' })).toMatchObject({
      ok: false,
      error: { code: 'not_connected' },
    });
  });
});

describe('batches', () => {
  it('never runs more than 8 calls at once', async () => {
    const kim = await createTestUser(stack);
    await connectGithub(kim, 'kim-gh');
    apis.maxInFlight = 0;
    apis.behave.set('/github/user', { delayMs: 300, times: 20 });
    const { body } = await kim.call('execute_tools', {
      executions: Array.from({ length: 20 }, () => ({ tool: 'github_get_authenticated_user' })),
    });
    expect(body.results.every((r: { result?: unknown }) => r.result)).toBe(true);
    expect(apis.maxInFlight).toBeGreaterThan(1);
    expect(apis.maxInFlight).toBeLessThanOrEqual(8);
  });

  it('the same requestId returns the recorded results and runs nothing twice', async () => {
    const lee = await createTestUser(stack);
    await connectGithub(lee, 'lee-gh');
    const before = apis.requests.filter((r) => r.subject === 'lee-gh').length;
    const request = { executions: [{ tool: 'github_get_authenticated_user' }, { tool: 'github_list_repos' }], requestId: 'req-42' };
    const first = await lee.call('execute_tools', request);
    const second = await lee.call('execute_tools', request);
    expect(second.body).toEqual(first.body);
    expect(apis.requests.filter((r) => r.subject === 'lee-gh').length - before).toBe(2);
    // Another user's identical requestId is a different batch.
    expect((await alice.call('execute_tools', request)).body.results[0]).toMatchObject({ error: 'NOT_CONNECTED' });
  });
});

describe('local tool calls', () => {
  it('a batch runs its calls as local activities inside its workflow task, with no activity task per call', async () => {
    const pia = await createTestUser(stack);
    await connectGithub(pia, 'pia-gh');
    const { body } = await pia.call('execute_tools', {
      executions: [{ tool: 'github_get_authenticated_user' }, { tool: 'github_list_repos' }],
    });
    expect(body.results.every((r: { result?: unknown }) => r.result)).toBe(true);
    const { temporal } = stack.services;
    const batchId = async () => {
      for await (const info of temporal.workflow.list({ query: `SwitchboardUser = '${pia.user.id}'` })) return info.workflowId;
    };
    await expect.poll(batchId, { timeout: 10_000 }).toMatch(/^tool-batch-/);
    const events = (await temporal.workflow.getHandle((await batchId())!).fetchHistory()).events ?? [];
    const markers = events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
    expect(markers).toHaveLength(2);
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
    expect(events.filter((e) => e.workflowTaskStartedEventAttributes)).toHaveLength(1);
  });

  it('a call re-run under the same call key (its workflow task was lost) answers outcome unknown and never reaches the service again', async () => {
    const max = await createTestUser(stack);
    await connectGithub(max, 'max-gh');
    const activities = createExecuteActivities(stack.services);
    const input = {
      callKey: `tool-batch-lost-task#0`,
      tenantId: max.user.tenantId,
      userId: max.user.id,
      call: { tool: 'github__create_issue', args: { owner: 'octocat', repo: 'hello-world', title: 'once' } },
      claimFirst: true,
    };
    const hits = () => apis.requests.filter((r) => r.subject === 'max-gh').length;
    const first = await activities.executeToolCall(input);
    expect(first.ok).toBe(true);
    expect(hits()).toBe(1);
    const again = await activities.executeToolCall(input);
    expect(again).toEqual({
      ok: false,
      error: {
        code: 'outcome_unknown',
        message: 'github__create_issue was interrupted; its outcome is unknown, so check before retrying a write.',
      },
    });
    expect(hits()).toBe(1);
    // One audit row, holding what really happened at the service.
    const { rows } = await stack.services.pool.query(`SELECT outcome, error_code FROM audit_log WHERE call_key = $1`, [input.callKey]);
    expect(rows).toEqual([{ outcome: 'ok', error_code: null }]);
  });

  it('a claimed call whose worker died before it reported gets its outcome-unknown audit row on the re-run', async () => {
    const noa = await createTestUser(stack);
    await connectGithub(noa, 'noa-gh');
    const callKey = 'tool-batch-died-mid-call#3';
    const identity = { callKey, tenantId: noa.user.tenantId, actorUserId: noa.user.id, tool: 'github__list_repos', argNames: [] };
    // What the lost worker left: the claim, written before its call went out, and no outcome.
    expect(await claimToolCall(stack.services.pool, identity)).toBe(true);
    const outcome = await createExecuteActivities(stack.services).executeToolCall({
      callKey,
      tenantId: noa.user.tenantId,
      userId: noa.user.id,
      call: { tool: 'github__list_repos', args: {} },
      claimFirst: true,
    });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'outcome_unknown' } });
    expect(apis.requests.filter((r) => r.subject === 'noa-gh')).toEqual([]);
    const { rows } = await stack.services.pool.query(`SELECT outcome, error_code, arg_names FROM audit_log WHERE call_key = $1`, [callKey]);
    expect(rows).toEqual([{ outcome: 'error', error_code: 'outcome_unknown', arg_names: [] }]);
  });
});

describe('the claim read with the caller, and the slot given back with the outcome (one statement each)', () => {
  const activities = () => createExecuteActivities(stack.services);
  const slotsOf = async (accountId: string): Promise<number> =>
    (await stack.services.pool.query('SELECT count(*)::int AS n FROM account_call_slots WHERE account_id = $1', [accountId])).rows[0].n;

  it('the claim is written (committed) before the request reaches the service', async () => {
    const ida = await createTestUser(stack);
    await connectGithub(ida, 'ida-gh');
    const callKey = `claim-before-send-${Date.now()}#0`;
    apis.behave.set('/github/user', { delayMs: 1500, times: 1 });
    const hits = () => apis.requests.filter((r) => r.subject === 'ida-gh');
    const running = activities().executeToolCall({
      callKey,
      tenantId: ida.user.tenantId,
      userId: ida.user.id,
      call: { tool: 'github__get_authenticated_user', args: {} },
      claimFirst: true,
    });
    await expect.poll(() => hits().length, { timeout: 5000, interval: 5 }).toBe(1);
    // Read on another connection while the service still holds the request: the claim is there.
    const { rows } = await stack.services.pool.query('SELECT outcome, actor_user_id, tenant_id FROM audit_log WHERE call_key = $1', [
      callKey,
    ]);
    expect(rows).toEqual([{ outcome: null, actor_user_id: ida.user.id, tenant_id: ida.user.tenantId }]);
    expect(await running).toMatchObject({ ok: true, result: { login: 'ida-gh' } });
  });

  it("a user named under another tenant (or no user at all) is refused by role: nothing sent, only that call's own claim row written", async () => {
    const jo = await createTestUser(stack);
    await connectGithub(jo, 'jo-gh');
    const other = await createTestUser(stack);
    const before = await stack.services.pool.query('SELECT id, outcome FROM audit_log WHERE tenant_id = ANY($1) ORDER BY id', [
      [jo.user.tenantId, other.user.tenantId],
    ]);
    for (const [userId, key] of [
      [jo.user.id, 'cross-tenant'],
      ['usr_nobody', 'no-user'],
    ]) {
      const callKey = `${key}-${Date.now()}#0`;
      const outcome = await activities().executeToolCall({
        callKey,
        tenantId: other.user.tenantId,
        userId,
        call: { tool: 'github__get_authenticated_user', args: {} },
        claimFirst: true,
      });
      expect(outcome).toMatchObject({ ok: false, error: { code: 'forbidden' } });
      const { rows } = await stack.services.pool.query('SELECT tenant_id, actor_user_id, outcome FROM audit_log WHERE call_key = $1', [
        callKey,
      ]);
      expect(rows).toEqual([{ tenant_id: other.user.tenantId, actor_user_id: userId, outcome: 'error' }]);
    }
    expect(apis.requests.filter((r) => r.subject === 'jo-gh')).toEqual([]);
    // Rows that were there before are as they were.
    const after = await stack.services.pool.query('SELECT id, outcome FROM audit_log WHERE id = ANY($1) ORDER BY id', [
      before.rows.map((r) => r.id),
    ]);
    expect(after.rows).toEqual(before.rows);
  });

  it("the outcome's audit statement fails: the slot is given back on its own at once, only that ticket, and the error is the activity's", async () => {
    const kit = await createTestUser(stack);
    const { account } = await connectGithub(kit, 'kit-gh');
    const bystander = await createTestUser(stack);
    const { account: theirs } = await connectGithub(bystander, 'kit-bystander-gh');
    const { pool } = stack.services;
    // Another tenant's call holding a slot, and one of kit's own that lapsed long ago (swept by anyone).
    await pool.query(
      `INSERT INTO account_call_slots (tenant_id, account_id, granted, lease_until) VALUES ($1, $2, true, now() + interval '1 hour')`,
      [theirs.tenantId, theirs.id],
    );
    // The outcome write of kit's next call fails once (a sequence is not rolled back with it).
    const tag = kit.user.id.replace(/\W/g, '');
    await pool.query(`CREATE SEQUENCE audit_fail_${tag}`);
    await pool.query(
      `CREATE FUNCTION audit_fail_${tag}() RETURNS trigger LANGUAGE plpgsql AS $f$
       BEGIN
         IF NEW.actor_user_id = '${kit.user.id}' AND NEW.outcome IS NOT NULL AND nextval('audit_fail_${tag}') = 1 THEN
           RAISE EXCEPTION 'audit write refused (test)';
         END IF;
         RETURN NEW;
       END $f$`,
    );
    await pool.query(`CREATE TRIGGER audit_fail_${tag} BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_fail_${tag}()`);
    try {
      const input = (n: number) => ({
        callKey: `audit-fails-${tag}#${n}`,
        tenantId: kit.user.tenantId,
        userId: kit.user.id,
        call: { tool: 'github__get_authenticated_user', args: {} },
        claimFirst: true,
      });
      const runner = activities();
      await expect(runner.executeToolCall(input(0))).rejects.toThrow('audit write refused (test)');
      // Given back by itself, right away (not when its lease lapses); the other tenant's slot is untouched.
      expect(await slotsOf(account.id)).toBe(0);
      expect(await slotsOf(theirs.id)).toBe(1);
      // The same runner's next call on the account takes a slot and gives it back with its audit row.
      expect(await runner.executeToolCall(input(1))).toMatchObject({ ok: true, result: { login: 'kit-gh' } });
      expect(await slotsOf(account.id)).toBe(0);
      expect(await slotsOf(theirs.id)).toBe(1);
      const { rows } = await pool.query('SELECT call_key, outcome FROM audit_log WHERE call_key LIKE $1 ORDER BY call_key', [
        `audit-fails-${tag}#%`,
      ]);
      // The failed write left the claim without an outcome (a re-run answers outcome unknown).
      expect(rows).toEqual([
        { call_key: `audit-fails-${tag}#0`, outcome: null },
        { call_key: `audit-fails-${tag}#1`, outcome: 'ok' },
      ]);
    } finally {
      await pool.query(`DROP TRIGGER IF EXISTS audit_fail_${tag} ON audit_log`);
      await pool.query(`DROP FUNCTION IF EXISTS audit_fail_${tag}()`);
      await pool.query(`DROP SEQUENCE IF EXISTS audit_fail_${tag}`);
      await pool.query('DELETE FROM account_call_slots WHERE account_id = $1', [theirs.id]);
    }
  });

  it("recordToolCall's ticket deletes that ticket alone, even when the outcome was already written", async () => {
    const { pool } = stack.services;
    const ticketOf = async (tenant: string, account: string) =>
      (
        await pool.query(
          `INSERT INTO account_call_slots (tenant_id, account_id, granted, lease_until) VALUES ($1, $2, true, now() + interval '1 hour') RETURNING ticket`,
          [tenant, account],
        )
      ).rows[0].ticket as string;
    const mine = await ticketOf('ten_ticket_a', 'acct_ticket_a');
    const sameAccount = await ticketOf('ten_ticket_a', 'acct_ticket_a');
    const otherTenant = await ticketOf('ten_ticket_b', 'acct_ticket_b');
    const row = {
      callKey: `ticket-scope-${Date.now()}#0`,
      tenantId: 'ten_ticket_a',
      actorUserId: 'usr_ticket_a',
      ownerUserId: null,
      accountId: 'acct_ticket_a',
      tool: 'github__list_repos',
      outcome: 'ok' as const,
      errorCode: null,
      durationMs: 1,
      argNames: [],
    };
    await recordToolCall(pool, row, mine);
    const left = async () =>
      (
        await pool.query('SELECT ticket FROM account_call_slots WHERE ticket = ANY($1::bigint[]) ORDER BY ticket', [
          [mine, sameAccount, otherTenant],
        ])
      ).rows.map((r) => r.ticket);
    expect(await left()).toEqual([sameAccount, otherTenant]);
    // A second write of the same call key is ignored, but the slot it names is still given back.
    await recordToolCall(pool, { ...row, outcome: 'error', errorCode: 'tool_failed' }, sameAccount);
    expect(await left()).toEqual([otherTenant]);
    const { rows } = await pool.query('SELECT outcome FROM audit_log WHERE call_key = $1', [row.callKey]);
    expect(rows).toEqual([{ outcome: 'ok' }]);
    await pool.query('DELETE FROM account_call_slots WHERE ticket = $1', [otherTenant]);
  });
});

describe('refresh', () => {
  it('on a provider 401: refreshes once and retries once', async () => {
    const max = await createTestUser(stack);
    const { tokens } = await connectGithub(max, 'max-gh');
    await auth.revokeAccessToken(tokens.accessToken);
    const refreshes = auth.grants.refresh_token;
    expect(await execute(max, 'github__get_authenticated_user')).toMatchObject({ ok: true, result: { login: 'max-gh' } });
    expect(auth.grants.refresh_token - refreshes).toBe(1);
  });

  it('a refresh the service refuses flips the account to needs_reauth', async () => {
    const ned = await createTestUser(stack);
    const { tokens, account } = await connectGithub(ned, 'ned-gh', { expired: true });
    await auth.revokeRefreshToken(tokens.refreshToken);
    expect(await execute(ned, 'github__get_authenticated_user')).toMatchObject({ ok: false, error: { code: 'needs_reauth' } });
    const { rows } = await stack.services.pool.query('SELECT status FROM accounts WHERE id = $1', [account.id]);
    expect(rows[0].status).toBe('needs_reauth');
  });

  it('100 concurrent calls on an expired rotating token: exactly one refresh, all succeed', async () => {
    const oli = await createTestUser(stack);
    await connectGithub(oli, 'oli-gh', { expired: true });
    const refreshes = auth.grants.refresh_token;
    const outcomes = await Promise.all(Array.from({ length: 100 }, () => execute(oli, 'github__get_authenticated_user')));
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    expect(auth.grants.refresh_token - refreshes).toBe(1);
  });
});
