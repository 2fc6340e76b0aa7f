import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { Express } from 'express';
import { SignJWT } from 'jose';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { getAttempt } from '../../features/connections/store/connection-attempts.js';
import { createApp } from '../../surfaces/http/app.js';
import { consentAs, csrfOfPage, signedInPage, signIn } from '../support/consent.js';
import { consentInCode } from '../support/consent-in-code.js';
import { startConnectFlowsWorld } from '../support/harness.js';
import { rawRequest } from '../support/raw-http.js';

/**
 * The attacks on the flows a human's browser takes part in that the review's findings 1, 9 and
 * 10 do not already play (SECURITY.md, "Browsers"): a tampered connect link, a finished consent
 * injected into the victim's browser, hostile text reflected in pages, open redirects and header
 * injection, framing, cross-site posts to every cookie-authenticated route, session fixation,
 * the binding cookies' flags, and a page on another site probing what the victim has. Real
 * chromium where a browser's rules decide, raw HTTP where only the server's answer does.
 */

const world = await startConnectFlowsWorld();
const { auth, stack } = world;
const base = stack.baseUrl;
const alice = await world.user({ email: 'alice@browser.example' });
const mallory = await world.user({ tenantId: alice.user.tenantId, email: 'mallory@browser.example' });
/** A user of another tenant. */
const erin = await world.user({ email: 'erin@elsewhere.example' });
const browser = await world.browser();
const pool = () => stack.services.pool;

/** A page on another origin (another port: the same site, as a sibling would be), serving what a test puts in `hostile.html`. */
const hostile = { html: '' };
const attacker = await world.serve((_req, res) => {
  res.setHeader('content-type', 'text/html');
  res.end(hostile.html);
});

const sessionCookie = async (page: Page) => (await page.context().cookies(base)).find((c) => c.name === 'sb_session')?.value ?? '';
const stateHashOf = async (attemptId: string) =>
  (await pool().query(`SELECT state_hash FROM connection_attempts WHERE id = $1`, [attemptId])).rows[0]?.state_hash;
const accountsOf = async (...userIds: string[]) =>
  (await pool().query(`SELECT label FROM accounts WHERE owner_user_id = ANY($1) ORDER BY label`, [userIds])).rows.map((r) => r.label);
const setCookies = (headers: Record<string, string | string[] | undefined>) => {
  const raw = headers['set-cookie'];
  return raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
};

describe('the connect link token (t=)', () => {
  it('a tampered, re-labelled, expired or borrowed t= opens nothing: no state recorded, no binding cookie, no consent page', async () => {
    const { body: started } = await alice.call('connect', { integration: 'github' });
    const page = await signedInPage(browser, alice);
    const cookie = `sb_session=${await sessionCookie(page)}`;
    const secret = new TextEncoder().encode(stack.services.config.PORTAL_SIGNING_SECRET);
    const claims = { a: started.connectionId, u: alice.user.id, t: alice.user.tenantId };
    const now = Math.floor(Date.now() / 1000);
    const payload = { ...claims, aud: 'switchboard:connect-link', iat: now, exp: now + 600 };
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const rsHeaderAndPayload = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64(payload)}`;
    const forged: Record<string, string> = {
      'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}.`,
      'HS512 under the real secret': await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS512' })
        .setAudience('switchboard:connect-link')
        .setExpirationTime(now + 600)
        .sign(secret),
      // HS/RS confusion: an RS256 header over an HMAC made with the secret.
      'RS256 header, HMAC signature': `${rsHeaderAndPayload}.${createHmac('sha256', secret).update(rsHeaderAndPayload).digest('base64url')}`,
      'another key': await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256' })
        .setAudience('switchboard:connect-link')
        .setExpirationTime(now + 600)
        .sign(randomBytes(32)),
      'no audience': await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime(now + 600)
        .sign(secret),
      "Alice's own portal session token": await stack.services.signer.sign('portal-session', claims, 600),
      expired: await stack.services.signer.sign('connect-link', claims, -60),
      'the genuine token cut short': new URL(started.url).searchParams.get('t')!.slice(0, -2),
    };
    for (const [what, token] of Object.entries(forged)) {
      const res = await rawRequest(`${base}/connect/github?t=${encodeURIComponent(token)}`, { headers: { cookie, accept: 'text/html' } });
      expect(res.status, what).toBe(400);
      expect(res.text, what).toContain('Link not valid');
      expect(res.headers.location, what).toBeUndefined();
      expect(setCookies(res.headers), what).toEqual([]);
    }
    // The genuine token on another integration's path.
    const genuine = new URL(started.url).searchParams.get('t')!;
    const elsewhere = await rawRequest(`${base}/connect/atlassian-jira?t=${genuine}`, { headers: { cookie, accept: 'text/html' } });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.text).toContain('does not match a connection attempt');
    expect(elsewhere.headers.location).toBeUndefined();
    expect(await stateHashOf(started.connectionId)).toBeNull();

    // A genuine link of a user of another tenant, opened by Alice: Wrong account, nothing recorded for Erin.
    const { body: erins } = await erin.call('connect', { integration: 'github' });
    const foreign = await rawRequest(erins.url, { headers: { cookie, accept: 'text/html' } });
    expect(foreign.status).toBe(403);
    expect(foreign.text).toContain('Wrong account');
    expect(setCookies(foreign.headers)).toEqual([]);
    expect(await stateHashOf(erins.connectionId)).toBeNull();
    await page.context().close();
  });
});

describe('a finished consent injected into the victim’s browser', () => {
  it("Mallory's own code and state, opened in Alice's browser mid-connect: Wrong account, nothing exchanged, Alice's own connect still ends on Alice's account", async () => {
    // Alice opens her own connect link: her browser holds the binding of her own state, at the consent page.
    const { body: alices } = await alice.call('connect', { integration: 'github' });
    const alicePage = await signedInPage(browser, alice);
    await alicePage.goto(alices.url);
    await alicePage.waitForURL((url) => url.href.startsWith(auth.issuer));

    // Mallory opens her own link in her own browser and consents as her own account at the service,
    // but keeps the callback URL (code and state) instead of following it.
    const { body: mallorys } = await mallory.call('connect', { integration: 'github' });
    const malloryPage = await signedInPage(browser, mallory);
    const consentUrl = (await malloryPage.request.get(mallorys.url, { maxRedirects: 0 })).headers().location;
    const injected = (await consentInCode(new URL(consentUrl), 'mallory-gh')).href;
    expect(new URL(injected).searchParams.get('code')).toBeTruthy();

    // The link lands in Alice's browser (a link in a chat, a redirect from Mallory's page).
    const exchangesBefore = auth.grants.authorization_code;
    const landed = await alicePage.context().newPage();
    const response = await landed.goto(injected);
    expect(response?.status()).toBe(403);
    expect(await landed.locator('h1').textContent()).toBe('Wrong account');
    expect(auth.grants.authorization_code).toBe(exchangesBefore);
    expect(await accountsOf(alice.user.id, mallory.user.id)).toEqual([]);
    expect((await getAttempt(pool(), mallorys.connectionId))?.status).toBe('PENDING');
    // The state is spent: Mallory's own browser cannot use the code either.
    const replay = await malloryPage.goto(injected);
    expect(replay?.status()).toBe(400);
    expect(auth.grants.authorization_code).toBe(exchangesBefore);

    // Alice's own consent, still open, connects Alice's service account to Alice, and nothing to Mallory.
    await consentAs(alicePage, auth, 'alice-gh');
    expect(await alicePage.locator('h1').textContent()).toBe('Connected');
    expect(await accountsOf(alice.user.id)).toEqual(['alice-gh']);
    expect(await accountsOf(mallory.user.id)).toEqual([]);
    await pool().query(`DELETE FROM accounts WHERE owner_user_id = $1`, [alice.user.id]);
    await alicePage.context().close();
    await malloryPage.context().close();
  });
});

describe('the iss of the callback (RFC 9207)', () => {
  it('a callback whose iss names another server, or names two, exchanges nothing, even in the right browser', async () => {
    const page = await signedInPage(browser, alice);
    const exchangesBefore = auth.grants.authorization_code;
    for (const [what, setIss, status] of [
      ['a foreign iss', (q: URLSearchParams) => q.set('iss', 'https://evil.example'), 502],
      // The issuer's own iss plus a foreign one: a response the server never sent (RFC 6749 §4.1.2: no parameter twice).
      ['iss twice', (q: URLSearchParams) => q.append('iss', 'https://evil.example'), 400],
      ['code twice', (q: URLSearchParams) => q.append('code', 'another-code'), 400],
    ] as const) {
      const { body: started } = await alice.call('connect', { integration: 'github' });
      const consentUrl = (await page.request.get(started.url, { maxRedirects: 0 })).headers().location;
      const callback = await consentInCode(new URL(consentUrl), 'alice-mixup');
      expect(callback.searchParams.get('iss'), what).toBeTruthy();
      setIss(callback.searchParams);
      const response = await page.goto(callback.href);
      expect(response?.status(), what).toBe(status);
      expect(await page.locator('h1').textContent(), what).not.toBe('Connected');
      expect(auth.grants.authorization_code, what).toBe(exchangesBefore);
      expect((await getAttempt(pool(), started.connectionId))?.status, what).toBe('PENDING');
    }
    expect(await accountsOf(alice.user.id)).toEqual([]);
    await page.context().close();
  });
});

describe('hostile text reflected in pages', () => {
  const XSS = `<img src=x onerror="window.__pwned=1">"'<script>window.__pwned=2</script>`;

  it('the callback escapes the error the service sends back (and says nothing of error_description); path names and headers are escaped too', async () => {
    const { body: started } = await alice.call('connect', { integration: 'github' });
    const page = await signedInPage(browser, alice);
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    // The connect link's answer: the binding cookie, and the consent URL with Alice's state.
    const consent = await page.request.get(started.url, { maxRedirects: 0 });
    const state = new URL(consent.headers().location).searchParams.get('state')!;
    const callback = new URL(`${base}/oauth/callback`);
    callback.searchParams.set('state', state);
    callback.searchParams.set('error', XSS);
    callback.searchParams.set('error_description', XSS);
    callback.searchParams.set('error_uri', 'javascript:window.__pwned=3');
    const response = await page.goto(callback.href);
    expect(response?.status()).toBe(400);
    expect(await page.locator('h1').textContent()).toBe('Not connected');
    expect(await page.locator('[role=status]').textContent()).toContain(XSS);
    expect(await response?.text()).not.toContain('<img src=x');
    expect(await response?.text()).not.toContain('javascript:');

    // An integration page named by markup, and a connect link on a path named by markup.
    for (const path of [
      `/portal/integrations/${encodeURIComponent(XSS)}`,
      `/connect/${encodeURIComponent(XSS)}?t=${new URL(started.url).searchParams.get('t')}`,
    ]) {
      const res = await page.goto(`${base}${path}`);
      expect(res?.status(), path).toBeGreaterThanOrEqual(400);
      expect(await res?.text(), path).not.toContain('<img src=x');
    }
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);

    // A Host and a Sec-Fetch-Site made of markup come back escaped in the refusal pages.
    const host = await rawRequest(`${base}/portal`, { headers: { host: '<script>x</script>', accept: 'text/html' } });
    expect(host.status).toBe(421);
    expect(host.text).not.toContain('<script>x');
    const site = await rawRequest(`${base}/portal/logout`, { method: 'POST', headers: { 'sec-fetch-site': '<script>x</script>' } });
    expect(site.status).toBe(403);
    expect(site.text).not.toContain('<script>x');
    await page.context().close();
  });

  it("a page's ?done= shows only its own notices: an inherited name (constructor, __proto__, toString) shows nothing", async () => {
    // An administrator, who may open every page that takes ?done= (the upstreams page is theirs alone).
    const page = await signedInPage(browser, await world.user({ roles: ['admin'] }));
    for (const path of ['/portal/accounts', '/portal/approvals', '/portal/upstreams']) {
      const plain = await (await page.goto(`${base}${path}`))?.text();
      for (const done of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        const res = await page.goto(`${base}${path}?done=${done}`);
        const text = (await res?.text()) ?? '';
        expect(res?.status(), `${path}?done=${done}`).toBe(200);
        expect(text, `${path}?done=${done}`).not.toContain('native code');
        expect(text, `${path}?done=${done}`).not.toContain('[object');
        expect(await page.locator('[role=status]').count(), `${path}?done=${done}`).toBe(0);
      }
      expect(plain, path).not.toContain('native code');
    }
    await page.context().close();
  });
});

describe('open redirects and header injection', () => {
  it("a sign-in's next never leaves the portal's origin, and never adds a header", async () => {
    const hostileNexts = [
      '//evil.example/x',
      '/\\evil.example',
      '/\\/evil.example',
      '\\\\evil.example',
      'https:evil.example',
      'https://evil.example',
      '/\t/evil.example',
      '/\n/evil.example',
      '/\r\n/evil.example',
      ' //evil.example',
      '/%2F%2Fevil.example',
      '/%5Cevil.example',
      '/%09/evil.example',
      'javascript:alert(1)',
      '/portal\r\nSet-Cookie: pwned=1',
      '/portal%0d%0aSet-Cookie:%20pwned=1',
    ];
    for (const next of hostileNexts) {
      const token = new URL(await alice.loginLink()).searchParams.get('token')!;
      const res = await fetch(`${base}/portal/login-link`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
        body: new URLSearchParams({ token, next }).toString(),
        redirect: 'manual',
      });
      expect(res.status, JSON.stringify(next)).toBe(303);
      const location = res.headers.get('location') ?? '';
      // Resolved the way a browser resolves it (WHATWG URL drops tabs and newlines, reads \ as /).
      expect(new URL(location, base).origin, JSON.stringify({ next, location })).toBe(base);
      expect(location, JSON.stringify(next)).not.toMatch(/[\s\\]/);
      expect(
        res.headers.getSetCookie().some((c) => c.startsWith('pwned')),
        JSON.stringify(next),
      ).toBe(false);
    }
    // The page a sign-in link opens carries only a safe next in its form.
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${await alice.loginLink()}&next=${encodeURIComponent('//evil.example')}`);
    expect(await page.locator('input[name="next"]').inputValue()).toBe('/portal');
    await page.getByRole('button', { name: /Sign in/ }).click();
    await page.waitForURL((url) => url.origin === base && url.pathname === '/portal');
    await page.context().close();
  });
});

/** Opens this signed-in browser's capture of a new Hacker News attempt; answers the capture page's path and response. */
async function openCapture(page: Page) {
  const { body: started } = await alice.call('connect', { integration: 'hackernews' });
  const response = await page.goto(started.url);
  const path = new URL(page.url()).pathname;
  expect(path).toMatch(/^\/portal\/capture\/[\w-]+$/);
  return { path, response, attemptId: started.connectionId as string };
}

describe('framing (clickjacking)', () => {
  it('every page a human sees forbids framing, and a page on another site that frames the capture page shows nothing of it', async () => {
    const page = await signedInPage(browser, alice);
    const cookie = `sb_session=${await sessionCookie(page)}`;
    const capture = await openCapture(page);
    const { body: mallorys } = await mallory.call('connect', { integration: 'github' });
    const html = { accept: 'text/html' };
    const answers = {
      'sign-in page': await rawRequest(`${base}/portal/login`, { headers: html }),
      'sign-in link page': await rawRequest(await alice.loginLink(), { headers: html }),
      'unknown sign-in link': await rawRequest(`${base}/portal/login-link?token=nope`, { headers: html }),
      portal: await rawRequest(`${base}/portal`, { headers: { ...html, cookie } }),
      accounts: await rawRequest(`${base}/portal/accounts`, { headers: { ...html, cookie } }),
      approvals: await rawRequest(`${base}/portal/approvals`, { headers: { ...html, cookie } }),
      'invalid connect link': await rawRequest(`${base}/connect/github?t=nope`, { headers: { ...html, cookie } }),
      'wrong account': await rawRequest(mallorys.url, { headers: { ...html, cookie } }),
      'unknown callback': await rawRequest(`${base}/oauth/callback?state=nope&code=x`, { headers: html }),
      'not found': await rawRequest(`${base}/nowhere`, { headers: html }),
      'foreign Host': await rawRequest(`${base}/portal`, { headers: { ...html, host: 'rebind.example' } }),
      'cross-site refusal': await rawRequest(`${base}/portal/logout`, { method: 'POST', headers: { 'sec-fetch-site': 'cross-site' } }),
    };
    const captureHeaders = (await capture.response?.allHeaders()) ?? {};
    for (const [what, headers] of [
      ...Object.entries(answers).map(([w, r]) => [w, r.headers] as const),
      ['capture page', captureHeaders] as const,
    ]) {
      expect(String(headers['content-security-policy']), what).toContain("frame-ancestors 'none'");
      expect(String(headers['x-frame-options']), what).toMatch(/^(DENY|SAMEORIGIN)$/);
    }

    // In the victim's own browser, a page on another site frames the live capture page and the portal.
    hostile.html = `<iframe id="capture" src="${base}${capture.path}"></iframe><iframe id="portal" src="${base}/portal"></iframe>`;
    const framed = Promise.all([
      page.waitForResponse((r) => r.url() === `${base}${capture.path}`),
      page.waitForResponse((r) => r.url() === `${base}/portal`),
    ]);
    await page.goto(attacker.url);
    await framed;
    for (const frame of page.frames().filter((f) => f !== page.mainFrame())) {
      const shown = await frame.evaluate(() => document.body?.textContent ?? '').catch(() => '');
      expect(shown).not.toContain('Capture');
      expect(shown).not.toContain('Signed in as');
    }
    await page.context().close();
  });
});

/** Every POST route of the app, by its full path (the routers' mount paths joined). */
function postRoutes(app: Express): string[] {
  type Layer = { route?: { path: string; methods: Record<string, boolean> }; handle?: { stack?: Layer[] }; rawPath?: unknown };
  const found: string[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        if (layer.route.methods.post) found.push(`${prefix}${layer.route.path}`);
      } else if (layer.handle?.stack) {
        const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
        walk(layer.handle.stack, `${prefix}${mount}`);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return found;
}

/** POST routes a bearer API key authenticates, never a cookie: not a CSRF target. */
const BEARER_ROUTES = ['/v1/tools/:name', '/mcp', '/mcp/agent', '/codec/decode', '/codec/encode'];

describe('cross-site posts to every cookie-authenticated route', () => {
  it('every POST a session cookie reaches refuses Origin null, another origin, Sec-Fetch-Site cross-site and same-site, even with the right CSRF token; a text/plain form from another site changes nothing', async () => {
    const page = await signedInPage(browser, alice);
    const cookie = `sb_session=${await sessionCookie(page)}`;
    const csrf = await csrfOfPage(stack.services, page);
    const { account } = await world.connectGithub(alice, 'alice-csrf');
    const routes = postRoutes(createApp(stack.services)).filter((path) => !BEARER_ROUTES.includes(path));
    // A new cookie route shows up here, and gets the same attacks.
    expect(routes.length).toBeGreaterThanOrEqual(15);
    const concrete = (path: string) =>
      path.replace(':name', 'linear').replace(':id', account.id).replace(':sid', randomUUID()).replace(':integration', 'github');
    const crossSite: Record<string, Record<string, string>> = {
      'Origin null': { origin: 'null' },
      'another origin': { origin: attacker.url },
      'Sec-Fetch-Site cross-site': { 'sec-fetch-site': 'cross-site' },
      'Sec-Fetch-Site same-site': { 'sec-fetch-site': 'same-site' },
    };
    for (const path of routes) {
      for (const [what, headers] of Object.entries(crossSite)) {
        const res = await rawRequest(`${base}${concrete(path)}`, {
          method: 'POST',
          headers: { ...headers, cookie, 'content-type': 'application/x-www-form-urlencoded', 'x-csrf-token': csrf },
          body: new URLSearchParams({ _csrf: csrf, label: 'pwned', decision: 'approve', for: 'organisation' }).toString(),
        });
        expect(res.status, `${what} → POST ${path}`).toBe(403);
      }
    }

    // In chromium: another site's text/plain form (no preflight) carrying the right token, against disconnect and rename.
    const field = (name: string, value: string) => `<input type="hidden" name="${name}" value="${value}">`;
    for (const action of [`/portal/accounts/${account.id}/disconnect`, `/portal/accounts/${account.id}/label`]) {
      hostile.html = `<form id="f" method="post" enctype="text/plain" action="${base}${action}">${field('_csrf', csrf)}${field('label', 'pwned')}</form>
<script>document.getElementById('f').submit()</script>`;
      const [response] = await Promise.all([page.waitForResponse((r) => r.url() === `${base}${action}`), page.goto(attacker.url)]);
      expect(response.status(), action).toBe(403);
    }
    expect(await accountsOf(alice.user.id)).toEqual(['alice-csrf']);
    await pool().query(`DELETE FROM accounts WHERE owner_user_id = $1`, [alice.user.id]);
    await page.context().close();
  });
});

describe('sessions and cookies', () => {
  it('signing in mints a new session: a session cookie planted before sign-in never becomes the victim’s, and its CSRF token is refused', async () => {
    const malloryPage = await signedInPage(browser, mallory);
    const planted = await sessionCookie(malloryPage);
    const plantedCsrf = await csrfOfPage(stack.services, malloryPage);
    // Mallory's cookie in the victim's browser (what a sibling could plant over plain http), then the victim signs in.
    const victim = await (await browser.newContext()).newPage();
    await victim.context().addCookies([{ name: 'sb_session', value: planted, url: base }]);
    await signIn(victim, alice);
    const mine = await sessionCookie(victim);
    expect(mine).not.toBe(planted);
    expect(await victim.locator('[data-testid=signed-in-as]').textContent()).toBe('alice@browser.example');
    // The planted value is still Mallory's session alone; it never gained Alice's identity.
    const asPlanted = await rawRequest(`${base}/portal`, { headers: { cookie: `sb_session=${planted}` } });
    expect(asPlanted.text).toContain('mallory@browser.example');
    expect(asPlanted.text).not.toContain('alice@browser.example');
    // A token minted for the planted session does nothing for the victim's.
    const { account } = await world.connectGithub(alice, 'alice-fixation');
    const posted = await victim.request.post(`${base}/portal/accounts/${account.id}/disconnect`, {
      form: { _csrf: plantedCsrf },
      maxRedirects: 0,
    });
    expect(posted.status()).toBe(403);
    expect(await accountsOf(alice.user.id)).toEqual(['alice-fixation']);
    await pool().query(`DELETE FROM accounts WHERE owner_user_id = $1`, [alice.user.id]);
    await victim.context().close();
    await malloryPage.context().close();
  });

  it('the session cookie and every binding cookie are HttpOnly and SameSite=Lax, each sent only to the path that finishes its step, and short-lived', async () => {
    const page = await signedInPage(browser, alice);
    const { body: started } = await alice.call('connect', { integration: 'github' });
    await page.goto(started.url);
    await page.waitForURL((url) => url.href.startsWith(auth.issuer));
    await page.goto(`${base}/portal/integrations/linear`);
    const capture = await openCapture(page);
    const cookies = await page.context().cookies();
    const byName = (name: string) => cookies.find((c) => c.name === name);
    const now = Date.now() / 1000;
    const expected = {
      sb_session: { path: '/', maxTtl: 12 * 3600 },
      [`sb_oauth_${started.connectionId}`]: { path: '/oauth/callback', maxTtl: 600 },
      sb_form: { path: '/portal/integrations/linear', maxTtl: 30 * 60 },
      sb_capture: { path: capture.path, maxTtl: 600 },
    };
    for (const [name, { path, maxTtl }] of Object.entries(expected)) {
      const c = byName(name);
      expect(c, name).toBeDefined();
      expect({ httpOnly: c?.httpOnly, sameSite: c?.sameSite, path: c?.path }, name).toEqual({ httpOnly: true, sameSite: 'Lax', path });
      expect(c!.expires, name).toBeGreaterThan(now);
      expect(c!.expires, name).toBeLessThanOrEqual(now + maxTtl + 5);
    }
    // No script on the portal's origin can read any of them.
    await page.goto(`${base}/portal`);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    await page.context().close();
  });
});

describe('a shared computer after sign-out', () => {
  it("Back after signing out shows the next person nothing of the last one's pages: every page that depends on the session is no-store", async () => {
    await world.connectGithub(alice, 'alice-private-label');
    const page = await signedInPage(browser, alice);
    const privatePages = [
      '/portal',
      '/portal/accounts',
      '/portal/integrations',
      '/portal/integrations/linear',
      '/portal/integrations/github',
      '/portal/approvals',
    ];
    // Alice's accounts page, then she signs out with its button and walks away.
    await page.goto(`${base}/portal/accounts`);
    expect(await page.content()).toContain('alice-private-label');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.pathname === '/portal/login');
    // The next person presses Back.
    await page.goBack();
    expect(await page.content()).not.toContain('alice-private-label');
    expect(new URL(page.url()).pathname === '/portal/login' || (await page.locator('h1').textContent()) === 'Sign in').toBe(true);
    // Every page that depends on the session says so to every cache.
    await signIn(page, alice);
    for (const path of privatePages) {
      const response = await page.goto(`${base}${path}`);
      expect(response?.status(), path).toBe(200);
      expect(response?.headers()['cache-control'], path).toContain('no-store');
    }
    await pool().query(`DELETE FROM accounts WHERE owner_user_id = $1`, [alice.user.id]);
    await page.context().close();
  });
});

describe('a page on another site probing the victim', () => {
  it("reads nothing of the victim's accounts or capture, and an image probe answers the same for the victim's live capture as for a made-up one", async () => {
    const page = await signedInPage(browser, alice);
    await world.connectGithub(alice, 'alice-probed');
    const capture = await openCapture(page);
    hostile.html = `<script>
const base = ${JSON.stringify(base)};
const read = (url, mode) => fetch(url, { credentials: 'include', mode }).then(async (r) => r.type + ':' + r.status + ':' + (await r.text()).length, (e) => 'blocked');
const probe = (url) => new Promise((resolve) => { const i = new Image(); i.onload = () => resolve('load'); i.onerror = () => resolve('error'); i.src = url; });
window.results = Promise.all([
  read(base + '/portal/accounts', 'cors'),
  read(base + ${JSON.stringify(`${capture.path}/state`)}, 'cors'),
  read(base + '/portal/accounts', 'no-cors'),
  probe(base + ${JSON.stringify(`${capture.path}/frame.jpg`)}),
  probe(base + '/portal/capture/' + crypto.randomUUID() + '/frame.jpg'),
]);
</script>`;
    // localhost is another site than 127.0.0.1: the page is cross-site, as a page on the web would be.
    await page.goto(`http://localhost:${attacker.port}`);
    const [accounts, state, opaque, liveProbe, madeUpProbe] = await page.evaluate(
      () => (window as unknown as { results: Promise<string[]> }).results,
    );
    expect(accounts).toBe('blocked');
    expect(state).toBe('blocked');
    // Refused outright (the Host/Origin guard, the browser's opaque-response blocking) or opaque: nothing readable.
    expect(['blocked', 'opaque:0:0']).toContain(opaque);
    expect(liveProbe).toBe(madeUpProbe);
    // The victim's own page still sees the live view: the probe failed for want of the victim's cookies, not for want of a session.
    expect((await page.request.get(`${base}${capture.path}/frame.jpg`)).status()).toBe(200);
    await pool().query(`DELETE FROM accounts WHERE owner_user_id = $1`, [alice.user.id]);
    await page.context().close();
  });
});
