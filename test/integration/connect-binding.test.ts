import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { setUserRoles } from '../../features/accounts/store/users.js';
import { getAttempt } from '../../features/connections/store/connection-attempts.js';
import { consentAs, csrfOfPage, signedInPage, signIn } from '../support/consent.js';
import { createTestUser, startConnectFlowsWorld, type TestUser } from '../support/harness.js';
import { LOGIN_FIELDS, PASSWORD } from '../support/hn-site.js';

/**
 * Findings 1 and 13 of the security review, played in real chromium against the whole stack (a
 * real authorization server, the fake Linear, the Hacker News look-alike): every step of a
 * connection (connect, the connect link, the OAuth callback, cookie capture, the API-key form)
 * goes on only for the user it was started for, in the browser that started it, before the
 * attempt's expiry, with the roles that user has now.
 */

const world = await startConnectFlowsWorld();
const { auth, apis, site, stack } = world;
/** Acme: alice and mallory are members, olga the administrator. */
const alice = await world.user({ email: 'alice@acme.example' });
const acme = alice.user.tenantId;
const mallory = await world.user({ tenantId: acme, email: 'mallory@acme.example' });
const olga = await world.user({ tenantId: acme, email: 'olga@acme.example', roles: ['member', 'admin'] });
/** Initech lets only role `eng` use connections: erin has it, dave does not. */
const erin = await world.user({ email: 'erin@initech.example', roles: ['member', 'eng'] });
const dave = await world.user({ tenantId: erin.user.tenantId, email: 'dave@initech.example', roles: ['member'] });
await stack.services.pool.query(`UPDATE tenants SET settings = '{"connectionRoles":["eng"]}' WHERE id = $1`, [erin.user.tenantId]);
const browser = await world.browser();

const pool = () => stack.services.pool;

/** Every account of these users (their own) and of their tenants (the organisation's), by label. */
async function accountLabels(...users: TestUser[]): Promise<string[]> {
  const { rows } = await pool().query(
    `SELECT label FROM accounts WHERE owner_user_id = ANY($1) OR (scope = 'tenant' AND tenant_id = ANY($2)) ORDER BY label`,
    [users.map((u) => u.user.id), users.map((u) => u.user.tenantId)],
  );
  return rows.map((r) => r.label);
}

/** The portal's CSRF token for this signed-in browser (what its pages put in their forms). */
function csrfOf(page: Page): Promise<string> {
  return csrfOfPage(stack.services, page);
}

const attemptStatus = async (id: string) => (await getAttempt(pool(), id))?.status;

/**
 * Opens a connect link in this signed-in browser without following the redirect: the browser gets
 * whatever cookies the link sets, and the test gets the provider consent URL (the 303 Location) —
 * what an attacker copies out of their own browser.
 */
async function consentUrlFrom(page: Page, connectUrl: string): Promise<string> {
  const response = await page.request.get(connectUrl, { maxRedirects: 0 });
  expect(response.status()).toBe(303);
  const location = response.headers().location;
  expect(location.startsWith(auth.issuer)).toBe(true);
  return location;
}

/** Consents at the authorization server as `login` and answers the callback page's status and heading. */
async function consentAndLand(page: Page, consentUrl: string, login: string) {
  const landed = page.waitForResponse((r) => new URL(r.url()).pathname === '/oauth/callback');
  await page.goto(consentUrl);
  await consentAs(page, auth, login);
  return { status: (await landed).status(), heading: await page.locator('h1').textContent() };
}

const setExpiredNow = (attemptId: string) =>
  pool().query(`UPDATE connection_attempts SET expires_at = now() - interval '1 second' WHERE id = $1`, [attemptId]);

describe('finding 1: the OAuth callback is bound to the browser and the signed-in user', () => {
  it("finding 1: Mallory's consent URL opened by Alice ends on Wrong account; no code is exchanged and nothing is stored", async () => {
    // Mallory signs in, starts her own connection and copies the consent URL out of her browser.
    const { body: started } = await mallory.call('connect', { integration: 'github' });
    const malloryPage = await signedInPage(browser, mallory);
    const consentUrl = await consentUrlFrom(malloryPage, started.url);

    // Alice, signed in to the portal as herself in her own browser, opens it and consents.
    const alicePage = await signedInPage(browser, alice);
    const exchangesBefore = auth.grants.authorization_code;
    const landed = await consentAndLand(alicePage, consentUrl, 'alice-gh');
    expect(landed).toEqual({ status: 403, heading: 'Wrong account' });

    expect(auth.grants.authorization_code).toBe(exchangesBefore);
    expect(await accountLabels(alice, mallory)).toEqual([]);
    expect(await attemptStatus(started.connectionId)).toBe('PENDING');
    expect((await mallory.call('list_connections')).body.connections).toEqual([]);
    expect((await alice.call('list_connections')).body.connections).toEqual([]);
    await malloryPage.context().close();
    await alicePage.context().close();
  });

  it('finding 1: the same user in another browser (without the binding cookie) exchanges nothing', async () => {
    const { body: started } = await alice.call('connect', { integration: 'github' });
    const first = await signedInPage(browser, alice);
    const consentUrl = await consentUrlFrom(first, started.url);

    const other = await signedInPage(browser, alice);
    const exchangesBefore = auth.grants.authorization_code;
    const landed = await consentAndLand(other, consentUrl, 'alice-elsewhere');
    expect(landed).toEqual({ status: 403, heading: 'Wrong browser' });
    expect(auth.grants.authorization_code).toBe(exchangesBefore);
    expect(await accountLabels(alice)).toEqual([]);
    expect(await attemptStatus(started.connectionId)).toBe('PENDING');
    await first.context().close();
    await other.context().close();
  });

  it('finding 1: an attempt whose expires_at has passed is not connected, even before the workflow timer fires', async () => {
    const { body: started } = await alice.call('connect', { integration: 'github' });
    const page = await signedInPage(browser, alice);
    const consentUrl = await consentUrlFrom(page, started.url);
    await setExpiredNow(started.connectionId);

    const exchangesBefore = auth.grants.authorization_code;
    const landed = await consentAndLand(page, consentUrl, 'alice-late');
    expect(landed).toEqual({ status: 410, heading: 'Link expired' });
    expect(auth.grants.authorization_code).toBe(exchangesBefore);
    expect(await accountLabels(alice)).toEqual([]);
    // The workflow's timer has not fired: the attempt is still PENDING, and never connects.
    expect(await attemptStatus(started.connectionId)).toBe('PENDING');
    expect(
      await page
        .context()
        .request.get(started.url)
        .then((r) => r.status()),
    ).toBe(410);
    await page.context().close();
  });

  it('several connect links opened side by side in one browser all connect', async () => {
    const { body: gh } = await alice.call('connect', { integration: 'github' });
    const { body: jr } = await alice.call('connect', { integration: 'atlassian-jira' });
    const page = await signedInPage(browser, alice);
    const second = await page.context().newPage();
    await page.goto(gh.url);
    await second.goto(jr.url);
    for (const [p, login] of [
      [page, 'alice-side-gh'],
      [second, 'alice-side-jira'],
    ] as const) {
      await consentAs(p, auth, login);
      expect(await p.locator('h1').textContent()).toBe('Connected');
    }
    expect(await attemptStatus(gh.connectionId)).toBe('CONNECTED');
    expect(await attemptStatus(jr.connectionId)).toBe('CONNECTED');
    // Each binding cookie is spent by its callback.
    expect((await page.context().cookies()).filter((c) => c.name.startsWith('sb_oauth_'))).toEqual([]);
    await pool().query(`DELETE FROM accounts WHERE owner_user_id = $1`, [alice.user.id]);
    await page.context().close();
  });
});

describe('finding 1: binding cookies are bounded', () => {
  it('finding 1: a user has at most 10 consent pages open; the next connect link answers 429 and sets no cookie', async () => {
    const carol = await createTestUser(stack, { tenantId: alice.user.tenantId, email: 'carol@acme.example' });
    const page = await signedInPage(browser, carol);
    for (let i = 0; i < 10; i++) {
      const { body } = await carol.call('connect', { integration: 'github' });
      await consentUrlFrom(page, body.url);
    }
    const { body: eleventh } = await carol.call('connect', { integration: 'github' });
    const refused = await page.request.get(eleventh.url, { maxRedirects: 0 });
    expect(refused.status()).toBe(429);
    expect(await refused.text()).toContain('Too many sign-ins open');
    const bindings = (await page.context().cookies()).filter((c) => c.name.startsWith('sb_oauth_'));
    expect(bindings).toHaveLength(10);
    expect(bindings.every((c) => c.httpOnly && c.sameSite === 'Lax' && c.path === '/oauth/callback')).toBe(true);
    await page.context().close();
  });
});

/** The capture page's base path and CSRF token, after the connect link sent this browser there. */
async function openCapture(page: Page, connectUrl: string) {
  await page.goto(connectUrl);
  const base = new URL(page.url()).pathname;
  expect(base).toMatch(/^\/portal\/capture\/[\w-]+$/);
  const csrf = (await page.locator('#capture').getAttribute('data-csrf')) ?? '';
  return { base, csrf };
}

/** Signs in at the service inside the capture browser through the forwarded inputs, as the page's script would. */
async function signInRemotely(page: Page, base: string, csrf: string, username: string) {
  const send = async (path: string, data: unknown) => {
    const res = await page.request.post(`${stack.baseUrl}${base}/${path}`, { headers: { 'x-csrf-token': csrf }, data });
    expect(res.status(), path).toBe(200);
  };
  const signedInBefore = site.sessions.size;
  await send('click', LOGIN_FIELDS.username);
  await send('type', { text: username });
  await send('click', LOGIN_FIELDS.password);
  await send('type', { text: PASSWORD });
  await send('key', { key: 'Enter' });
  await expect.poll(() => site.sessions.size, { timeout: 15_000 }).toBe(signedInBefore + 1);
}

const postCapture = (page: Page, base: string, csrf: string) =>
  page.request.post(`${stack.baseUrl}${base}/capture`, { headers: { 'x-csrf-token': csrf }, data: {} });

describe('finding 1: cookie capture is bound to the browser and expires with its attempt', () => {
  it('finding 1: a capture session is nothing to the same user in another browser', async () => {
    const { body: started } = await alice.call('connect', { integration: 'hackernews' });
    const page = await signedInPage(browser, alice);
    const { base } = await openCapture(page, started.url);

    const other = await signedInPage(browser, alice);
    const otherCsrf = await csrfOf(other);
    expect((await other.request.get(`${stack.baseUrl}${base}`)).status()).toBe(404);
    expect((await other.request.get(`${stack.baseUrl}${base}/frame.jpg`)).status()).toBe(404);
    const captured = await postCapture(other, base, otherCsrf);
    expect(captured.status()).toBe(404);
    expect(await accountLabels(alice)).toEqual([]);
    expect(await attemptStatus(started.connectionId)).toBe('PENDING');
    await page.context().close();
    await other.context().close();
  });

  it('finding 1: Capture after the attempt expired stores nothing, even with a live session at the service', async () => {
    const { body: started } = await alice.call('connect', { integration: 'hackernews' });
    const page = await signedInPage(browser, alice);
    const { base, csrf } = await openCapture(page, started.url);
    await signInRemotely(page, base, csrf, 'alice');
    await setExpiredNow(started.connectionId);

    const captured = await postCapture(page, base, csrf);
    expect(captured.status()).toBe(410);
    expect(await captured.json()).toMatchObject({ ok: false, status: 'expired' });
    expect(await accountLabels(alice)).toEqual([]);
    expect(await attemptStatus(started.connectionId)).toBe('PENDING');
    await page.context().close();
  });
});

/** The Linear form's hidden fields, after this browser opened it. */
async function openKeyForm(page: Page) {
  await page.goto(`${stack.baseUrl}/portal/integrations/linear`);
  // Read whatever the page carries, so a submission goes out even from a page without a `_form`.
  const field = async (name: string) => {
    const input = page.locator(`input[name="${name}"]`);
    return (await input.count()) ? input.inputValue() : '';
  };
  return { _csrf: await field('_csrf'), _form: await field('_form') };
}

const postKey = (page: Page, form: Record<string, string>) =>
  page.request.post(`${stack.baseUrl}/portal/integrations/linear`, { form, maxRedirects: 0 });

describe('finding 1: the API-key form is bound to its user and browser, and expires', () => {
  const linearKey = () => {
    const key = `lin_api_${randomBytes(20).toString('hex')}`;
    apis.state.linear.grantKey(key, { name: 'Alice', email: `alice-${key.slice(-6)}@linear.example` });
    return key;
  };

  it('finding 1: a form submitted from another browser, or by another user, saves nothing', async () => {
    const page = await signedInPage(browser, alice);
    const aliceForm = await openKeyForm(page);

    // The same user in another browser, with that browser's own CSRF token.
    const other = await signedInPage(browser, alice);
    const { _csrf: otherCsrf } = await openKeyForm(other);
    const elsewhere = await postKey(other, { _csrf: otherCsrf, _form: aliceForm._form, field_apiKey: linearKey() });
    expect(elsewhere.status()).toBe(403);
    expect(await elsewhere.text()).toContain('Wrong browser');

    // Mallory, with Alice's form and her own session and CSRF token.
    const malloryPage = await signedInPage(browser, mallory);
    const { _csrf: malloryCsrf } = await openKeyForm(malloryPage);
    const foreign = await postKey(malloryPage, { _csrf: malloryCsrf, _form: aliceForm._form, field_apiKey: linearKey() });
    expect(foreign.status()).toBe(403);
    expect(await foreign.text()).toContain('Wrong account');

    expect(await accountLabels(alice, mallory)).toEqual([]);
    // The browser that opened the form can still use it.
    const own = await postKey(page, { ...aliceForm, field_apiKey: linearKey() });
    expect(own.status()).toBe(200);
    expect(await accountLabels(alice)).toHaveLength(1);
    await pool().query(`DELETE FROM accounts WHERE owner_user_id = $1`, [alice.user.id]);
    for (const p of [page, other, malloryPage]) await p.context().close();
  });

  it('finding 1: a form submitted after it expired saves nothing', async () => {
    const page = await signedInPage(browser, alice);
    const form = await openKeyForm(page);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 31 * 60_000);
      const late = await postKey(page, { ...form, field_apiKey: linearKey() });
      expect(late.status()).toBe(410);
      expect(await late.text()).toContain('Form expired');
    } finally {
      vi.useRealTimers();
    }
    expect(await accountLabels(alice)).toEqual([]);
    await page.context().close();
  });
});

describe('finding 13: connection roles are checked at every step, read fresh', () => {
  it('finding 13: a user without the connection role cannot connect at all', async () => {
    for (const integration of ['github', 'hackernews']) {
      expect(await dave.call('connect', { integration })).toEqual({
        status: 403,
        body: { error: 'You have no role that may use connections.' },
      });
    }
    const page = await signedInPage(browser, dave);
    const form = await page.goto(`${stack.baseUrl}/portal/integrations/linear`);
    expect(form?.status()).toBe(403);
    const csrf = await csrfOf(page);
    const key = `lin_api_${randomBytes(20).toString('hex')}`;
    apis.state.linear.grantKey(key, { name: 'Dave', email: 'dave@linear.example' });
    const posted = await postKey(page, { _csrf: csrf, field_apiKey: key });
    expect(posted.status()).toBe(403);
    const connectButton = await page.request.post(`${stack.baseUrl}/portal/integrations/github/connect`, {
      form: { _csrf: csrf },
      maxRedirects: 0,
    });
    expect(connectButton.status()).toBe(403);
    expect(await accountLabels(dave)).toEqual([]);
    const { rows } = await pool().query('SELECT count(*)::int AS n FROM connection_attempts WHERE user_id = $1', [dave.user.id]);
    expect(rows[0].n).toBe(0);
    await page.context().close();
  });

  /**
   * Changes the user's roles, then signs this browser in again: a role change may end the user's
   * portal sessions, and the check under test is the one a freshly signed-in human meets (the
   * browser keeps its binding cookies).
   */
  async function setRolesAndSignIn(page: Page, user: TestUser, roles: string[]) {
    await setUserRoles(pool(), user.user.id, roles);
    const again = await page.context().newPage();
    await signIn(again, user);
    await again.close();
  }

  it('finding 13: a role taken away after connect stops the connect link, the callback, the API-key form and capture', async () => {
    const page = await signedInPage(browser, erin);
    const withoutEng = () => setRolesAndSignIn(page, erin, ['member']);
    const withEng = () => setRolesAndSignIn(page, erin, ['member', 'eng']);
    try {
      // The connect link.
      const { body: first } = await erin.call('connect', { integration: 'github' });
      await withoutEng();
      const link = await page.request.get(first.url, { maxRedirects: 0 });
      expect(link.status()).toBe(403);
      expect(await link.text()).toContain('You have no role that may use connections.');
      expect(link.headers().location).toBeUndefined();

      // The callback.
      await withEng();
      const { body: second } = await erin.call('connect', { integration: 'github' });
      const consentUrl = await consentUrlFrom(page, second.url);
      await withoutEng();
      const exchangesBefore = auth.grants.authorization_code;
      expect(await consentAndLand(page, consentUrl, 'erin-gh')).toEqual({ status: 403, heading: 'Not allowed' });
      expect(auth.grants.authorization_code).toBe(exchangesBefore);
      expect(await attemptStatus(second.connectionId)).toBe('PENDING');

      // The API-key form.
      await withEng();
      const form = await openKeyForm(page);
      await withoutEng();
      const key = `lin_api_${randomBytes(20).toString('hex')}`;
      apis.state.linear.grantKey(key, { name: 'Erin', email: 'erin@linear.example' });
      const callsBefore = apis.state.linear.calls.length;
      const posted = await postKey(page, { ...form, _csrf: await csrfOf(page), field_apiKey: key });
      expect(posted.status()).toBe(403);
      expect(await posted.text()).toContain('You have no role that may use connections.');
      expect(apis.state.linear.calls.length).toBe(callsBefore);

      // Cookie capture.
      await withEng();
      const { body: cookie } = await erin.call('connect', { integration: 'hackernews' });
      const { base, csrf } = await openCapture(page, cookie.url);
      await signInRemotely(page, base, csrf, 'erin');
      await withoutEng();
      const captured = await postCapture(page, base, await csrfOf(page));
      expect(captured.status()).toBe(403);
      expect(await captured.json()).toMatchObject({ ok: false, status: 'forbidden' });
      expect(await attemptStatus(cookie.connectionId)).toBe('PENDING');

      expect(await accountLabels(erin)).toEqual([]);
    } finally {
      await setUserRoles(pool(), erin.user.id, ['member', 'eng']);
      await page.context().close();
    }
  });

  it('finding 13: an administrator who loses the role cannot finish an organisation connect', async () => {
    const page = await signedInPage(browser, olga);
    await page.goto(`${stack.baseUrl}/portal/integrations`);
    await page.locator('tr[data-integration="github"]').getByRole('button', { name: 'Connect for organisation' }).click();
    await page.waitForURL((url) => url.href.startsWith(auth.issuer));
    const { rows } = await pool().query(
      `SELECT id FROM connection_attempts WHERE user_id = $1 AND account_scope = 'tenant' ORDER BY created_at DESC LIMIT 1`,
      [olga.user.id],
    );
    await setRolesAndSignIn(page, olga, ['member']);
    try {
      const exchangesBefore = auth.grants.authorization_code;
      const landed = page.waitForResponse((r) => new URL(r.url()).pathname === '/oauth/callback');
      await consentAs(page, auth, 'acme-bot');
      expect((await landed).status()).toBe(403);
      expect(await page.locator('h1').textContent()).toBe('Not allowed');
      expect(await page.locator('[role=status]').textContent()).toContain('Only an administrator can connect an organisation account.');
      expect(auth.grants.authorization_code).toBe(exchangesBefore);
      expect(await accountLabels(olga)).toEqual([]);
      expect(await attemptStatus(rows[0].id)).toBe('PENDING');
    } finally {
      await setUserRoles(pool(), olga.user.id, ['member', 'admin']);
      await page.context().close();
    }
  });
});
