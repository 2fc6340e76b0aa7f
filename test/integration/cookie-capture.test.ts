import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { readCredential } from '../../features/accounts/store/accounts.js';
import { getAttempt } from '../../features/connections/store/connection-attempts.js';
import { closeCaptureBrowser } from '../../surfaces/portal/cookie-capture/capture-sessions.js';
import { csrfOfPage, signedInPage } from '../support/consent.js';
import { createTestUser, startWorld, type TestUser } from '../support/harness.js';
import { decodedHistoryText, keyringDecoder, rawHistoriesOf } from '../support/history-text.js';
import { LOGIN_FIELDS, PASSWORD } from '../support/hn-site.js';

const CHECK_TTL_SEC = 2;

const world = await startWorld({
  hackernews: true,
  env: { COOKIE_CHECK_TTL_SEC: String(CHECK_TTL_SEC), CONNECTION_TTL_SEC: '600' },
});
world.onStop(closeCaptureBrowser);
const { site, stack } = world;
const alice = await world.user({ email: 'alice-cookie@example.com' });
const mallory = await world.user({ tenantId: alice.user.tenantId, email: 'mallory-cookie@example.com' });
const browser = await world.browser();

const hackernews = async (user: TestUser) =>
  (await user.call('list_integrations')).body.integrations.find((i: { name: string }) => i.name === 'hackernews');
const execute = (user: TestUser, name: string, args: Record<string, unknown> = {}) =>
  user.call('connections_execute', { name, arguments: args }).then((r) => r.body);

/** Clicks the live view where the remote page has (x, y), scaled to the shown size. */
async function clickRemote(page: Page, at: { x: number; y: number }) {
  const size = await page.locator('#live').evaluate((img: HTMLImageElement) => ({ w: img.clientWidth, h: img.clientHeight }));
  await page.locator('#live').click({ position: { x: (at.x * size.w) / 1024, y: (at.y * size.h) / 768 } });
}

const remoteUrl = (page: Page) => page.locator('#remote-url').textContent();

/** Waits until the live view shows a frame asked for after now (so it reflects the inputs sent). */
async function freshFrame(page: Page) {
  const frameNo = () =>
    page.locator('#live').evaluate((img: HTMLImageElement) => (img.complete ? Number(/n=(\d+)/.exec(img.src)?.[1] ?? 0) : 0));
  const now = await frameNo();
  await expect.poll(frameNo, { timeout: 10_000 }).toBeGreaterThan(now + 1);
}

describe('cookie capture', () => {
  it('connect answers {connectionId, type: "cookie", url} with a portal link', async () => {
    const { status, body } = await alice.call('connect', { integration: 'hackernews' });
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(['connectionId', 'type', 'url']);
    expect(body.type).toBe('cookie');
    expect(body.url).toMatch(new RegExp(`^${stack.baseUrl}/connect/hackernews\\?t=eyJ`));
    expect(await hackernews(alice)).toEqual({ name: 'hackernews', version: '1.0.0', connected: false });
  });

  it('a human signed in as someone else gets the mismatch page', async () => {
    const { body: started } = await alice.call('connect', { integration: 'hackernews' });
    const page = await signedInPage(browser, mallory);
    const response = await page.goto(started.url);
    expect(response?.status()).toBe(403);
    expect(await page.locator('h1').textContent()).toBe('Wrong account');
    expect(new URL(page.url()).pathname).toBe('/connect/hackernews');
    await page.context().close();
  });

  it('signs in live through the portal, captures, connects; an expired session is not connected and needs reauth', async () => {
    const { body: started } = await alice.call('connect', { integration: 'hackernews' });
    const waiting = alice.call('wait_for_connection', { connectionId: started.connectionId, timeoutSec: 60 });

    const page = await signedInPage(browser, alice);
    await page.goto(started.url);
    expect(new URL(page.url()).pathname).toMatch(/^\/portal\/capture\/[\w-]{24}$/);
    const base = new URL(page.url()).pathname;
    expect(await page.locator('h1').textContent()).toBe('Sign in to Hacker News');
    // The live frame arrives and refreshes; the remote browser is at the service's login page.
    await page.waitForFunction(() => {
      const img = document.getElementById('live') as HTMLImageElement;
      return img.complete && img.naturalWidth === 1024 && /n=\d+/.test(img.src);
    });
    await expect.poll(() => remoteUrl(page)).toBe(`${site.url}/login?goto=news`);

    // Nobody else reaches the session: 404 for a frame, the state, and a POST with their own CSRF token.
    const other = await signedInPage(browser, mallory);
    expect((await other.request.get(`${stack.baseUrl}${base}/frame.jpg`)).status()).toBe(404);
    expect((await other.request.get(`${stack.baseUrl}${base}`)).status()).toBe(404);
    const malloryCsrf = await csrfOfPage(stack.services, other);
    expect(malloryCsrf).not.toBe('');
    const foreign = await other.request.post(`${stack.baseUrl}${base}/capture`, { headers: { 'x-csrf-token': malloryCsrf }, data: {} });
    expect(foreign.status()).toBe(404);
    await other.context().close();

    // A POST without the CSRF token is refused, and stores nothing.
    expect((await page.request.post(`${stack.baseUrl}${base}/capture`, { data: {} })).status()).toBe(403);
    expect((await page.request.post(`${stack.baseUrl}${base}/click`, { data: { x: 1, y: 1 } })).status()).toBe(403);

    // Capture before signing in at the service says so and stores nothing.
    await page.getByRole('button', { name: 'Capture' }).click();
    await expect.poll(() => page.locator('#status').textContent()).toContain('not signed in to Hacker News');
    expect(await page.locator('h1').textContent()).toBe('Sign in to Hacker News');
    expect((await alice.call('list_connections', { integration: 'hackernews' })).body.connections).toEqual([]);
    expect((await getAttempt(stack.services.pool, started.connectionId))?.status).toBe('PENDING');

    // Sign in at the service through the forwarded clicks and keys.
    await clickRemote(page, LOGIN_FIELDS.username);
    await page.keyboard.type('alice');
    await freshFrame(page);
    await page.screenshot({ path: '/tmp/cookie-capture-login.png' });
    await clickRemote(page, LOGIN_FIELDS.password);
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await expect.poll(() => remoteUrl(page), { timeout: 15_000 }).toBe(`${site.url}/news`);
    expect(site.sessions.size).toBe(1);
    await freshFrame(page);
    await page.screenshot({ path: '/tmp/cookie-capture.png', fullPage: true });

    await page.getByRole('button', { name: 'Capture' }).click();
    // Capture checks the session at the service and stores it: more than poll's default second on a busy machine.
    await expect.poll(() => page.locator('h1').textContent(), { timeout: 15_000 }).toBe('Connected');
    expect(await page.locator('[role=status]').textContent()).toContain('Hacker News account alice is connected');
    await page.screenshot({ path: '/tmp/cookie-capture-connected.png' });
    expect(await waiting).toEqual({ status: 200, body: { status: 'CONNECTED' } });

    // The capture browser is gone: its session answers 404 now.
    expect((await page.request.get(`${stack.baseUrl}${base}/frame.jpg`)).status()).toBe(404);

    const connections = (await alice.call('list_connections', { integration: 'hackernews' })).body.connections;
    expect(connections).toEqual([expect.objectContaining({ integration: 'hackernews', label: 'alice', status: 'active' })]);
    const credential = await readCredential(stack.services.pool, stack.services.keyring, alice.user.tenantId, connections[0].id);
    expect(credential?.type).toBe('cookie');
    expect(credential?.cookies?.map((c) => [c.name, c.domain])).toEqual([['user', '127.0.0.1']]);
    const token = credential!.cookies![0].value.split('&')[1];
    const { rows } = await stack.services.pool.query('SELECT credential_sealed FROM accounts WHERE id = $1', [connections[0].id]);
    expect(rows[0].credential_sealed).not.toContain(token);
    // Neither the typed password nor the session token reaches a log line.
    expect(stack.logs.text()).not.toContain(token);
    expect(stack.logs.text()).not.toContain(PASSWORD);

    // Connected means the session works, checked at most once per TTL.
    const checksBefore = site.requests.filter((r) => r === 'GET /user').length;
    expect(await hackernews(alice)).toEqual({ name: 'hackernews', version: '1.0.0', connected: true });
    expect(await hackernews(alice)).toEqual({ name: 'hackernews', version: '1.0.0', connected: true });
    expect(site.requests.filter((r) => r === 'GET /user').length).toBe(checksBefore + 1);

    // A tool call rides on the captured cookie.
    const profile = await execute(alice, 'hackernews__get_profile');
    expect(profile).toEqual({
      ok: true,
      result: { username: 'alice', created: 'October 9, 2006', karma: 1234, about: 'Builds & tests things.', signedInUser: 'alice' },
    });
    // Nor a workflow history (the connection's, the batch that rode on the cookie), raw or decoded as an operator reads it.
    const histories = await rawHistoriesOf(stack.services.temporal, stack.env.TEMPORAL_TASK_QUEUE);
    const decoded = (await Promise.all(histories.map((h) => decodedHistoryText(h.history, keyringDecoder(stack.services.keyring))))).join(
      '\n',
    );
    expect(decoded).toContain('"status":"CONNECTED"');
    expect(decoded).toContain('Builds & tests things.');
    for (const secret of [token, PASSWORD]) expect(decoded).not.toContain(secret);

    // The service expires the session: after the cache TTL, not connected, and tools answer needs_reauth.
    site.expire('alice');
    await new Promise((r) => setTimeout(r, CHECK_TTL_SEC * 1000 + 200));
    expect(await hackernews(alice)).toEqual({ name: 'hackernews', version: '1.0.0', connected: false });
    expect(await execute(alice, 'hackernews__get_profile')).toMatchObject({
      ok: false,
      error: { code: 'needs_reauth', integration: 'hackernews' },
    });
    expect((await alice.call('list_connections', { integration: 'hackernews' })).body.connections[0].status).toBe('needs_reauth');
    await page.context().close();
  });

  it('Cancel closes the capture browser and stores nothing; the link opens a new one', async () => {
    const { body: started } = await alice.call('connect', { integration: 'hackernews' });
    const page = await signedInPage(browser, alice);
    await page.goto(started.url);
    const first = new URL(page.url()).pathname;
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Cancelled');
    expect((await page.request.get(`${stack.baseUrl}${first}/frame.jpg`)).status()).toBe(404);
    expect((await getAttempt(stack.services.pool, started.connectionId))?.status).toBe('PENDING');
    await page.goto(started.url);
    expect(new URL(page.url()).pathname).not.toBe(first);
    expect(await page.locator('h1').textContent()).toBe('Sign in to Hacker News');
    await page.context().close();
  });

  it('a dead session found by a tool call marks the account needs_reauth', async () => {
    const bob = await createTestUser(stack, { email: 'bob-cookie@example.com' });
    const { insertAccount } = await import('../../features/accounts/store/accounts.js');
    await insertAccount(stack.services.pool, stack.services.keyring, {
      tenantId: bob.user.tenantId,
      ownerUserId: bob.user.id,
      integration: 'hackernews',
      label: 'bob',
      externalId: 'bob',
      credential: { type: 'cookie', cookies: [{ name: 'user', value: 'bob&not-a-live-token', domain: '127.0.0.1', path: '/' }] },
    });
    expect(await execute(bob, 'hackernews__list_favorites')).toMatchObject({ ok: false, error: { code: 'needs_reauth' } });
    expect(await hackernews(bob)).toEqual({ name: 'hackernews', version: '1.0.0', connected: false });
  });
});
