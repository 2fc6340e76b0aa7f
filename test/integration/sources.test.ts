import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { runAdmin } from '../../bin/admin/main.js';
import { updateTenantSettings } from '../../features/accounts/store/tenants.js';
import { setUserRoles } from '../../features/accounts/store/users.js';
import { decide } from '../../features/approvals/decide.js';
import { mcpTaskIdHash } from '../../surfaces/mcp/store/mcp-tasks.js';
import { createTestUser, type Stack, startWorld, type TestUser } from '../support/harness.js';
import { freePort } from '../support/ports.js';

const SOURCE_ANSWER_CAP = 65_536;

const world = await startWorld({ clients: { github: {} }, apis: true });
const remote = world.stack;

/** A "Switchboard" that answers every request with a JSON body that never ends, until the client hangs up. */
async function startEndlessRemote() {
  const state = { bytesSent: 0, hangUps: 0 };
  const { server } = await world.serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"ok":true,"results":[');
    const chunk = `${JSON.stringify('x'.repeat(16_000))},`;
    // Written as fast as the client reads, no faster: bytesSent is what the client was offered.
    const pump = () => {
      while (!res.destroyed) {
        state.bytesSent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
    };
    pump();
    res.on('close', () => {
      state.hangUps++;
    });
  });
  return Object.assign(state, { server });
}

async function connect(stack: Stack, user: TestUser, login: string) {
  return (await world.connectGithub(user, login, { stack })).account;
}

/** `admin create-source-key` on a stack's database, as its operator runs it. */
async function createSourceKey(stack: Stack, email: string, source: string): Promise<{ key: string; assertionKey: string }> {
  const out: string[] = [];
  const code = await runAdmin(['create-source-key', '--email', email, '--source', source], {
    stdout: (s) => out.push(s),
    stderr: (s) => out.push(s),
    env: stack.env,
  });
  expect(code, out.join('')).toBe(0);
  return JSON.parse(out.join(''));
}

const remoteUser = await world.user();
// The remote's users of the source get its organisation account; the key's own user's personal one is not theirs.
await world.connectGithub(remoteUser, 'remote-octo', { tenantScoped: true, sharingRoles: ['member'] });
await connect(remote, remoteUser, 'remote-octo-personal');
const closedPort = await freePort();
const localTenant = 'ten_src_local';
const restrictedTenant = 'ten_src_restricted';
// The remote's admin grants this instance a source key, acting for users of remoteUser's tenant.
const { key: sourceKey, assertionKey } = await createSourceKey(remote, remoteUser.user.email, 'eu');
/** A tenant whose only source is a hostile remote that answers without end (finding 16 for sources). */
const endless = await startEndlessRemote();
const hugeTenant = 'ten_src_huge';
const here = await world.startStack({
  env: {
    CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES: String(SOURCE_ANSWER_CAP),
    SOURCE_NAME: 'eu',
    SOURCE_TIMEOUT_MS: '3000',
    SWITCHBOARD_SOURCES: JSON.stringify([
      { name: 'us', url: remote.baseUrl, apiKey: sourceKey, assertionKey, tenants: [localTenant, restrictedTenant] },
      { name: 'down', url: `http://127.0.0.1:${closedPort}`, apiKey: 'sbk_none', assertionKey, tenants: [localTenant] },
      {
        name: 'huge',
        url: `http://127.0.0.1:${(endless.server.address() as { port: number }).port}`,
        apiKey: 'sbk_none',
        assertionKey,
        tenants: [hugeTenant],
      },
    ]),
  },
});
const localUser = await createTestUser(here, { tenantId: localTenant });
/** A second user of localUser's tenant, a user of a tenant with a policy, and one of a tenant the source does not name. */
const colleague = await createTestUser(here, { tenantId: localTenant });
const restricted = await createTestUser(here, { tenantId: restrictedTenant });
await updateTenantSettings(here.services.pool, restrictedTenant, { excludeTools: ['create_note', 'delete_*'] });
const outsider = await createTestUser(here);
const hugeUser = await createTestUser(here, { tenantId: hugeTenant });
await connect(here, localUser, 'local-octo');

describe('remote and composite sources', () => {
  it('search merges every source with <source>: prefixes and names the unavailable ones', async () => {
    const { body } = await localUser.call('connections_search', { query: 'authenticated user', limit: 4 });
    expect(body.ok).toBe(true);
    expect(body.unavailable).toEqual(['down']);
    const names = body.results.map((r: { name: string }) => r.name);
    expect(names.slice(0, 2)).toEqual(['eu:github__get_authenticated_user', 'us:github__get_authenticated_user']);
    const [eu, us] = body.results;
    expect(eu.accounts).toEqual([expect.objectContaining({ id: expect.stringMatching(/^eu:acc_/), label: 'local-octo' })]);
    expect(us.accounts).toEqual([expect.objectContaining({ id: expect.stringMatching(/^us:acc_/), label: 'remote-octo' })]);
  });

  it('execution is routed by prefix, accounts included', async () => {
    const run = (name: string, account?: string) =>
      localUser.call('connections_execute', { name, arguments: {}, ...(account && { account }) }).then((r) => r.body);
    expect(await run('eu:github__get_authenticated_user')).toMatchObject({ ok: true, result: { login: 'local-octo' } });
    expect(await run('us:github__get_authenticated_user')).toMatchObject({ ok: true, result: { login: 'remote-octo' } });
    const { body } = await localUser.call('connections_search', { query: 'authenticated user', limit: 2 });
    const usAccount = body.results[1].accounts[0].id;
    expect(await run('us:github__get_authenticated_user', usAccount)).toMatchObject({ ok: true, result: { login: 'remote-octo' } });
    expect(await run('eu:github__get_authenticated_user', usAccount)).toMatchObject({ ok: false, error: { code: 'not_connected' } });
    // A label from the search result carries no prefix: it names an account of the tool's source.
    expect(body.results[1].accounts[0].label).toBe('remote-octo');
    expect(await run('us:github__get_authenticated_user', 'remote-octo')).toMatchObject({ ok: true, result: { login: 'remote-octo' } });
    expect(await run('eu:github__get_authenticated_user', 'local-octo')).toMatchObject({ ok: true, result: { login: 'local-octo' } });
    expect(await run('eu:github__get_authenticated_user', 'remote-octo')).toMatchObject({ ok: false, error: { code: 'not_connected' } });
    expect(await run('github__get_authenticated_user')).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await run('down:github__get_authenticated_user')).toMatchObject({
      ok: false,
      error: { code: 'tool_failed', message: expect.stringContaining('down') },
    });
  });

  it('every call is audited here: answered at a source, refused before routing, or run here; argument names only', async () => {
    const auditor = await createTestUser(here, { tenantId: localTenant });
    const run = (name: string, args: Record<string, unknown>) =>
      auditor.call('connections_execute', { name, arguments: args }).then((r) => r.body);
    expect(await run('us:jots__list_notes', { tag: 'secret-tag-value' })).toMatchObject({ ok: true });
    expect(await run('us:jots__get_note', { id: 'jot_missing' })).toMatchObject({ ok: false, error: { code: 'tool_failed' } });
    expect(await run('jots__list_notes', {})).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await run('down:jots__list_notes', {})).toMatchObject({ ok: false, error: { code: 'tool_failed' } });
    expect(await run('eu:jots__list_notes', {})).toMatchObject({ ok: true });
    const { rows } = await here.services.pool.query(
      `SELECT kind, tool, outcome, error_code, arg_names, owner_user_id, account_id, duration_ms >= 0 AS timed
         FROM audit_log WHERE actor_user_id = $1 ORDER BY id`,
      [auditor.user.id],
    );
    const row = { kind: 'tool_call', owner_user_id: null, account_id: null, timed: true };
    expect(rows).toEqual([
      { ...row, tool: 'us:jots__list_notes', outcome: 'ok', error_code: null, arg_names: ['tag'] },
      { ...row, tool: 'us:jots__get_note', outcome: 'error', error_code: 'tool_failed', arg_names: ['id'] },
      { ...row, tool: 'jots__list_notes', outcome: 'error', error_code: 'not_found', arg_names: [] },
      { ...row, tool: 'down:jots__list_notes', outcome: 'error', error_code: 'tool_failed', arg_names: [] },
      { ...row, tool: 'jots__list_notes', outcome: 'ok', error_code: null, arg_names: [] },
    ]);
    expect(JSON.stringify(rows)).not.toContain('secret-tag-value');
  });

  it('an instance without sources keeps plain names', async () => {
    const { body } = await remoteUser.call('connections_search', { query: 'authenticated user', limit: 1 });
    expect(body.results[0].name).toBe('github__get_authenticated_user');
    expect(body.unavailable).toBeUndefined();
  });
});

describe('finding 3: a remote source acts for each local user, under the local policy', () => {
  const execute = (user: TestUser, name: string, args: Record<string, unknown>, requestId?: string) =>
    user.call('connections_execute', { name, arguments: args, ...(requestId && { requestId }) }).then((r) => r.body);
  const remoteAuditRows = async () => Number((await remote.services.pool.query('SELECT count(*) AS n FROM audit_log')).rows[0].n);

  it("finding 3: user B's requestId equal to user A's never returns A's result", async () => {
    const a = await execute(localUser, 'us:jots__create_note', { title: 'A private', body: 'for A only' }, 'same-request-id');
    expect(a, JSON.stringify(a)).toMatchObject({ ok: true, result: { title: 'A private' } });
    const b = await execute(colleague, 'us:jots__create_note', { title: 'B private', body: 'for B only' }, 'same-request-id');
    expect(b).toMatchObject({ ok: true, result: { title: 'B private' } });
    expect(b.result.id).not.toBe(a.result.id);
    // A's retry still answers A's recorded result.
    const again = await execute(localUser, 'us:jots__create_note', { title: 'A private', body: 'for A only' }, 'same-request-id');
    expect(again).toMatchObject({ ok: true, result: { id: a.result.id } });
  });

  it("finding 3: two local users' notes and accounts on the remote are separate", async () => {
    await execute(localUser, 'us:jots__create_note', { title: 'only A sees this', body: 'A' });
    const listed = await execute(colleague, 'us:jots__list_notes', {});
    expect(listed.ok).toBe(true);
    expect(listed.result.notes.map((n: { title: string }) => n.title)).not.toContain('only A sees this');
    const mine = await execute(localUser, 'us:jots__list_notes', {});
    expect(mine.result.notes.map((n: { title: string }) => n.title)).toContain('only A sees this');
    // The remote key's own user's personal account is not the local users'.
    const { body } = await localUser.call('connections_search', { query: 'authenticated user', provider: 'github', limit: 4 });
    const us = body.results.find((r: { name: string }) => r.name === 'us:github__get_authenticated_user');
    expect(us.accounts.map((a: { label: string }) => a.label)).not.toContain('remote-octo-personal');
    // On the remote, the two local users are two different users.
    const actors = await remote.services.pool.query(
      `SELECT DISTINCT actor_user_id FROM audit_log WHERE kind = 'tool_call' AND tool LIKE 'jots__%'`,
    );
    expect(actors.rows.length).toBeGreaterThanOrEqual(2);
    expect(actors.rows.map((r) => r.actor_user_id)).not.toContain(remoteUser.user.id);
  });

  it("finding 3: a call the local tenant's policy excludes is refused locally and never reaches the remote", async () => {
    const before = await remoteAuditRows();
    const refused = await execute(restricted, 'us:jots__create_note', { title: 'should not exist', body: 'x' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    const alsoRefused = await execute(restricted, 'us:jots__delete_note', { id: 'jot_nothing' });
    expect(alsoRefused).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await remoteAuditRows()).toBe(before);
    // Searching never offers the excluded tool either.
    const { body } = await restricted.call('connections_search', { query: 'create note', provider: 'jots', limit: 20 });
    expect(body.results.map((r: { name: string }) => r.name)).not.toContain('us:jots__create_note');
    // What the policy allows still runs.
    expect(await execute(restricted, 'us:jots__list_notes', {})).toMatchObject({ ok: true });
  });

  it('finding 3: a tenant the source does not name cannot use it', async () => {
    const before = await remoteAuditRows();
    expect(await execute(outsider, 'us:jots__list_notes', {})).toMatchObject({ ok: false, error: { code: 'not_found' } });
    const { body } = await outsider.call('connections_search', { query: 'list notes', limit: 20 });
    expect(body.results.some((r: { name: string }) => r.name.startsWith('us:'))).toBe(false);
    expect(await remoteAuditRows()).toBe(before);
  });

  it("finding 3: taking a role from the source key's template user takes it from every delegate already created", async () => {
    // localUser's delegate on the remote exists (earlier tests) and reaches the remote's organisation account, shared with 'member'.
    const before = await execute(localUser, 'us:github__get_authenticated_user', {});
    expect(before, JSON.stringify(before)).toMatchObject({ ok: true, result: { login: 'remote-octo' } });
    // The remote's admin takes 'member' from the template user: the source should no longer reach that account.
    await setUserRoles(remote.services.pool, remoteUser.user.id, []);
    try {
      const after = await execute(localUser, 'us:github__get_authenticated_user', {});
      expect(after, JSON.stringify(after)).toMatchObject({ ok: false, error: { code: 'not_connected' } });
    } finally {
      await setUserRoles(remote.services.pool, remoteUser.user.id, remoteUser.user.roles);
    }
  });

  it('a result the remote cut is read on through the source, by the user whose call it was and nobody else', async () => {
    const body = `${'ü'.repeat(20_000)}${'n'.repeat(40_000)}`;
    // create_note answers the whole note, itself cut: its id comes from the list.
    expect(await execute(localUser, 'us:jots__create_note', { title: 'long remote note', body })).toMatchObject({
      ok: true,
      truncated: true,
    });
    const listed = await execute(localUser, 'us:jots__list_notes', {});
    const id = listed.result.notes.find((n: { title: string }) => n.title === 'long remote note').id;
    const got = await execute(localUser, 'us:jots__get_note', { id });
    expect(got).toMatchObject({ ok: true, truncated: true, resultRef: expect.stringMatching(/^us:res_/) });
    let text = '';
    for (let offset: number | null = 0; offset !== null; ) {
      const { status, body: slice } = await localUser.call('read_result', { resultRef: got.resultRef, offset });
      expect(status).toBe(200);
      expect(slice.resultRef).toBe(got.resultRef);
      text += slice.result;
      offset = slice.nextOffset;
    }
    expect(JSON.parse(text)).toMatchObject({ id, body });
    // Another local user of the same tenant is another delegate at the remote; a tenant the source does not serve never reaches it.
    for (const stranger of [colleague, outsider]) {
      expect(await stranger.call('read_result', { resultRef: got.resultRef })).toMatchObject({
        status: 404,
        body: { error: 'Unknown resultRef' },
      });
    }
    // The remote's own 400s come back as they are.
    expect(await localUser.call('read_result', { resultRef: got.resultRef, select: ['no-slash'] })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^Invalid arguments for read_result: /) },
    });
  });

  it('finding 16: a remote source answering without end is read only up to the cap, promptly, for search and execute', async () => {
    const started = Date.now();
    const hangUpsBefore = endless.hangUps;
    const run = await execute(hugeUser, 'huge:jots__list_notes', {});
    expect(run).toMatchObject({ ok: false, error: { code: 'tool_failed', message: expect.stringContaining('stopped reading') } });
    const { body } = await hugeUser.call('connections_search', { query: 'notes', limit: 5 });
    expect(body).toMatchObject({ ok: true, unavailable: ['huge'] });
    expect(Date.now() - started).toBeLessThan(10_000);
    await expect.poll(() => endless.hangUps - hangUpsBefore).toBe(2);
    // Two answers cut near the cap (plus what sat in socket buffers): nothing like an unbounded read.
    expect(endless.bytesSent).toBeLessThan(16 * 1024 * 1024);
  });

  it('finding 3: the remote refuses a source key without an assertion, and a forged or expired one', async () => {
    const callRemote = (assertion?: string, key = sourceKey) =>
      fetch(`${remote.baseUrl}/v1/tools/connections_execute`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          ...(assertion && { 'switchboard-assertion': assertion }),
        },
        body: JSON.stringify({ name: 'jots__list_notes', arguments: {} }),
      });
    const AUDIENCE = 'switchboard:source-assertion';
    const claims = { tenant: 'ten_src_local', sub: localUser.user.id };
    const forgedKey = generateKeyPairSync('ed25519').privateKey;
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA' })
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('1m')
      .sign(forgedKey);
    const realKey = createPrivateKey({ key: Buffer.from(assertionKey, 'base64url'), format: 'der', type: 'pkcs8' });
    const expired = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA' })
      .setAudience(AUDIENCE)
      .setIssuedAt(Math.floor(Date.now() / 1000) - 600)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 300)
      .sign(realKey);
    const before = await remoteAuditRows();
    for (const assertion of [undefined, forged, expired, 'not-a-jwt']) {
      const res = await callRemote(assertion);
      expect(res.status, `assertion ${assertion?.slice(0, 20)}`).toBe(401);
      const body = await res.json();
      expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+/);
    }
    // An ordinary key cannot be turned into someone else by an assertion either.
    expect((await callRemote(forged, remoteUser.apiKey)).status).toBe(401);
    expect(await remoteAuditRows()).toBe(before);
  });
});

describe('approvals at a remote source', () => {
  const execute = (user: TestUser, name: string, args: Record<string, unknown>) =>
    user.call('connections_execute', { name, arguments: args }).then((r) => r.body);

  it('a call the source gates names its approval with the prefix; wait_for_approval here waits there; nobody else can', async () => {
    const created = await execute(localUser, 'us:jots__create_note', { title: 'to delete remotely', body: 'x' });
    const id = created.result.id as string;
    const gated = await execute(localUser, 'us:jots__delete_note', { id });
    expect(gated).toMatchObject({ ok: false, error: { code: 'approval_required', approvalId: expect.stringMatching(/^us:apr_/) } });
    const approvalId = gated.error.approvalId as string;
    expect(gated.error.url).toMatch(new RegExp(`^${remote.baseUrl}/portal/approvals/`));

    // Another local user of the same tenant: the source answers its own unknown id.
    expect((await colleague.call('wait_for_approval', { approvalId, timeoutSec: 1 })).status).toBe(404);
    expect((await localUser.call('wait_for_approval', { approvalId, timeoutSec: 1 })).body).toEqual({ status: 'PENDING' });

    // An administrator at the source approves it there.
    const admin = await world.user({ tenantId: remoteUser.user.tenantId, roles: ['admin'] });
    const decided = await decide(
      { pool: remote.services.pool, temporal: remote.services.temporal, logger: remote.services.logger },
      { tenantId: admin.user.tenantId, userId: admin.user.id, roles: admin.user.roles },
      approvalId.slice('us:'.length),
      'APPROVED',
      'fine',
    );
    expect(decided.result).toBe('decided');
    const answer = await localUser.call('wait_for_approval', { approvalId, timeoutSec: 30 });
    expect(answer.body).toEqual({ status: 'APPROVED', result: { result: { deleted: true, id } } });
  }, 60_000);
});

describe('MCP tasks at a remote source', () => {
  /** Requests the remote answered for connections_execute: each one a call sent to the source. */
  const sentToRemote = () =>
    remote.logs
      .text()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'request' && l.path === '/v1/tools/connections_execute').length;
  const textOf = (result: unknown) => JSON.parse((result as { content: { text: string }[] }).content[0].text);

  it('a connections_execute task routed to a source answers what the source answered, and no later read sends the call there again', async () => {
    const client = new Client({ name: 'tasks-at-a-source', version: '1.0.0' }, { capabilities: { tasks: {} } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${here.baseUrl}/mcp/agent`), {
        requestInit: { headers: { authorization: `Bearer ${localUser.apiKey}` } },
      }),
    );
    const before = sentToRemote();
    const { task } = await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'connections_execute',
          arguments: { name: 'us:jots__create_note', arguments: { title: 'task at the source', body: 'once' } },
          task: { ttl: 600_000 },
        },
      },
      CreateTaskResultSchema,
    );
    // The source answered within the creating request: the task is created with that answer recorded.
    expect(task.status).toBe('completed');
    const result = textOf(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema));
    expect(result).toMatchObject({ ok: true, result: { title: 'task at the source' } });
    expect(sentToRemote() - before).toBe(1);

    // The creating process died before recording the answer (the row says nothing), and the start grace has passed.
    await here.services.pool.query(
      `UPDATE mcp_tasks SET sealed_outcome = NULL, status = 'working', created_at = now() - interval '1 hour' WHERE id_hash = $1`,
      [mcpTaskIdHash(task.taskId)],
    );
    // A read cannot ask the source only to read (past its retention the same requestId would run the call anew): outcome unknown.
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('failed');
    const unknown = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown).error).toMatch(/sent to source us .*outcome is unknown/);
    expect(sentToRemote() - before).toBe(1);
    await client.close();
  });
});
