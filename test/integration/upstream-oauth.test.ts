import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { connectionWorkflowId } from '../../core/ids.js';
import { upstreamEntrySchema } from '../../core/upstream-entry.js';
import { issuerCallbackUrl } from '../../core/urls.js';
import { readCredential } from '../../features/accounts/store/accounts.js';
import { findClientRegistration } from '../../platform/database/mcp-client-registrations.js';
import { addTenantUpstream, removeTenantUpstream } from '../../platform/database/tenant-upstream-servers.js';
import { consentAs, signedInPage } from '../support/consent.js';
import { createTestUser, startWorld, type TestUser } from '../support/harness.js';
import { decodedHistoryText, keyringDecoder, rawHistoriesOf } from '../support/history-text.js';
import { startMcpAuthWorld } from '../support/mcp-auth-world.js';
import type { TestAuthServer } from '../support/oauth-server.js';
import { plantGrantSecrets } from '../support/planted-secrets.js';

// An upstream MCP server with `auth: oauth2`, end to end on real parts: the official SDK's MCP
// server behind oidc-provider (dynamic registration, RFC 8707 audience-bound opaque tokens, `iss`,
// rotating refresh tokens, a 403 insufficient_scope for write_note without mcp:write), connected
// through Switchboard's portal link in chromium and used through the JSON API.

// CIMD is on at the authorization server; Switchboard's own document needs an https PUBLIC_BASE_URL
// (the stack's is http), so it registers dynamically — the CIMD path is tested in mcp-auth.test.ts.
const upstream = await startMcpAuthWorld();
const NAME = 'acme-notes';
const world = await startWorld({
  env: {
    // The test's authorization server and MCP server listen on 127.0.0.1: the operator allows it.
    UPSTREAM_MCP_ALLOWED_HOSTS: '127.0.0.1',
    UPSTREAM_MCP_SERVERS: JSON.stringify([{ name: NAME, displayName: 'Acme Notes', url: upstream.mcpUrl, auth: { type: 'oauth2' } }]),
    CONNECTION_TTL_SEC: '600',
  },
});
const { stack } = world;
const { pool, keyring } = stack.services;
const browser = await world.browser();
const alice = await world.user({ email: 'alice@example.com' });
const mallory = await world.user({ tenantId: alice.user.tenantId, email: 'mallory@example.com' });
const authServer = { issuer: upstream.issuer } as TestAuthServer;

/** Every secret the authorization server handed out or received: none may reach logs, history or answers. */
const planted = new Set<string>();
plantGrantSecrets(upstream.provider, planted);

afterAll(async () => {
  await world.stop();
  await upstream.close();
});

const execute = (user: TestUser, tool: string, args: Record<string, unknown> = {}) =>
  user.call('connections_execute', { name: `${NAME}__${tool}`, arguments: args }).then((r) => r.body);

async function accountOf(user: TestUser) {
  const { rows } = await pool.query(
    `SELECT id, status, granted_scopes, step_up_scopes FROM accounts WHERE owner_user_id = $1 AND integration = $2`,
    [user.user.id, NAME],
  );
  return rows[0] as { id: string; status: string; granted_scopes: string[]; step_up_scopes: string[] } | undefined;
}

/** connect → the portal link in a signed-in browser → the authorization server's consent as `login` → CONNECTED. */
async function connectThroughPortal(user: TestUser, login: string): Promise<{ page: Page; authorizeUrl: URL; connectionId: string }> {
  const { status, body } = await user.call('connect', { integration: NAME });
  expect(status).toBe(200);
  expect(body.type).toBe('oauth2');
  const waiting = user.call('wait_for_connection', { connectionId: body.connectionId, timeoutSec: 60 });
  waiting.catch(() => {}); // awaited below; a failure before then must not become an unhandled rejection
  const page = await signedInPage(browser, user);
  // The authorization request as the browser sent it (the server then moves on to its login page).
  const authorizeRequest = page.waitForRequest((r) => new URL(r.url()).origin === upstream.issuer);
  await page.goto(body.url);
  await page
    .waitForURL((url) => url.href.startsWith(upstream.issuer), { timeout: 10_000 })
    .catch(async (err) => {
      throw new Error(`the connect link did not lead to the consent page: ${await page.locator('body').textContent()}`, { cause: err });
    });
  const authorizeUrl = new URL((await authorizeRequest).url());
  planted.add(authorizeUrl.searchParams.get('state') ?? '');
  const callback = await consentAs(page, authServer, login);
  planted.add(callback.searchParams.get('code') ?? '');
  expect(await page.locator('h1').textContent()).toBe('Connected');
  expect((await waiting).body).toMatchObject({ status: 'CONNECTED' });
  return { page, authorizeUrl, connectionId: body.connectionId };
}

let firstConnection: string;

describe('connect an oauth2 upstream through the portal', () => {
  it('is listed as an integration that needs a connection', async () => {
    const { body } = await alice.call('list_integrations');
    expect(body.integrations).toContainEqual({ name: NAME, version: '1.0.0', connected: false });
    expect(await execute(alice, 'whoami')).toMatchObject({ ok: false, error: { code: 'not_connected' } });
  });

  it('discovers the authorization server, registers Switchboard once, and asks with PKCE, resource and the challenged scope', async () => {
    const { page, authorizeUrl, connectionId } = await connectThroughPortal(alice, 'alice-at-acme');
    firstConnection = connectionId;
    await page.context().close();
    expect(authorizeUrl.origin).toBe(upstream.issuer);
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizeUrl.searchParams.get('resource')).toBe(upstream.mcpUrl);
    expect(authorizeUrl.searchParams.get('scope')).toBe('mcp:read');
    // The authorization server's own callback (RFC 9700 §4.4.2): a code of another server is refused there.
    expect(authorizeUrl.searchParams.get('redirect_uri')).toBe(issuerCallbackUrl({ PUBLIC_BASE_URL: stack.baseUrl }, upstream.issuer));
    expect(upstream.registrations).toBe(1);
    const registration = await findClientRegistration(pool, keyring, upstream.issuer);
    expect(registration?.clientId).toBe(authorizeUrl.searchParams.get('client_id'));
    const account = await accountOf(alice);
    expect(account).toMatchObject({ status: 'active', granted_scopes: ['mcp:read'] });
    const { body } = await alice.call('list_integrations');
    expect(body.integrations).toContainEqual({ name: NAME, version: '1.0.0', connected: true });
  }, 60_000);

  it('searches and executes the server’s tools with the user’s own token', async () => {
    const { body } = await alice.call('search_tools', { query: 'who the token is for', integration: NAME });
    expect(body.tools.map((t: { name: string }) => t.name)).toContain('acme_notes_whoami');
    expect(await execute(alice, 'whoami')).toEqual({ ok: true, result: 'alice-at-acme' });
    const batch = await alice.call('execute_tools', { executions: [{ tool: 'acme_notes_whoami', args: {} }] });
    expect(batch.body.results).toEqual([{ result: 'alice-at-acme' }]);
  });

  it('a second user connects their own account; the registration is reused', async () => {
    const bob = await world.user({ tenantId: alice.user.tenantId });
    const { page } = await connectThroughPortal(bob, 'bob-at-acme');
    await page.context().close();
    expect(upstream.registrations).toBe(1);
    expect(await execute(bob, 'whoami')).toEqual({ ok: true, result: 'bob-at-acme' });
    expect(await execute(alice, 'whoami')).toEqual({ ok: true, result: 'alice-at-acme' });
  }, 60_000);
});

describe("a tenant's own oauth2 server", () => {
  it('connects per user like the operator’s, with a client registration of the tenant’s own, and is nobody else’s', async () => {
    const grace = await world.user();
    await addTenantUpstream(pool, keyring, {
      tenantId: grace.user.tenantId,
      entry: upstreamEntrySchema.parse({ name: 'team-notes', displayName: 'Team Notes', url: upstream.mcpUrl, auth: { type: 'oauth2' } }),
    });
    const registrations = upstream.registrations;
    const { body } = await grace.call('connect', { integration: 'team-notes' });
    const page = await signedInPage(browser, grace);
    await page.goto(body.url);
    await consentAs(page, authServer, 'grace-at-acme');
    expect(await page.locator('h1').textContent()).toBe('Connected');
    await page.context().close();
    // Not the deployment's client for the operator's servers: users' consent to that one is not reused.
    expect(upstream.registrations).toBe(registrations + 1);
    const tenantClient = await findClientRegistration(pool, keyring, upstream.issuer, `tenant:${grace.user.tenantId}`);
    const operatorClient = await findClientRegistration(pool, keyring, upstream.issuer);
    expect(tenantClient?.clientId).toBeDefined();
    expect(tenantClient?.clientId).not.toBe(operatorClient?.clientId);
    const own = await grace.call('connections_execute', { name: 'team-notes__whoami', arguments: {} });
    expect(own.body).toEqual({ ok: true, result: 'grace-at-acme' });
    // Another tenant's user: the integration does not exist for them.
    expect((await alice.call('connect', { integration: 'team-notes' })).status).toBe(404);
    const other = await alice.call('connections_execute', { name: 'team-notes__whoami', arguments: {} });
    expect(other.body).toMatchObject({ ok: false, error: { code: 'not_found' } });

    // Its saved tool listing is the tenant's own, and goes with the server.
    const saved = async () =>
      (
        await pool.query('SELECT catalog_key FROM upstream_tool_catalogs WHERE starts_with(catalog_key, $1)', [
          `tenant:${grace.user.tenantId}:`,
        ])
      ).rows;
    expect(await saved()).toEqual([{ catalog_key: `tenant:${grace.user.tenantId}:team-notes:${upstream.mcpUrl}` }]);
    expect(await removeTenantUpstream(pool, grace.user.tenantId, 'team-notes')).toBe(true);
    expect(await saved()).toEqual([]);
  }, 60_000);
});

describe('a tenant oauth2 server at an internal address', () => {
  it('is never reached: not by drawing the portal, not by opening its connect link (egress_refused)', async () => {
    const hits: string[] = [];
    const internal = await world.serve((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      res.statusCode = 401;
      res.end();
    });
    const heidi = await world.user();
    // `localhost` resolves to loopback and is not on UPSTREAM_MCP_ALLOWED_HOSTS (127.0.0.1 is).
    await addTenantUpstream(pool, keyring, {
      tenantId: heidi.user.tenantId,
      entry: upstreamEntrySchema.parse({
        name: 'sneaky',
        displayName: 'Sneaky',
        url: `http://localhost:${internal.port}/admin/do?thing=1`,
        auth: { type: 'oauth2' },
      }),
    });
    const page = await signedInPage(browser, heidi);
    await page.goto(`${stack.baseUrl}/portal/integrations`);
    await page.goto(`${stack.baseUrl}/portal/integrations/sneaky`);
    const { body } = await heidi.call('connect', { integration: 'sneaky' });
    await page.goto(body.url);
    expect(await page.locator('h1').textContent()).toBe('Cannot connect now');
    expect(await page.locator('body').textContent()).toContain('egress_refused');
    await page.context().close();
    expect(hits).toEqual([]);
  }, 60_000);
});

describe('search before connecting', () => {
  it('a user who has not connected finds the tools, in a process that never listed them (the shared catalog)', async () => {
    // A second Switchboard process on the same database (its own worker and task queue).
    const fresh = await world.startStack({ env: { DATABASE_SCHEMA: stack.services.config.DATABASE_SCHEMA } });
    const frank = await createTestUser(fresh);
    const { body } = await frank.call('search_tools', { query: 'writes a note', integration: NAME });
    expect(body.tools.map((t: { name: string }) => t.name)).toContain('acme_notes_write_note');
    const schema = await frank.call('get_tool_schema', { tool: 'acme_notes_write_note' });
    expect(schema.body.schema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
    expect(await execute(frank, 'write_note', { text: 'x' })).toMatchObject({
      ok: false,
      error: { code: 'not_connected', integration: NAME },
    });
  });
});

describe('the portal', () => {
  it('a Connect button leads to the discovered consent page, in a process that has not asked for consent yet', async () => {
    // A fresh Switchboard: the consent page's origin is learned when the page with the button is drawn,
    // so the page's form-action allows the redirect to it.
    const fresh = await world.startStack();
    const erin = await createTestUser(fresh);
    const page = await signedInPage(browser, erin);
    const shown = await page.goto(`${fresh.baseUrl}/portal/integrations/${NAME}`);
    expect(shown?.headers()['content-security-policy']).toMatch(new RegExp(`form-action [^;]*${upstream.issuer}`));
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await consentAs(page, authServer, 'erin-at-acme');
    expect(await page.locator('h1').textContent()).toBe('Connected');
    await page.context().close();
    expect(await execute(erin, 'whoami')).toEqual({ ok: true, result: 'erin-at-acme' });
  }, 60_000);
});

describe('tokens', () => {
  it('refreshes near expiry with the resource, rotating the refresh token', async () => {
    const account = (await accountOf(alice))!;
    const before = await readCredential(pool, keyring, alice.user.tenantId, account.id);
    await pool.query(`UPDATE accounts SET access_expires_at = now() WHERE id = $1`, [account.id]);
    const refreshes = upstream.grants.refresh_token ?? 0;
    expect(await execute(alice, 'whoami')).toEqual({ ok: true, result: 'alice-at-acme' });
    expect(upstream.grants.refresh_token).toBe(refreshes + 1);
    const after = await readCredential(pool, keyring, alice.user.tenantId, account.id);
    expect(after?.refreshToken).not.toBe(before?.refreshToken);
    expect(after?.oauth).toMatchObject({ issuer: upstream.issuer, resource: upstream.mcpUrl });
  });

  it('answers a 401 with one refresh and one retry', async () => {
    const account = (await accountOf(alice))!;
    const credential = await readCredential(pool, keyring, alice.user.tenantId, account.id);
    // The authorization server forgets the access token (it is still within its stored expiry).
    await (await upstream.provider.AccessToken.find(credential!.accessToken!))?.destroy();
    const refreshes = upstream.grants.refresh_token ?? 0;
    expect(await execute(alice, 'whoami')).toEqual({ ok: true, result: 'alice-at-acme' });
    expect(upstream.grants.refresh_token).toBe(refreshes + 1);
  });

  it('step-up: a 403 insufficient_scope answers that call needs_reauth with the reason; the account keeps working; the next connect asks for the wider scope', async () => {
    const answer = await execute(alice, 'write_note', { text: 'hello' });
    expect(answer).toMatchObject({ ok: false, error: { code: 'needs_reauth', integration: NAME } });
    expect(answer.error.reason).toContain('mcp:write');
    expect(answer.error.message).toContain('Writing notes needs mcp:write');
    // The account still does what it was granted (were it an organisation account, for every member).
    expect(await accountOf(alice)).toMatchObject({ status: 'active', step_up_scopes: ['mcp:read', 'mcp:write'] });
    expect(await execute(alice, 'whoami')).toEqual({ ok: true, result: 'alice-at-acme' });

    const { page, authorizeUrl } = await connectThroughPortal(alice, 'alice-at-acme');
    await page.context().close();
    expect(authorizeUrl.searchParams.get('scope')?.split(' ').sort()).toEqual(['mcp:read', 'mcp:write']);
    // The same account, reconnected in place with the wider grant.
    expect(await accountOf(alice)).toMatchObject({ status: 'active', step_up_scopes: [] });
    expect((await accountOf(alice))!.granted_scopes.sort()).toEqual(['mcp:read', 'mcp:write']);
    expect(await execute(alice, 'write_note', { text: 'hello' })).toEqual({ ok: true, result: 'noted for alice-at-acme: hello' });
  }, 60_000);

  it('a grant revoked at the authorization server makes the account needs_reauth (401, refresh refused)', async () => {
    const carol = await world.user({ tenantId: alice.user.tenantId });
    const { page } = await connectThroughPortal(carol, 'carol-at-acme');
    await page.context().close();
    const account = (await accountOf(carol))!;
    const credential = await readCredential(pool, keyring, carol.user.tenantId, account.id);
    const refresh = await upstream.provider.RefreshToken.find(credential!.refreshToken!);
    await (await upstream.provider.Grant.find(refresh!.grantId!))?.destroy();
    await refresh!.destroy();
    await (await upstream.provider.AccessToken.find(credential!.accessToken!))?.destroy();
    const answer = await execute(carol, 'whoami');
    expect(answer).toMatchObject({ ok: false, error: { code: 'needs_reauth', integration: NAME } });
    expect((await accountOf(carol))!.status).toBe('needs_reauth');
  }, 60_000);

  it('disconnect revokes the refresh token at the authorization server', async () => {
    const dave = await world.user({ tenantId: alice.user.tenantId });
    const { page } = await connectThroughPortal(dave, 'dave-at-acme');
    await page.context().close();
    const account = (await accountOf(dave))!;
    const credential = await readCredential(pool, keyring, dave.user.tenantId, account.id);
    expect(await upstream.provider.RefreshToken.find(credential!.refreshToken!)).toBeDefined();
    const { body } = await dave.call('disconnect', { account: account.id });
    expect(body).toMatchObject({ revoked: true });
    expect(await upstream.provider.RefreshToken.find(credential!.refreshToken!)).toBeUndefined();
  }, 60_000);
});

describe('attackers', () => {
  it('another user of the tenant who opens the connect link exchanges nothing and gets no account', async () => {
    const { body } = await alice.call('connect', { integration: NAME });
    const page = await signedInPage(browser, mallory);
    const grants = upstream.grants.authorization_code ?? 0;
    await page.goto(body.url);
    expect(await page.locator('h1').textContent()).toBe('Wrong account');
    await page.context().close();
    expect(upstream.grants.authorization_code ?? 0).toBe(grants);
    expect(await accountOf(mallory)).toBeUndefined();
  });

  it('a code delivered to another callback than its authorization server’s own (a mix-up) exchanges nothing, even in the right browser', async () => {
    const { body } = await alice.call('connect', { integration: NAME });
    const page = await signedInPage(browser, alice);
    const own = issuerCallbackUrl({ PUBLIC_BASE_URL: stack.baseUrl }, upstream.issuer);
    // The consent's answer is held on its way to the server's own callback…
    await page.route(
      (url) => url.href.startsWith(`${own}?`),
      (route) => route.abort(),
    );
    const held = page.waitForRequest((r) => r.url().startsWith(`${own}?`));
    await page.goto(body.url);
    await page.waitForURL((url) => url.href.startsWith(upstream.issuer));
    await page.locator('input[name="login"]').fill('alice-at-acme');
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    const response = new URL((await held).url());
    planted.add(response.searchParams.get('code') ?? '');
    // …and arrives at the shared one instead, as a code of another server's flow would.
    const grants = upstream.grants.authorization_code ?? 0;
    await page.goto(`${stack.baseUrl}/oauth/callback${response.search}`);
    expect(await page.locator('h1').textContent()).toBe('Sign-in not recognised');
    await page.context().close();
    expect(upstream.grants.authorization_code ?? 0).toBe(grants);
  }, 60_000);

  it('a server whose metadata names another resource is refused before any consent or registration', async () => {
    const hostile = await world.serve((req, res) => {
      const origin = `http://${req.headers.host}`;
      if (req.url?.startsWith('/.well-known/oauth-protected-resource')) {
        // Claims to be the honest server, so a token for it would be asked for here.
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ resource: upstream.mcpUrl, authorization_servers: [upstream.issuer] }));
        return;
      }
      res.statusCode = 401;
      res.setHeader('www-authenticate', `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`);
      res.end();
    });
    const other = await world.startStack({
      env: {
        UPSTREAM_MCP_SERVERS: JSON.stringify([
          { name: 'hostile', displayName: 'Hostile', url: `${hostile.url}/mcp`, auth: { type: 'oauth2' } },
        ]),
      },
    });
    const eve = await createTestUser(other);
    const { body } = await eve.call('connect', { integration: 'hostile' });
    const page = await signedInPage(browser, eve);
    const registrations = upstream.registrations;
    await page.goto(body.url);
    expect(await page.locator('h1').textContent()).toBe('Cannot connect now');
    expect(await page.locator('body').textContent()).toContain('resource_mismatch');
    await page.context().close();
    expect(upstream.registrations).toBe(registrations);
  }, 60_000);

  it('a server that names another authorization server after the consent gets no refresh token sent there', async () => {
    const hostileRequests: string[] = [];
    const hostile = await world.serve((req, res) => {
      hostileRequests.push(req.url ?? '');
      res.statusCode = 404;
      res.end();
    });
    const account = (await accountOf(alice))!;
    upstream.authorizationServers = [hostile.url];
    try {
      await pool.query(`UPDATE accounts SET access_expires_at = now() WHERE id = $1`, [account.id]);
      const refreshes = upstream.grants.refresh_token ?? 0;
      expect(await execute(alice, 'whoami')).toEqual({ ok: true, result: 'alice-at-acme' });
      // Refreshed at the issuer the consent was given to, for the resource it was given for.
      expect(upstream.grants.refresh_token).toBe(refreshes + 1);
      expect(hostileRequests).toEqual([]);
    } finally {
      upstream.authorizationServers = [upstream.issuer];
    }
  });

  it('no token, code, verifier or client secret reaches a workflow history (raw, or decoded as an operator reads it), the logs or the audit log', async () => {
    const registration = await findClientRegistration(pool, keyring, upstream.issuer);
    if (registration?.clientSecret) planted.add(registration.clientSecret);
    const secrets = [...planted].filter((s) => s.length >= 8);
    expect(secrets.length).toBeGreaterThan(5);
    // Every run of this file — connections, their waits, the batches that used the tokens — raw and decoded.
    const histories = await rawHistoriesOf(stack.services.temporal, stack.env.TEMPORAL_TASK_QUEUE);
    expect(histories.map((h) => h.workflowId)).toContain(connectionWorkflowId(firstConnection));
    const decoded = await Promise.all(histories.map((h) => decodedHistoryText(h.history, keyringDecoder(keyring))));
    expect(decoded.join('\n')).toContain('"status":"CONNECTED"');
    const text = `${decoded.join('\n')}\n${stack.logs.text()}\n${JSON.stringify((await pool.query('SELECT * FROM audit_log')).rows)}`;
    for (const secret of secrets) expect(text).not.toContain(secret);
  });
});
