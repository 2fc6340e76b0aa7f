import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { consentAtDemo } from '../../bin/support/demo-person.js';
import { loadConfig } from '../../core/config.js';
import { upstreamEntrySchema } from '../../core/upstream-entry.js';
import { startDemo } from '../../demo/index.js';
import { readCredential } from '../../features/accounts/store/accounts.js';
import { getAttempt } from '../../features/connections/store/connection-attempts.js';
import { findClientRegistration } from '../../platform/database/mcp-client-registrations.js';
import { addTenantUpstream } from '../../platform/database/tenant-upstream-servers.js';
import { tokenRefreshes } from '../../platform/telemetry/metrics.js';
import { allProviders } from '../../surfaces/compose-services.js';
import { signedInPage } from '../support/consent.js';
import { startWorld, type TestUser } from '../support/harness.js';
import { decodedHistoryText, keyringDecoder, rawHistoriesOf } from '../support/history-text.js';
import { rawRequest } from '../support/raw-http.js';

// The demo integration `npm start` serves (demo/), end to end on real parts: its oidc-provider
// authorization server and its MCP server on a loopback port, reached by Switchboard only through
// the remote-MCP path (discovery, dynamic registration, PKCE + resource), consented in chromium.
// Its access tokens live 61 seconds here, so each is within Switchboard's one-minute refresh margin
// a second after it is issued: refreshes happen within the test, on their own.

const stateFile = join(mkdtempSync(join(tmpdir(), 'switchboard-demo-state-')), 'demo-state.json');
const world = await startWorld({ demo: { accessTokenTtlSec: 61, stateFile }, env: { CONNECTION_TTL_SEC: '600' } });
const { stack } = world;
const demo = stack.demo!;
const browser = await world.browser();
const alice = await world.user({ email: 'alice@example.com' });
const mallory = await world.user({ tenantId: alice.user.tenantId, email: 'mallory@example.com' });

const execute = (user: TestUser, tool: string, args: Record<string, unknown> = {}) =>
  user.call('connections_execute', { name: `demo__${tool}`, arguments: args }).then((r) => r.body);

/** connect → the link in the user's signed-in browser → the demo's sign-in and consent → CONNECTED. */
async function connectDemo(user: TestUser, account: string) {
  const { body } = await user.call('connect', { integration: 'demo' });
  const waiting = user.call('wait_for_connection', { connectionId: body.connectionId, timeoutSec: 60 });
  waiting.catch(() => {});
  const page = await signedInPage(browser, user);
  const authorize = page.waitForRequest((r) => r.url().startsWith(`${demo.origin}/auth`));
  await page.goto(body.url);
  await consentAtDemo(page, demo.origin, { account });
  const heading = await page.locator('h1').textContent();
  await page.context().close();
  return { heading, wait: (await waiting).body, authorizeUrl: new URL((await authorize).url()), connectionId: body.connectionId };
}

afterAll(async () => {
  await world.stop();
  rmSync(dirname(stateFile), { recursive: true, force: true });
});

describe('the demo integration', () => {
  it('is listed as "demo", labelled a demo, and needs a connection', async () => {
    const { body } = await alice.call('list_integrations');
    expect(body.integrations).toContainEqual({ name: 'demo', version: '1.0.0', connected: false });
    const page = await signedInPage(browser, alice);
    await page.goto(`${stack.baseUrl}/portal/integrations`);
    const row = page.locator('tr', { hasText: 'Demo Tasks' });
    await expect.poll(() => row.textContent()).toMatch(/Demo Tasks \(demo\)\s*demo.*Demo: .*Development only/s);
    await page.context().close();
    expect(await execute(alice, 'whoami')).toMatchObject({ ok: false, error: { code: 'not_connected' } });
  });

  it('connects the standard way: discovered authorization server, dynamic registration, PKCE S256 and the resource', async () => {
    const { heading, wait, authorizeUrl } = await connectDemo(alice, 'alice-demo');
    expect(heading).toBe('Connected');
    expect(wait).toEqual({ status: 'CONNECTED' });
    expect(authorizeUrl.origin).toBe(demo.origin);
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizeUrl.searchParams.get('resource')).toBe(demo.mcpUrl);
    expect(authorizeUrl.searchParams.get('scope')).toBe('tasks:read tasks:write');
    expect(stack.demoLog).toContainEqual(expect.stringMatching(/^registered the client "Switchboard/));
    expect(stack.demoLog).toContain('alice-demo signed in');
    expect(stack.demoLog).toContainEqual(expect.stringMatching(/^issued alice-demo an access token \(61 s\)/));
    const { body } = await alice.call('list_integrations');
    expect(body.integrations).toContainEqual({ name: 'demo', version: '1.0.0', connected: true });
  }, 60_000);

  it('offers reads, writes and a destructive delete, which waits for approval', async () => {
    const { body: found } = await alice.call('connections_search', { query: 'demo tasks', provider: 'demo', limit: 10 });
    const access = Object.fromEntries(found.results.map((r: { name: string; access: string }) => [r.name, r.access]));
    expect(access).toEqual({
      demo__whoami: 'read',
      demo__list_tasks: 'read',
      demo__get_task: 'read',
      demo__create_task: 'write',
      demo__complete_task: 'write',
      demo__delete_task: 'destructive',
    });
    const { body: searched } = await alice.call('search_tools', { query: 'demo tasks' });
    expect(searched.tools[0].integration).toBe('demo');

    expect(await execute(alice, 'whoami')).toMatchObject({ ok: true, result: { account: 'alice-demo' } });
    const created = await execute(alice, 'create_task', { title: 'Try the demo' });
    expect(created).toMatchObject({ ok: true, result: { task: { title: 'Try the demo', done: false } } });
    const id = created.result.task.id;
    expect(await execute(alice, 'complete_task', { id })).toMatchObject({ ok: true, result: { task: { id, done: true } } });
    const listed = await execute(alice, 'list_tasks', { status: 'done' });
    expect(listed.result.tasks.map((t: { id: string }) => t.id)).toEqual([id]);
    expect(await execute(alice, 'get_task', { id: 't_00000000' })).toMatchObject({ ok: false, error: { code: 'tool_failed' } });
    expect(await execute(alice, 'delete_task', { id })).toMatchObject({ ok: false, error: { code: 'approval_required' } });
  }, 60_000);

  it('refreshes the access token on its own when it nears expiry, and the demo counts it', async () => {
    // Counted from now: on a slow machine an earlier test's calls may already have refreshed once.
    const seen = (await execute(alice, 'whoami')).result?.token?.refreshes ?? 0;
    const before = (await tokenRefreshes.get()).values.find((v) => v.labels.provider === 'demo' && v.labels.outcome === 'ok')?.value ?? 0;
    await expect
      .poll(async () => (await execute(alice, 'whoami')).result?.token?.refreshes, { timeout: 25_000, interval: 500 })
      .toBeGreaterThan(seen);
    expect(stack.demoLog).toContainEqual(expect.stringMatching(/^refreshed alice-demo's access token/));
    const after = (await tokenRefreshes.get()).values.find((v) => v.labels.provider === 'demo' && v.labels.outcome === 'ok')?.value ?? 0;
    expect(after).toBeGreaterThan(before);
  }, 40_000);

  it('keeps its state across a restart (npm start keeps it in the data directory): the account still answers and refreshes', async () => {
    const before = (await execute(alice, 'whoami')).result.token.refreshes;
    await demo.close();
    const restarted = await startDemo({
      port: Number(new URL(demo.origin).port),
      stateFile,
      accessTokenTtlSec: 61,
      log: (line) => stack.demoLog.push(line),
    });
    world.onStop(() => restarted.close());
    const created = await execute(alice, 'create_task', { title: 'After the restart' });
    expect(created).toMatchObject({ ok: true });
    const listed = await execute(alice, 'list_tasks');
    expect(listed.result.tasks.map((t: { title: string }) => t.title)).toEqual(
      expect.arrayContaining(['Try the demo', 'After the restart']),
    );
    await expect
      .poll(async () => (await execute(alice, 'whoami')).result?.token?.refreshes, { timeout: 20_000, interval: 500 })
      .toBeGreaterThan(before);
  }, 30_000);

  it('no access token, refresh token or dynamically registered client secret of the demo in any history, raw or decoded as an operator reads it', async () => {
    const { pool, keyring } = stack.services;
    const [account] = (await alice.call('list_connections', { integration: 'demo' })).body.connections;
    const credential = await readCredential(pool, keyring, alice.user.tenantId, account.id);
    const { rows } = await pool.query('SELECT issuer FROM mcp_client_registrations');
    const registrations = await Promise.all(rows.map((r: { issuer: string }) => findClientRegistration(pool, keyring, r.issuer)));
    const secrets = [credential?.accessToken, credential?.refreshToken, ...registrations.map((r) => r?.clientSecret)].filter(
      (s): s is string => typeof s === 'string' && s.length >= 8,
    );
    expect(secrets.length).toBeGreaterThanOrEqual(2);
    const histories = await rawHistoriesOf(stack.services.temporal, stack.env.TEMPORAL_TASK_QUEUE);
    const decoded = (await Promise.all(histories.map((h) => decodedHistoryText(h.history, keyringDecoder(keyring))))).join('\n');
    expect(decoded).toContain('"status":"CONNECTED"');
    for (const secret of secrets) expect(decoded.includes(secret)).toBe(false);
  });

  it('disconnect revokes the grant at the demo', async () => {
    expect((await alice.call('disconnect', { integration: 'demo' })).body).toMatchObject({ disconnected: true, revoked: true });
    expect(stack.demoLog).toContainEqual(expect.stringMatching(/^revoked alice-demo's grant/));
    expect(await execute(alice, 'whoami')).toMatchObject({ ok: false, error: { code: 'not_connected' } });
  });
});

describe('attackers', () => {
  it("another user opening a demo connect link gets Wrong account; nothing reaches the demo, Alice's attempt stays pending", async () => {
    const { body } = await alice.call('connect', { integration: 'demo' });
    const page = await signedInPage(browser, mallory);
    const toDemo: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(demo.origin)) toDemo.push(r.url());
    });
    await page.goto(body.url);
    expect(await page.locator('h1').textContent()).toBe('Wrong account');
    expect(toDemo).toEqual([]);
    await page.context().close();
    expect((await getAttempt(stack.services.pool, body.connectionId))?.status).toBe('PENDING');
  });

  it("another user handed Alice's demo consent page consents there, but the callback refuses them and stores nothing", async () => {
    const { body } = await alice.call('connect', { integration: 'demo' });
    const alicePage = await signedInPage(browser, alice);
    const consentUrl = (await alicePage.request.get(body.url, { maxRedirects: 0 })).headers().location;
    expect(consentUrl.startsWith(demo.origin)).toBe(true);
    await alicePage.context().close();
    const page = await signedInPage(browser, mallory);
    await page.goto(consentUrl);
    await consentAtDemo(page, demo.origin, { account: 'mallory-demo' });
    expect(await page.locator('h1').textContent()).toBe('Wrong account');
    await page.context().close();
    expect((await getAttempt(stack.services.pool, body.connectionId))?.status).toBe('PENDING');
    const { rows } = await stack.services.pool.query(`SELECT 1 FROM accounts WHERE integration = 'demo' AND owner_user_id = ANY($1)`, [
      [alice.user.id, mallory.user.id],
    ]);
    expect(rows).toEqual([]);
  }, 60_000);

  it("a tenant's own server at the demo's address (or any loopback spelling of it) is refused: the exception is the demo's alone", async () => {
    const admin = await world.user({ roles: ['member', 'admin'] });
    // Taking the demo's name (or its tool prefix) is refused outright, as for any deployment integration.
    for (const name of ['demo', 'demo-tasks']) {
      expect(() =>
        stack.services.registry.tenantEntry(JSON.stringify({ name, displayName: 'Mine', url: 'https://mcp.example.com/mcp' })),
      ).toThrow(/deployment's integration demo/);
    }
    const port = new URL(demo.origin).port;
    const entries = [
      { name: 'my-tasks', displayName: 'Mine', url: demo.mcpUrl, auth: { type: 'none' } },
      { name: 'my-tasks-oauth', displayName: 'Mine', url: demo.mcpUrl, auth: { type: 'oauth2' } },
      { name: 'my-tasks-localhost', displayName: 'Mine', url: `http://localhost:${port}/mcp`, auth: { type: 'none' } },
      { name: 'my-tasks-decimal', displayName: 'Mine', url: `http://2130706433:${port}/mcp`, auth: { type: 'none' } },
    ];
    for (const entry of entries) {
      await addTenantUpstream(stack.services.pool, stack.services.keyring, {
        tenantId: admin.user.tenantId,
        entry: upstreamEntrySchema.parse(entry),
      });
    }
    await stack.services.registry.forgetTenant(admin.user.tenantId);
    for (const name of ['my-tasks', 'my-tasks-localhost', 'my-tasks-decimal']) {
      const answer = await admin.call('connections_execute', { name: `${name}__whoami`, arguments: {} });
      expect(answer.body, name).toMatchObject({ ok: false, error: { message: expect.stringMatching(/loopback address/) } });
    }
    // The oauth2 one: the connect link's discovery is refused before any person is sent anywhere.
    const { body } = await admin.call('connect', { integration: 'my-tasks-oauth' });
    const page = await signedInPage(browser, admin);
    const toDemo: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(demo.origin)) toDemo.push(r.url());
    });
    await page.goto(body.url);
    expect(await page.locator('body').textContent()).toMatch(/could not be prepared \(egress_refused\)/);
    expect(toDemo).toEqual([]);
    await page.context().close();
  }, 60_000);

  it("the operator's own server at the demo's address is refused too: only the demo provider carries the exception", async () => {
    const config = loadConfig({
      UPSTREAM_MCP_SERVERS: JSON.stringify([{ name: 'mirror', displayName: 'Mirror', url: demo.mcpUrl, auth: { type: 'none' } }]),
    });
    const providers = allProviders(config, undefined, undefined, demo.integration);
    const mirror = providers.find((p) => p.manifest.name === 'mirror')!;
    const demoProvider = providers.find((p) => p.manifest.name === 'demo')!;
    await expect(mirror.dynamicTools!.list({ type: 'none' }, AbortSignal.timeout(10_000))).rejects.toThrow(/loopback address/);
    // The demo provider reaches the demo, which asks for a token (401), as a protected server does.
    await expect(demoProvider.dynamicTools!.list({ type: 'none' }, AbortSignal.timeout(10_000))).rejects.toThrow(/401/);
    await Promise.all(providers.map((p) => p.dynamicTools?.close()));
  });

  it('the demo answers no foreign Host (DNS rebinding), and its consent page cannot be framed or answered without its interaction', async () => {
    const rebound = await rawRequest(`${demo.origin}/.well-known/openid-configuration`, {
      headers: { host: `attacker.example:${new URL(demo.origin).port}` },
    });
    expect(rebound.status).toBe(421);
    const forged = await fetch(`${demo.origin}/interaction/someone-elses-uid/allow`, { method: 'POST', redirect: 'manual' });
    expect(forged.status).toBe(400);
    expect(forged.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await forged.text()).toContain('expired or was started in another browser');
  });
});

describe('production', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-demo-prod-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  /** Runs an entry point until it exits; answers its exit code and output. */
  const run = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, args, {
        cwd: join(import.meta.dirname, '..', '..'),
        env: { ...process.env, SWITCHBOARD_DATA_DIR: dataDir, TEMPORAL_CLI: inject('temporalCli'), ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d) => {
        output += d;
      });
      child.stderr.on('data', (d) => {
        output += d;
      });
      child.on('exit', (code) => resolve({ code, output }));
    });

  it('npm start with the demo enabled and NODE_ENV=production refuses to start, naming the variable', async () => {
    // bin/start.ts is what scripts/start.mjs runs once dependencies and the Temporal CLI are there
    // (the script itself may run `npm install`, which a test must not do to a checkout).
    const { code, output } = await run(['--import', 'tsx', 'bin/start.ts'], { NODE_ENV: 'production', DEMO_INTEGRATION: 'on' });
    expect(code).toBe(2);
    expect(output).toMatch(/DEMO_INTEGRATION: "on" is refused in production/);
    expect(output).not.toContain('Switchboard is running');
  }, 60_000);

  it('so do the server and the worker', async () => {
    const secrets = {
      NODE_ENV: 'production',
      DEMO_INTEGRATION: 'on',
      ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 9).toString('base64')}`,
      PORTAL_SIGNING_SECRET: 'a-real-enough-signing-secret-of-32-chars-or-more',
    };
    for (const entry of ['bin/server.ts', 'bin/worker.ts']) {
      const { code, output } = await run(['--import', 'tsx', entry], secrets);
      expect(code, output).toBe(2);
      expect(output).toMatch(/DEMO_INTEGRATION: "on" is refused in production/);
    }
  }, 60_000);
});
