import type { ChildProcess } from 'node:child_process';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { connectionWorkflowId } from '../../core/ids.js';
import { readCredential } from '../../features/accounts/store/accounts.js';
import { getAttempt } from '../../features/connections/store/connection-attempts.js';
import { consentAs as consent, signedInPage as signedInPageAs } from '../support/consent.js';
import { createTestUser, spawnWorkerProcess, startWorld, type TestUser } from '../support/harness.js';
import { historyText } from '../support/history-text.js';
import { UNCONNECTED_LISTING } from '../support/integration-listing.js';
import { plantGrantSecrets } from '../support/planted-secrets.js';

const world = await startWorld({
  clients: { github: {}, jira: { rotateRefreshTokens: true } },
  apis: true,
  env: { CONNECTION_TTL_SEC: '600' },
});
const { auth, stack } = world;
/** Every secret the authorization server handed out or received: none may leak. */
const planted = new Set<string>([world.clients.github!.clientSecret, world.clients.jira!.clientSecret]);
plantGrantSecrets(auth.provider, planted);
const alice = await world.user({ email: 'alice@example.com' });
const mallory = await world.user({ tenantId: alice.user.tenantId, email: 'mallory@example.com' });
const browser = await world.browser();

const signedInPage = (user: TestUser) => signedInPageAs(browser, user);

/** Consents as `login` and plants the state and code for the leak check. */
async function consentAs(page: Page, login: string) {
  await page.waitForURL((url) => url.href.startsWith(auth.issuer));
  planted.add(new URL(page.url()).searchParams.get('state') ?? '');
  const callback = await consent(page, auth, login);
  planted.add(callback.searchParams.get('code') ?? '');
  return callback;
}

describe('list_integrations', () => {
  it('answers name, version and connected only; built-ins are always connected', async () => {
    const { status, body } = await alice.call('list_integrations');
    expect(status).toBe(200);
    expect(body.integrations).toEqual(UNCONNECTED_LISTING);
  });

  it('lists only the providers the tenant enabled', async () => {
    const other = await createTestUser(stack);
    await stack.services.pool.query(`UPDATE tenants SET settings = '{"enabledProviders":["github"]}' WHERE id = $1`, [other.user.tenantId]);
    expect((await other.call('list_integrations')).body.integrations.map((i: { name: string }) => i.name)).toEqual(['github']);
  });
});

describe('connect and get_auth_url', () => {
  it('answers the spec errors: unknown, built-in, not configured', async () => {
    expect(await alice.call('connect', { integration: 'nope' })).toEqual({ status: 404, body: { error: 'Integration not found' } });
    expect((await alice.call('connect', { integration: 'browser' })).body).toEqual({
      error: 'browser is built-in and always connected — no connect needed.',
    });
    expect((await alice.call('connect', { integration: 'jots' })).body).toEqual({
      error: 'jots is built-in and always connected — no connect needed.',
    });
    const slack = await alice.call('connect', { integration: 'slack' });
    expect(slack.status).toBe(503);
    expect(slack.body.error).toMatch(/SLACK_CLIENT_ID \/ SLACK_CLIENT_SECRET not configured$/);
  });

  it('names a missing or wrong argument', async () => {
    const missing = await alice.call('connect', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/^Invalid arguments for connect: integration: /);
  });

  it('returns {connectionId, type, url} with a portal link; get_auth_url is the same handler', async () => {
    for (const tool of ['connect', 'get_auth_url']) {
      const { status, body } = await alice.call(tool, { integration: 'github' });
      expect(status).toBe(200);
      expect(Object.keys(body).sort()).toEqual(['connectionId', 'type', 'url']);
      expect(body.connectionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(body.type).toBe('oauth2');
      expect(body.url).toMatch(new RegExp(`^${stack.baseUrl}/connect/github\\?t=eyJ`));
      const described = await stack.services.temporal.workflow.getHandle(connectionWorkflowId(body.connectionId)).describe();
      expect(described.status.name).toBe('RUNNING');
    }
  });
});

describe('wait_for_connection', () => {
  it('validates timeoutSec: positive integer, at most 900', async () => {
    const { body: started } = await alice.call('connect', { integration: 'github' });
    for (const timeoutSec of [0, -1, 1.5, 901, '10', null]) {
      const res = await alice.call('wait_for_connection', { connectionId: started.connectionId, timeoutSec });
      expect(res.status, String(timeoutSec)).toBe(400);
      expect(res.body.error).toMatch(/^Invalid arguments for wait_for_connection: timeoutSec: /);
    }
  });

  it("answers the identical Unknown connectionId for an unknown id and for another user's id", async () => {
    const { body: started } = await alice.call('connect', { integration: 'github' });
    const unknown = await alice.call('wait_for_connection', { connectionId: '00000000-0000-0000-0000-000000000000', timeoutSec: 1 });
    const others = await mallory.call('wait_for_connection', { connectionId: started.connectionId, timeoutSec: 1 });
    expect(unknown).toEqual({ status: 404, body: { error: 'Unknown connectionId' } });
    expect(others).toEqual(unknown);
  });

  it('TIMEOUT reaps the attempt; later waits answer EXPIRED at once; a late callback never connects it', async () => {
    const { body: started } = await alice.call('connect', { integration: 'github' });
    const page = await signedInPage(alice);
    await page.goto(started.url);
    await page.waitForURL((url) => url.href.startsWith(auth.issuer));

    expect((await alice.call('wait_for_connection', { connectionId: started.connectionId, timeoutSec: 1 })).body).toEqual({
      status: 'TIMEOUT',
    });
    expect((await getAttempt(stack.services.pool, started.connectionId))?.status).toBe('EXPIRED');
    const t0 = Date.now();
    expect((await alice.call('wait_for_connection', { connectionId: started.connectionId, timeoutSec: 60 })).body).toEqual({
      status: 'EXPIRED',
    });
    expect(Date.now() - t0).toBeLessThan(5_000);

    // The human finishes consent a moment later: the callback must not promote it.
    await consentAs(page, 'late-larry');
    expect(await page.locator('h1').textContent()).toBe('Link expired');
    expect((await getAttempt(stack.services.pool, started.connectionId))?.status).toBe('EXPIRED');
    expect((await alice.call('wait_for_connection', { connectionId: started.connectionId })).body).toEqual({ status: 'EXPIRED' });
    const { rows } = await stack.services.pool.query(`SELECT label FROM accounts WHERE label = 'late-larry'`);
    expect(rows).toEqual([]);
    await page.context().close();
  });

  it('the connection workflow expires on its own after its TTL when nobody waits', async () => {
    const { startConnection } = await import('../../features/connections/tools/connect.js');
    const started = await startConnection(stack.services, { ...alice.user, userId: alice.user.id }, 'github', { ttlSec: 1 });
    const result = await stack.services.temporal.workflow.getHandle(connectionWorkflowId(started.connectionId)).result();
    expect(result).toEqual({ status: 'EXPIRED' });
    expect((await alice.call('wait_for_connection', { connectionId: started.connectionId })).body).toEqual({ status: 'EXPIRED' });
  });
});

describe('the browser flow', () => {
  it('signs in, consents, lands on the callback page, and the waiter sees CONNECTED', async () => {
    const { body: started } = await alice.call('connect', { integration: 'github' });
    const waiting = alice.call('wait_for_connection', { connectionId: started.connectionId, timeoutSec: 120 });

    const page = await signedInPage(alice);
    await page.goto(started.url);
    const callback = await consentAs(page, 'octocat');
    expect(await page.locator('h1').textContent()).toBe('Connected');
    expect(await page.locator('[role=status]').textContent()).toContain('octocat');

    expect(await waiting).toEqual({ status: 200, body: { status: 'CONNECTED' } });
    const integrations = (await alice.call('list_integrations')).body.integrations;
    expect(integrations.find((i: { name: string }) => i.name === 'github')).toEqual({ name: 'github', version: '1.0.0', connected: true });
    const connections = (await alice.call('list_connections')).body.connections;
    expect(connections).toEqual([
      expect.objectContaining({ integration: 'github', label: 'octocat', scope: 'user', default: true, status: 'active' }),
    ]);
    // An attempt that is final answers at once.
    expect((await alice.call('wait_for_connection', { connectionId: started.connectionId })).body).toEqual({ status: 'CONNECTED' });

    // The stored credential is sealed, and works against the service.
    const credential = await readCredential(stack.services.pool, stack.services.keyring, alice.user.tenantId, connections[0].id);
    expect(await auth.subjectOf(credential!.accessToken!)).toBe('octocat');
    planted.add(credential!.accessToken!);
    if (credential?.refreshToken) planted.add(credential.refreshToken);

    // Replaying the same callback finds the state consumed.
    const replay = await fetch(callback);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('unknown or was already used');
    await page.context().close();
  });

  it('a human signed in as someone else gets the mismatch page and no consent URL', async () => {
    const { body: started } = await alice.call('connect', { integration: 'github' });
    const page = await signedInPage(mallory);
    const response = await page.goto(started.url);
    expect(response?.status()).toBe(403);
    expect(new URL(page.url()).origin).toBe(stack.baseUrl);
    expect(await page.locator('h1').textContent()).toBe('Wrong account');
    expect(await page.content()).not.toContain(auth.issuer);
    expect((await getAttempt(stack.services.pool, started.connectionId))?.status).toBe('PENDING');
    await page.context().close();
  });

  it('a connect link opened while signed out goes to the portal sign-in', async () => {
    const { body: started } = await alice.call('connect', { integration: 'github' });
    const page = await (await browser.newContext()).newPage();
    await page.goto(started.url);
    expect(new URL(page.url()).pathname).toBe('/portal/login');
    expect(await page.locator('h1').textContent()).toBe('Sign in');
    await page.context().close();
  });

  it('a denied consent leaves the attempt PENDING and tells the human', async () => {
    const { body: started } = await alice.call('connect', { integration: 'github' });
    const page = await signedInPage(alice);
    await page.goto(started.url);
    await page.waitForURL((url) => url.href.startsWith(auth.issuer));
    await page.getByText('[ Cancel ]').click();
    await page.waitForURL((url) => url.pathname === '/oauth/callback');
    expect(new URL(page.url()).searchParams.get('error')).toBe('access_denied');
    expect(await page.locator('h1').textContent()).toBe('Not connected');
    expect((await getAttempt(stack.services.pool, started.connectionId))?.status).toBe('PENDING');
    await page.context().close();
  });

  it('a callback with a bad state is refused', async () => {
    const res = await fetch(`${stack.baseUrl}/oauth/callback?code=abc&state=not-a-real-state`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('unknown or was already used');
    expect((await fetch(`${stack.baseUrl}/oauth/callback?code=abc`)).status).toBe(400);
  });

  it('a forged or expired connect link is refused', async () => {
    const page = await signedInPage(alice);
    const res = await page.goto(`${stack.baseUrl}/connect/github?t=eyJhbGciOiJIUzI1NiJ9.eyJhIjoieCJ9.bad`);
    expect(res?.status()).toBe(400);
    expect(await page.locator('h1').textContent()).toBe('Link not valid');
    await page.context().close();
  });
});

describe('durability', () => {
  it('a wait pending while the worker is SIGKILLed and restarted still ends right', async () => {
    await stack.stopWorker();
    let worker: ChildProcess = await spawnWorkerProcess(stack);
    try {
      const { body: started } = await alice.call('connect', { integration: 'atlassian-jira' });
      const waiting = alice.call('wait_for_connection', { connectionId: started.connectionId, timeoutSec: 180 });
      await new Promise((r) => setTimeout(r, 500));
      worker.kill('SIGKILL');
      await new Promise((r) => worker.once('exit', r));

      // The human finishes while no worker runs; the signal waits in Temporal.
      const page = await signedInPage(alice);
      await page.goto(started.url);
      await consentAs(page, 'jira-jane');
      expect(await page.locator('h1').textContent()).toBe('Connected');
      await page.context().close();

      worker = await spawnWorkerProcess(stack);
      expect(await waiting).toEqual({ status: 200, body: { status: 'CONNECTED' } });
      const connections = (await alice.call('list_connections', { integration: 'atlassian-jira' })).body.connections;
      expect(connections).toHaveLength(1);
    } finally {
      worker.kill('SIGKILL');
      await stack.startWorker();
    }
  }, 120_000);
});

describe('secrets', () => {
  it('no token, code, state, PKCE verifier or client secret appears in workflow histories or logs', async () => {
    const secrets = [...planted].filter((s) => s.length >= 8);
    expect(secrets.length).toBeGreaterThanOrEqual(6);
    const histories: string[] = [];
    for await (const wf of stack.services.temporal.workflow.list({ query: `TaskQueue = '${stack.env.TEMPORAL_TASK_QUEUE}'` })) {
      const history = await stack.services.temporal.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      histories.push(historyText(history));
    }
    expect(histories.length).toBeGreaterThan(5);
    const haystacks = { histories: histories.join('\n'), logs: stack.logs.text() };
    for (const [where, text] of Object.entries(haystacks)) {
      for (const secret of secrets) expect(text.includes(secret), `a planted secret found in ${where}`).toBe(false);
    }
  });
});
