import { describe, expect, it } from 'vitest';
import { insertAccount } from '../../features/accounts/store/accounts.js';
import { createJot } from '../../platform/database/jots.js';
import { createTestUser, startWorld, type TestUser } from '../support/harness.js';

/**
 * The "Agent tools" spec (connections_search, connections_execute) read sentence by sentence:
 * what execute.test.ts and isolation.test.ts do not already pin down.
 */

const MAX_BYTES = 4096;
const world = await startWorld({
  clients: { github: {} },
  apis: true,
  env: { CONNECTIONS_TOOL_RESULT_MAX_BYTES: String(MAX_BYTES) },
});
const { apis, stack } = world;
const { pool } = stack.services;

const search = (user: TestUser, args: unknown) => user.call('connections_search', args);
const execute = (user: TestUser, name: string, args: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  user.call('connections_execute', { name, arguments: args, ...extra }).then((r) => r.body);

/** The longest run of whole characters of `text` within `maxBytes` UTF-8 bytes, counted one character at a time. */
function expectedCut(text: string, maxBytes: number): string {
  let out = '';
  let bytes = 0;
  for (const char of text) {
    bytes += Buffer.byteLength(char);
    if (bytes > maxBytes) break;
    out += char;
  }
  return out;
}

describe('connections_search arguments', () => {
  it('query: required, 1 to 200 characters, a string; provider: a string; limit: an integer 1 to 20, default 8', async () => {
    const user = await createTestUser(stack);
    const refused = async (args: unknown, path: string) => {
      const res = await search(user, args);
      expect(res.status, JSON.stringify(args)).toBe(400);
      expect(res.body, JSON.stringify(args)).toMatchObject({
        ok: false,
        error: { code: 'invalid_arguments', message: expect.any(String), issues: [expect.objectContaining({ path: [path] })] },
      });
    };
    await refused({}, 'query');
    await refused({ query: '' }, 'query');
    await refused({ query: 'x'.repeat(201) }, 'query');
    await refused({ query: 42 }, 'query');
    await refused({ query: ['list', 'issues'] }, 'query');
    await refused({ query: 'issues', provider: 7 }, 'provider');
    for (const limit of [0, 21, 2.5, '5', null]) await refused({ query: 'issues', limit }, 'limit');

    expect((await search(user, { query: 'x'.repeat(200) })).body.ok).toBe(true);
    expect((await search(user, { query: 'l' })).body.ok).toBe(true);
    const byDefault = (await search(user, { query: 'list' })).body.results;
    expect(byDefault).toHaveLength(8);
    const twenty = (await search(user, { query: 'list', limit: 20 })).body.results;
    expect(twenty).toHaveLength(20);
    // Best match first, and deterministic: the default's eight are the first eight of twenty.
    expect(twenty.slice(0, 8).map((r: { name: string }) => r.name)).toEqual(byDefault.map((r: { name: string }) => r.name));
    expect((await search(user, { query: 'list', limit: 1 })).body.results).toHaveLength(1);
    const slack = (await search(user, { query: 'list', provider: 'slack', limit: 20 })).body.results;
    expect(slack.length).toBeGreaterThan(0);
    expect(slack.every((r: { name: string; provider: string }) => r.provider === 'slack' && r.name.startsWith('slack__'))).toBe(true);
    expect((await search(user, { query: 'list', provider: 'nope' })).body).toEqual({ ok: true, results: [] });
  });
});

describe('connections_search results', () => {
  it("accounts: the caller's own first, then the organisation's shared with one of their roles; status only with a connection", async () => {
    const admin = await createTestUser(stack, { roles: ['admin'] });
    const tenantId = admin.user.tenantId;
    const eng = await createTestUser(stack, { tenantId, roles: ['eng'] });
    await world.connectGithub(admin, 'org-shared', { tenantScoped: true, sharingRoles: ['eng'], label: 'org-shared' });
    await world.connectGithub(admin, 'org-sales', { tenantScoped: true, sharingRoles: ['sales'], label: 'org-sales' });
    await world.connectGithub(eng, 'eng-first', { label: 'eng-first' });
    await world.connectGithub(eng, 'eng-second', { label: 'eng-second' });
    const hit = (await search(eng, { query: 'list repos', provider: 'github' })).body.results[0];
    expect(hit).toMatchObject({ name: 'github__list_repos', provider: 'github', connected: true, status: 'active' });
    expect(hit.accounts).toEqual([
      { id: expect.stringMatching(/^acc_/), label: 'eng-first', scope: 'user', default: true, status: 'active' },
      { id: expect.stringMatching(/^acc_/), label: 'eng-second', scope: 'user', default: false, status: 'active' },
      { id: expect.stringMatching(/^acc_/), label: 'org-shared', scope: 'tenant', default: true, status: 'active' },
    ]);
    expect(hit.hint).toBeUndefined();
    // A tool that needs no account has no status and no accounts to choose.
    const builtin = (await search(eng, { query: 'note', provider: 'jots' })).body.results[0];
    expect(builtin).toMatchObject({ connected: true, accounts: [] });
    expect(builtin.status).toBeUndefined();
  });

  it('a hint to ask an administrator when only an organisation account stopped working; the user for their own', async () => {
    const admin = await createTestUser(stack, { roles: ['admin'] });
    const member = await createTestUser(stack, { tenantId: admin.user.tenantId });
    const { account } = await world.connectGithub(admin, 'org-broken', { tenantScoped: true, sharingRoles: ['member'] });
    await pool.query(`UPDATE accounts SET status = 'needs_reauth' WHERE id = $1`, [account.id]);
    const orgHit = (await search(member, { query: 'list repos', provider: 'github' })).body.results[0];
    expect(orgHit).toMatchObject({ connected: false, status: 'needs_reauth', hint: expect.stringContaining('an administrator') });
    expect(orgHit.hint).not.toContain('the user');
    const own = await world.connectGithub(member, 'member-broken');
    await pool.query(`UPDATE accounts SET status = 'needs_reauth' WHERE id = $1`, [own.account.id]);
    const ownHit = (await search(member, { query: 'list repos', provider: 'github' })).body.results[0];
    expect(ownHit).toMatchObject({ connected: false, status: 'needs_reauth', hint: expect.stringContaining('the user') });
  });
});

describe('connections_execute: the order of the checks', () => {
  it('policy before arguments: a connection lacking a scope answers forbidden even when the arguments are wrong too', async () => {
    const user = await createTestUser(stack);
    await world.connectGithub(user, 'scope-less', { scopes: ['read:user'] });
    const outcome = await execute(user, 'github__create_issue', { owner: 'scope-less' });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'forbidden', message: expect.stringContaining('repo') } });
  });

  it('policy before arguments: an organisation account whose sharing does not admit the caller is not theirs, whatever the arguments', async () => {
    const admin = await createTestUser(stack, { roles: ['admin'] });
    const sales = await createTestUser(stack, { tenantId: admin.user.tenantId, roles: ['sales'] });
    const { account } = await world.connectGithub(admin, 'org-eng-only', { tenantScoped: true, sharingRoles: ['eng'] });
    for (const args of [{}, { perPage: 'many' }]) {
      expect(await execute(sales, 'github__list_repos', args, { account: account.id })).toMatchObject({
        ok: false,
        error: { code: 'not_connected' },
      });
    }
  });

  it('arguments before the credential: wrong arguments on an account that stopped working answer invalid_arguments', async () => {
    const user = await createTestUser(stack);
    const { account } = await world.connectGithub(user, 'stale-args');
    await pool.query(`UPDATE accounts SET status = 'needs_reauth' WHERE id = $1`, [account.id]);
    expect(await execute(user, 'github__list_repos', { perPage: 'many' })).toMatchObject({
      ok: false,
      error: { code: 'invalid_arguments', issues: [expect.objectContaining({ path: ['perPage'] })] },
    });
    expect(await execute(user, 'github__list_repos')).toMatchObject({ ok: false, error: { code: 'needs_reauth' } });
  });
});

describe('connections_execute results', () => {
  it('a result over the cap is its JSON text cut before the character that straddles the cap; originalBytes is exact', async () => {
    const user = await createTestUser(stack);
    const owner = { tenantId: user.user.tenantId, userId: user.user.id };
    // At each of four alignments a 4-byte character lands on the cap differently: cut after it, or before it.
    for (let pad = 0; pad < 4; pad++) {
      const note = await createJot(pool, owner, { title: 'Cut', body: `${'a'.repeat(pad)}${'😀'.repeat(1500)}`, tags: [] });
      const json = JSON.stringify(note);
      const outcome = await execute(user, 'jots__get_note', { id: note.id });
      expect(outcome).toMatchObject({ ok: true, truncated: true, originalBytes: Buffer.byteLength(json) });
      expect(outcome.result, `pad ${pad}`).toBe(expectedCut(json, MAX_BYTES));
      expect(Buffer.byteLength(outcome.result)).toBeGreaterThan(MAX_BYTES - 4);
    }
    // At the cap exactly, nothing is cut.
    const base = await createJot(pool, owner, { title: 'Fits', body: '', tags: [] });
    const room = MAX_BYTES - Buffer.byteLength(JSON.stringify(base));
    const fits = await createJot(pool, owner, { title: 'Fits', body: 'é'.repeat(Math.floor(room / 2)) + 'a'.repeat(room % 2), tags: [] });
    expect(Buffer.byteLength(JSON.stringify(fits))).toBe(MAX_BYTES);
    expect(await execute(user, 'jots__get_note', { id: fits.id })).toEqual({ ok: true, result: fits });
  });

  it("provider error text: the caller's access and refresh tokens, raw, URL-encoded or base64, are [redacted], even across the cut", async () => {
    const user = await createTestUser(stack);
    const { tokens } = await world.connectGithub(user, 'echoing');
    const echoes = [
      `bad token ${tokens.accessToken}`,
      `refresh ${tokens.refreshToken} is not for this endpoint`,
      `access_token=${encodeURIComponent(tokens.accessToken)}`,
      `Authorization: Basic ${Buffer.from(`echoing:${tokens.accessToken}`).toString('base64')}`,
      `token b64url ${Buffer.from(tokens.accessToken).toString('base64url')}`,
      // The token straddles the 300-character cut of the text the model reads.
      `${'x'.repeat(280)} ${tokens.accessToken}`,
    ];
    for (const message of echoes) {
      apis.behave.set('/github/user/repos', { status: 422, body: { message }, times: 1 });
      const outcome = await execute(user, 'github__list_repos');
      expect(outcome.error, message).toMatchObject({ code: 'tool_failed', status: 422 });
      const text = JSON.stringify(outcome);
      for (const secret of [tokens.accessToken, tokens.refreshToken]) {
        expect(text, message).not.toContain(secret.slice(0, 12));
        expect(text, message).not.toContain(Buffer.from(secret).toString('base64').slice(4, 16));
      }
    }
  });

  it('provider error text: an API key the service sends back, raw, URL-encoded or base64, is [redacted]', async () => {
    const user = await createTestUser(stack);
    const apiKey = 'lin_api_Zk3/Qp9+Wx2=Rt7?Yu1&Io0';
    await insertAccount(pool, stack.services.keyring, {
      tenantId: user.user.tenantId,
      ownerUserId: user.user.id,
      integration: 'linear',
      label: 'linear-key',
      credential: { type: 'apikey', fields: { apiKey } },
    });
    for (const echoed of [apiKey, encodeURIComponent(apiKey), Buffer.from(`key:${apiKey}`).toString('base64')]) {
      apis.behave.set('/linear/graphql', { status: 400, body: { errors: [{ message: `key ${echoed} refused` }] }, times: 1 });
      const outcome = await execute(user, 'linear__list_teams');
      expect(outcome.error, echoed).toMatchObject({ code: 'tool_failed', status: 400, message: expect.stringContaining('[redacted]') });
      expect(outcome.error.message, echoed).not.toContain(echoed);
      expect(outcome.error.message, echoed).not.toContain('Zk3');
    }
  });

  it("a token endpoint's error text naming the refresh token reaches the model [redacted]", async () => {
    // A token endpoint that refuses with a description quoting the refresh token it was sent.
    const { url } = await world.serve((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        const sent = new URLSearchParams(body).get('refresh_token');
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'invalid_request', error_description: `refresh_token ${sent} is malformed` }));
      });
    });
    const hostile = await world.startStack({ env: { GITHUB_TOKEN_URL: `${url}/token` } });
    const user = await createTestUser(hostile);
    const { tokens } = await world.connectGithub(user, 'refresh-echo', { expired: true, stack: hostile });
    const outcome = await user.call('connections_execute', { name: 'github__get_authenticated_user' }).then((r) => r.body);
    expect(outcome).toMatchObject({ ok: false, error: { code: 'tool_failed', message: expect.stringContaining('[redacted]') } });
    expect(JSON.stringify(outcome)).not.toContain(tokens.refreshToken.slice(0, 12));
  });
});

describe('the audit row of connections_execute', () => {
  it('names the tool, outcome, error code, duration and argument names; never a value, on the own or an organisation account', async () => {
    const admin = await createTestUser(stack, { roles: ['admin'] });
    const eng = await createTestUser(stack, { tenantId: admin.user.tenantId, roles: ['eng'] });
    const own = await world.connectGithub(eng, 'audit-own', { label: 'audit-own' });
    const org = await world.connectGithub(admin, 'audit-org', { tenantScoped: true, sharingRoles: ['eng'], label: 'audit-org' });
    const secret = 'ghp_AuditSecretValue0123456789abcdefXYZ';
    const args = { owner: 'octocat', repo: 'hello-world', title: 'leak?', body: `token ${secret}`, labels: [secret] };
    expect(await execute(eng, 'github__create_issue', args, { account: 'audit-own' })).toMatchObject({ ok: true });
    expect(await execute(eng, 'github__create_issue', args, { account: 'audit-org' })).toMatchObject({ ok: true });
    expect(await execute(eng, 'github__create_issue', { ...args, title: 42 })).toMatchObject({ error: { code: 'invalid_arguments' } });
    const { rows } = await pool.query(
      `SELECT kind, tool, outcome, error_code, duration_ms, arg_names, actor_user_id, owner_user_id, account_id
         FROM audit_log WHERE actor_user_id = $1 ORDER BY id`,
      [eng.user.id],
    );
    const names = ['owner', 'repo', 'title', 'body', 'labels'];
    const row = { kind: 'tool_call', tool: 'github__create_issue', actor_user_id: eng.user.id, arg_names: names };
    expect(rows).toEqual([
      { ...row, outcome: 'ok', error_code: null, owner_user_id: eng.user.id, account_id: own.account.id, duration_ms: expect.any(Number) },
      { ...row, outcome: 'ok', error_code: null, owner_user_id: null, account_id: org.account.id, duration_ms: expect.any(Number) },
      {
        ...row,
        outcome: 'error',
        error_code: 'invalid_arguments',
        owner_user_id: eng.user.id,
        account_id: own.account.id,
        duration_ms: expect.any(Number),
      },
    ]);
    const everything = await pool.query(`SELECT * FROM audit_log WHERE tenant_id = $1`, [eng.user.tenantId]);
    expect(JSON.stringify(everything.rows)).not.toContain('AuditSecretValue');
    expect(JSON.stringify(everything.rows)).not.toContain('leak?');
  });
});

describe("attackers: a model's arguments naming another user's account", () => {
  it('an account id, label or connection id of a colleague, another tenant or an organisation account not shared with the caller fails as an unknown one, and the audit row shows none of it', async () => {
    const admin = await createTestUser(stack, { roles: ['admin'] });
    const tenantId = admin.user.tenantId;
    const victim = await createTestUser(stack, { tenantId });
    const victimAccount = (await world.connectGithub(victim, 'victim-gh', { label: 'victim-label' })).account;
    const connectionId = '22222222-3333-4444-5555-666666666666';
    await pool.query(
      `INSERT INTO connection_attempts (id, tenant_id, user_id, integration, auth_mode, status, account_id, expires_at)
       VALUES ($1, $2, $3, 'github', 'oauth2', 'CONNECTED', $4, now())`,
      [connectionId, tenantId, victim.user.id, victimAccount.id],
    );
    const orgAccount = (
      await world.connectGithub(admin, 'org-finance', { tenantScoped: true, sharingRoles: ['finance'], label: 'finance-bot' })
    ).account;
    // Both intruders have accounts of their own, so a selector that is not theirs must not fall back to one.
    const colleague = await createTestUser(stack, { tenantId });
    await world.connectGithub(colleague, 'colleague-gh', { label: 'colleague-own' });
    const outsider = await createTestUser(stack);
    await world.connectGithub(outsider, 'outsider-gh', { label: 'outsider-own' });

    const targets = [victimAccount.id, 'victim-label', connectionId, orgAccount.id, 'finance-bot'];
    const unknownLike = (selector: string) => selector.replace(/.$/, (c) => (c === '9' ? '8' : '9'));
    const reached = () =>
      apis.requests.filter((r) => ['victim-gh', 'org-finance', 'colleague-gh', 'outsider-gh'].includes(r.subject ?? '')).length;
    const before = reached();
    for (const intruder of [colleague, outsider]) {
      for (const selector of targets) {
        const unknown = unknownLike(selector);
        const real = await intruder.call('connections_execute', {
          name: 'github__list_repos',
          arguments: { perPage: 1 },
          account: selector,
        });
        const made = await intruder.call('connections_execute', {
          name: 'github__list_repos',
          arguments: { perPage: 1 },
          account: unknown,
        });
        expect(real.status, selector).toBe(made.status);
        expect(JSON.stringify(real.body).split(selector).join('<sel>'), selector).toBe(
          JSON.stringify(made.body).split(unknown).join('<sel>'),
        );
        expect(real.body, selector).toMatchObject({ ok: false, error: { code: 'not_connected' } });
      }
      // What search shows the intruder: their own account, nothing of the others'.
      const hit = (await search(intruder, { query: 'list repos', provider: 'github' })).body.results[0];
      expect(hit.accounts.map((a: { label: string }) => a.label)).toEqual([intruder === colleague ? 'colleague-own' : 'outsider-own']);
    }
    expect(reached() - before).toBe(0);

    const { rows } = await pool.query(`SELECT * FROM audit_log WHERE actor_user_id = ANY($1)`, [[colleague.user.id, outsider.user.id]]);
    expect(rows).toHaveLength(2 * 2 * targets.length);
    for (const row of rows)
      expect(row).toMatchObject({ outcome: 'error', error_code: 'not_connected', account_id: null, owner_user_id: null });
    const text = JSON.stringify(rows);
    for (const leak of [...targets, victim.user.id, 'victim-gh', 'org-finance']) expect(text).not.toContain(leak);
  });
});
