import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { listApiKeys, revokeApiKey } from '../../features/accounts/store/api-keys.js';
import { createLoginToken } from '../../features/accounts/store/login-tokens.js';
import { setUserRoles, unbindOidcIdentity } from '../../features/accounts/store/users.js';
import { signedInPage } from '../support/consent.js';
import { createTestUser, startWorld, type TestUser } from '../support/harness.js';

/**
 * Who may be signed in to the portal, in a real chromium against the whole stack and a real OIDC
 * provider (oidc-provider): sign-in through the identity provider only for verified emails and
 * only from the identity a user is bound to (finding 8); no sign-in or sign-out forced by another
 * site's page, and sessions that end for good at sign-out, a role change or a key revocation
 * (finding 9).
 */

const world = await startWorld({ clients: { portal: {} }, worker: false });
const { auth, stack } = world;
const { baseUrl } = stack;
/** Another site: Mallory's pages, served on another port (same site as the portal) and as `localhost` (another site). */
const { port: attackerPort } = await world.serve((req, res) => {
  // Each page submits a form to the portal as soon as it loads, as a forged page would.
  const url = new URL(req.url ?? '/', 'http://attacker');
  const fields = [...url.searchParams].map(([k, v]) => `<input type="hidden" name="${k}" value="${v}">`).join('');
  const target = url.pathname === '/logout' ? '/portal/logout' : '/portal/login-link';
  res.setHeader('content-type', 'text/html');
  res.end(`<!doctype html><form method="post" action="${baseUrl}${target}">${fields}</form><script>document.forms[0].submit()</script>`);
});
const browser = await world.browser();

const pool = () => stack.services.pool;
const attackerOrigins = () => [`http://localhost:${attackerPort}`, `http://127.0.0.1:${attackerPort}`];

/** Signs in through the identity provider's login and consent pages as `login`; answers the page where it ended. */
async function signInThroughProvider(login: string): Promise<{ page: Page; status: number | undefined }> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${baseUrl}/portal/login`);
  await page.waitForURL((url) => url.href.startsWith(auth.issuer));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  const callback = page.waitForResponse((r) => new URL(r.url()).pathname === '/portal/oidc/callback');
  await page.getByRole('button', { name: 'Continue' }).click();
  const status = (await callback).status();
  await page.waitForLoadState();
  return { page, status };
}

/** Who `page`'s browser is signed in as: the email the portal shows, or undefined when it sends them to sign in. */
async function signedInAs(page: Page): Promise<string | undefined> {
  const response = await page.request.get(`${baseUrl}/portal`, { maxRedirects: 0 });
  if (response.status() !== 200) return undefined;
  return /data-testid="signed-in-as">([^<]*)</.exec(await response.text())?.[1];
}

const sessionCookieOf = async (context: BrowserContext) => (await context.cookies(baseUrl)).find((c) => c.name === 'sb_session');

/** Whether the portal accepts a replay of this session cookie value (from any client). */
async function cookieStillWorks(value: string): Promise<boolean> {
  const res = await fetch(`${baseUrl}/portal`, { headers: { cookie: `sb_session=${value}` }, redirect: 'manual' });
  return res.status === 200;
}

const bindingOf = async (user: TestUser) =>
  (await pool().query('SELECT oidc_issuer AS issuer, oidc_subject AS subject FROM users WHERE id = $1', [user.user.id])).rows[0];

// Several real sign-ins per test through the provider's pages: generous under a loaded machine.
describe('finding 8: OIDC sign-in trusts only verified emails, and binds users to issuer + subject', { timeout: 120_000 }, () => {
  it('finding 8: an identity-provider account with an unverified email is refused as the user with that email', async () => {
    const alice = await createTestUser(stack, { email: 'alice8@acme.example' });
    // Mallory registers an account at the identity provider with Alice's email, never verified.
    auth.accountClaims.set('mallory-unverified', { email: 'alice8@acme.example', email_verified: false });
    // A provider that sends the flag as a string has not verified it either.
    auth.accountClaims.set('mallory-stringly', { email: 'alice8@acme.example', email_verified: 'true' });
    for (const login of ['mallory-unverified', 'mallory-stringly']) {
      const { page, status } = await signInThroughProvider(login);
      expect(status, login).toBe(403);
      expect(await page.locator('h1').textContent()).toBe('Email not verified');
      expect(await page.getByRole('status').textContent()).toContain('has not verified the email alice8@acme.example');
      expect(await sessionCookieOf(page.context())).toBeUndefined();
      await page.context().close();
    }
    expect(await bindingOf(alice)).toEqual({ issuer: null, subject: null });
  });

  it('finding 8: once bound, another account or another issuer with the same verified email is refused', async () => {
    const bob = await createTestUser(stack, { email: 'bob8@acme.example' });
    // Bob's account at the provider: subject bob8-account, his email verified.
    auth.accountClaims.set('bob8-account', { email: 'bob8@acme.example' });
    const bound = await signInThroughProvider('bob8-account');
    expect(bound.status).toBe(303);
    expect(await signedInAs(bound.page)).toBe('bob8@acme.example');
    expect(await bindingOf(bob)).toEqual({ issuer: auth.issuer, subject: 'bob8-account' });
    await bound.page.context().close();

    // Mallory's own provider account, with Bob's (verified) email: a different subject.
    auth.accountClaims.set('mallory-as-bob', { email: 'bob8@acme.example', email_verified: true });
    const other = await signInThroughProvider('mallory-as-bob');
    expect(other.status).toBe(403);
    expect(await other.page.locator('h1').textContent()).toBe('Signed in with another account');
    expect(await sessionCookieOf(other.page.context())).toBeUndefined();
    await other.page.context().close();

    // The same subject from another issuer (the row says Bob was bound at another provider).
    await pool().query(`UPDATE users SET oidc_issuer = 'https://old-idp.example' WHERE id = $1`, [bob.user.id]);
    const elsewhere = await signInThroughProvider('bob8-account');
    expect(elsewhere.status).toBe(403);
    expect(await elsewhere.page.locator('h1').textContent()).toBe('Signed in with another account');
    await elsewhere.page.context().close();

    // An operator releases the binding (admin unbind-sign-in): the next verified sign-in binds again.
    await unbindOidcIdentity(pool(), bob.user.id);
    const again = await signInThroughProvider('bob8-account');
    expect(await signedInAs(again.page)).toBe('bob8@acme.example');
    expect(await bindingOf(bob)).toEqual({ issuer: auth.issuer, subject: 'bob8-account' });
    await again.page.context().close();
  });

  it('finding 8: the normal path: a verified email signs in and binds; later sign-ins go by subject, even after the email changes', async () => {
    const carol = await createTestUser(stack, { email: 'carol8@acme.example' });
    const first = await signInThroughProvider('carol8@acme.example');
    expect(first.status).toBe(303);
    expect(new URL(first.page.url()).pathname).toBe('/portal');
    expect(await first.page.getByTestId('signed-in-as').textContent()).toBe('carol8@acme.example');
    expect(await bindingOf(carol)).toEqual({ issuer: auth.issuer, subject: 'carol8@acme.example' });
    await first.page.context().close();

    auth.accountClaims.set('carol8@acme.example', { email: 'carol.renamed@acme.example', email_verified: false });
    const later = await signInThroughProvider('carol8@acme.example');
    expect(await signedInAs(later.page)).toBe('carol8@acme.example');
    await later.page.context().close();
  });
});

// Several real sign-ins per test through the provider's pages: generous under a loaded machine.
describe('finding 9: no sign-in or sign-out from another site; sessions end for good', { timeout: 120_000 }, () => {
  it('finding 9: a page on another site auto-submitting /portal/logout is refused, and the victim stays signed in', async () => {
    const alice = await createTestUser(stack, { email: 'alice9@acme.example' });
    const page = await signedInPage(browser, alice);
    for (const origin of attackerOrigins()) {
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url() === `${baseUrl}/portal/logout`),
        page.goto(`${origin}/logout`),
      ]);
      expect(response.status(), origin).toBe(403);
      // The Host/Origin guard or the portal's own cross-site check, whichever sees it first.
      expect(await response.text()).toMatch(/refused/i);
      expect(await signedInAs(page), origin).toBe('alice9@acme.example');
    }
    await page.context().close();
  });

  it("finding 9: a page on another site posting Mallory's sign-in link does not sign the victim in as Mallory", async () => {
    const alice = await createTestUser(stack, { email: 'alice9b@acme.example' });
    const mallory = await createTestUser(stack, { email: 'mallory9@evil.example' });
    const signedIn = await signedInPage(browser, alice);
    const fresh = await (await browser.newContext()).newPage();
    for (const origin of attackerOrigins()) {
      for (const [victim, expected] of [
        [signedIn, 'alice9b@acme.example'],
        [fresh, undefined],
      ] as const) {
        // Mallory's own one-time link (what `admin login-link` printed for her), in her page's form.
        const token = await createLoginToken(pool(), mallory.user.id);
        const [response] = await Promise.all([
          victim.waitForResponse((r) => r.url() === `${baseUrl}/portal/login-link`),
          victim.goto(`${origin}/login?token=${token}&next=/portal`),
        ]);
        expect(response.status(), origin).toBe(403);
        expect(await signedInAs(victim), origin).toBe(expected);
      }
    }
    await signedIn.context().close();
    await fresh.context().close();
  });

  it('finding 9: a sign-in link Mallory sends the victim says whose account it opens, and warns a signed-in victim before switching', async () => {
    const alice = await createTestUser(stack, { email: 'alice9l@acme.example' });
    const mallory = await createTestUser(stack, { email: 'mallory9l@evil.example' });
    const victim = await signedInPage(browser, alice);
    // Mallory's own one-time link, sent to Alice as "your sign-in link": opening it is a top-level
    // navigation the cross-site check cannot tell from Alice's own click.
    await victim.goto(await mallory.loginLink());
    const text = (await victim.locator('body').textContent()) ?? '';
    expect(text).toContain('mallory9l@evil.example');
    expect(text).toContain('alice9l@acme.example');
    expect(text).toMatch(/instead/i);
    // Opening the page changed nothing; the token is still unused.
    expect(await signedInAs(victim)).toBe('alice9l@acme.example');
    // A used or unknown link shows no sign-in button at all.
    await victim.goto(`${baseUrl}/portal/login-link?token=not-a-token`);
    expect(await victim.getByRole('button', { name: /sign in/i }).count()).toBe(0);
    await victim.context().close();
  });

  it("finding 9: a session cookie planted next to the victim's (a sibling subdomain's cookie tossing) never signs the victim in as Mallory", async () => {
    const alice = await createTestUser(stack, { email: 'alice9t@acme.example' });
    const mallory = await createTestUser(stack, { email: 'mallory9t@evil.example' });
    const malloryPage = await signedInPage(browser, mallory);
    const planted = (await sessionCookieOf(malloryPage.context()))!.value;
    const victim = await signedInPage(browser, alice);
    // A sibling subdomain (same site) can set a cookie of the same name with a wider Domain or a
    // narrower Path; the browser then sends both, the planted one first. Here: a narrower Path.
    const url = new URL(baseUrl);
    await victim
      .context()
      .addCookies([{ name: 'sb_session', value: planted, domain: url.hostname, path: '/portal', httpOnly: true, sameSite: 'Lax' }]);
    expect((await victim.context().cookies(`${baseUrl}/portal`)).filter((c) => c.name === 'sb_session')).toHaveLength(2);
    expect(await signedInAs(victim)).not.toBe('mallory9t@evil.example');
    // Nor do the portal's forms act for Mallory: the Integrations page is not Mallory's.
    await victim.goto(`${baseUrl}/portal/integrations`);
    expect(await victim.content()).not.toContain('mallory9t@evil.example');
    await victim.context().close();
    await malloryPage.context().close();
  });

  it('finding 9: a form post that says Sec-Fetch-Site cross-site or same-site is refused even without an Origin header', async () => {
    const alice = await createTestUser(stack, { email: 'alice9c@acme.example' });
    const page = await signedInPage(browser, alice);
    const cookie = (await sessionCookieOf(page.context()))!.value;
    for (const site of ['cross-site', 'same-site']) {
      const res = await fetch(`${baseUrl}/portal/logout`, {
        method: 'POST',
        headers: { cookie: `sb_session=${cookie}`, 'sec-fetch-site': site },
        redirect: 'manual',
      });
      expect(res.status, site).toBe(403);
      expect(await res.text()).toContain('came from another site');
    }
    expect(await cookieStillWorks(cookie)).toBe(true);
    await page.context().close();
  });

  it("finding 9: after sign-out the old session cookie is refused when replayed, and the user's other browsers are signed out", async () => {
    const dora = await createTestUser(stack, { email: 'dora9@acme.example' });
    const page = await signedInPage(browser, dora);
    const otherBrowser = await signedInPage(browser, dora);
    const old = (await sessionCookieOf(page.context()))!;
    expect(await cookieStillWorks(old.value)).toBe(true);

    const [signOut] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${baseUrl}/portal/logout`),
      page.getByRole('button', { name: 'Sign out' }).click(),
    ]);
    expect(signOut.status()).toBe(303);
    expect(await signedInAs(page)).toBeUndefined();

    // The cookie Mallory copied before the sign-out, put back into a browser.
    const replay = await browser.newContext();
    await replay.addCookies([{ ...old }]);
    const replayed = await replay.newPage();
    expect(await signedInAs(replayed)).toBeUndefined();
    expect(await cookieStillWorks(old.value)).toBe(false);
    expect(await signedInAs(otherBrowser)).toBeUndefined();
    await replay.close();
    await otherBrowser.context().close();

    // Signing in again works, with a new session.
    const back = await signedInPage(browser, dora);
    expect(await signedInAs(back)).toBe('dora9@acme.example');
    await back.context().close();
    await page.context().close();
  });

  it('finding 9: a role change and an API key revocation each end the sessions that existed before', async () => {
    const erin = await createTestUser(stack, { email: 'erin9@acme.example', roles: ['member', 'admin'] });
    const page = await signedInPage(browser, erin);
    const beforeRoles = (await sessionCookieOf(page.context()))!.value;
    await setUserRoles(pool(), erin.user.id, ['member']);
    expect(await cookieStillWorks(beforeRoles)).toBe(false);
    expect(await signedInAs(page)).toBeUndefined();
    await page.context().close();

    const again = await signedInPage(browser, erin);
    const beforeRevocation = (await sessionCookieOf(again.context()))!.value;
    // Setting the same roles is no change: the session stays.
    await setUserRoles(pool(), erin.user.id, ['member']);
    expect(await cookieStillWorks(beforeRevocation)).toBe(true);
    const [key] = (await listApiKeys(pool(), erin.user.tenantId)).filter((k) => k.userId === erin.user.id);
    expect(await revokeApiKey(pool(), key.id)).toBe(true);
    expect(await cookieStillWorks(beforeRevocation)).toBe(false);
    expect(await signedInAs(again)).toBeUndefined();
    await again.context().close();
  });
});
