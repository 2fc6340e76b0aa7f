import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { closeCaptureBrowser } from '../../surfaces/portal/cookie-capture/capture-sessions.js';
import { captureSessions } from '../../surfaces/portal/cookie-capture/router.js';
import { signedInPage } from '../support/consent.js';
import { startWorld, type TestUser } from '../support/harness.js';

/**
 * Cookie capture's browser reaches only the service it signs in to (finding 4), and its sessions
 * and frames are shared fairly (finding 12). The service is the Hacker News look-alike on
 * 127.0.0.1:<port>; "elsewhere" is another local HTTP server on another port, standing in for the
 * cloud metadata address, Temporal UI or /metrics: it serves a secret and records every request.
 */

const SECRET = 'SECRET-FROM-THE-INTERNAL-NETWORK-7f3a';

/** Where the attack page puts its controls, in the 1024×768 remote viewport. */
const REDIRECT_LINK = { x: 150, y: 50 };
const POPUP_BUTTON = { x: 150, y: 200 };

const internalRequests: string[] = [];
const world = await startWorld({
  hackernews: {
    loginPath: '/attack',
    routes: (app) => {
      // An open redirect on the service's own host.
      app.get('/go', (req, res) => res.redirect(302, String(req.query.to)));
      app.get('/alias-probe', (_req, res) => res.send(SECRET));
      // The service's sign-in page, as a hostile service would write it.
      app.get('/attack', (_req, res) => {
        res.send(`<html><body style="margin:0">
<a id="redirect" href="/go?to=${encodeURIComponent(`${internalUrl}/latest/meta-data/`)}" style="position:absolute;left:0;top:0;width:300px;height:100px;display:block;background:#fc0">redirect</a>
<button id="popup" onclick="window.open('${internalUrl}/popup')" style="position:absolute;left:0;top:150px;width:300px;height:100px">popup</button>
<iframe src="${internalUrl}/frame" style="position:absolute;left:350px;top:0;width:600px;height:300px"></iframe>
<iframe src="http://localhost:${site.port}/alias-probe" style="position:absolute;left:350px;top:320px;width:600px;height:200px"></iframe>
<p style="position:absolute;top:600px">Sign in</p></body></html>`);
      });
    },
  },
  env: {
    CONNECTION_TTL_SEC: '600',
    COOKIE_CAPTURE_MAX_SESSIONS: '4',
    COOKIE_CAPTURE_MAX_PER_TENANT: '2',
    COOKIE_CAPTURE_MAX_PER_USER: '2',
    COOKIE_CAPTURE_FRAMES_PER_SEC: '2',
  },
});
world.onStop(closeCaptureBrowser);
const { site, stack } = world;
const { url: internalUrl } = await world.serve((req, res) => {
  internalRequests.push(`${req.method} ${req.url}`);
  res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1>${SECRET}</h1>`);
});
const alice = await world.user({ email: 'alice-egress@example.com' });
const bob = await world.user({ email: 'bob-egress@example.com' });
const browser = await world.browser();

const sessions = () => captureSessions(stack.services);

/** Opens a connect link in the human's browser and waits for the live view's first frame. */
async function openCapture(user: TestUser): Promise<{ page: Page; sid: string }> {
  const { body: started } = await user.call('connect', { integration: 'hackernews' });
  const page = await signedInPage(browser, user);
  await page.goto(started.url);
  expect(new URL(page.url()).pathname).toMatch(/^\/portal\/capture\/[\w-]{24}$/);
  await page.waitForFunction(() => {
    const img = document.getElementById('live') as HTMLImageElement;
    return img.complete && img.naturalWidth === 1024;
  });
  return { page, sid: new URL(page.url()).pathname.split('/').pop()! };
}

async function clickRemote(page: Page, at: { x: number; y: number }) {
  const size = await page.locator('#live').evaluate((img: HTMLImageElement) => ({ w: img.clientWidth, h: img.clientHeight }));
  await page.locator('#live').click({ position: { x: (at.x * size.w) / 1024, y: (at.y * size.h) / 768 } });
}

/** Everything the remote browser shows now: every page of the session's context, every frame. */
async function remoteText(user: TestUser, sid: string): Promise<string> {
  const session = sessions().get(sid, { tenantId: user.user.tenantId, userId: user.user.id });
  if (!session) return '';
  const texts: string[] = [];
  for (const page of session.context.pages()) {
    for (const frame of page.frames()) texts.push(await frame.content().catch(() => ''));
  }
  return texts.join('\n');
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('cookie capture egress (finding 4)', () => {
  it('finding 4: a redirect, a pop-up and frames on the service never reach another host; the live view never shows it', async () => {
    const { page, sid } = await openCapture(alice);
    // The service itself loads (its host and port are the operator's login URL).
    await expect.poll(() => site.requests.includes('GET /attack')).toBe(true);
    await settle(1500);
    // Frames: one at another port, one at the service's port under another name (localhost).
    expect(internalRequests).toEqual([]);
    expect(site.requests).not.toContain('GET /alias-probe');

    // A pop-up's first request.
    await clickRemote(page, POPUP_BUTTON);
    await settle(1500);
    expect(internalRequests).toEqual([]);

    // A redirect hop from the service's host to the internal address.
    await clickRemote(page, REDIRECT_LINK);
    await expect.poll(() => site.requests.includes('GET /go'), { timeout: 10_000 }).toBe(true);
    await settle(1500);
    expect(internalRequests).toEqual([]);
    const shown = await remoteText(alice, sid);
    expect(shown).not.toContain(SECRET);
    // What the human sees is the refusal, not the page.
    expect((await page.request.get(`${stack.baseUrl}/portal/capture/${sid}/state`)).status()).toBe(200);
    expect(stack.logs.text()).toContain('request off the service blocked');
    await page.context().close();
    await sessions().closeAll();
  }, 180_000);
});

describe('capture sessions and frames are shared fairly (finding 12)', () => {
  it("finding 12: one user opening many capture links at once holds at most their share; another tenant's user still gets a browser", async () => {
    const links = await Promise.all(
      Array.from({ length: 8 }, () => alice.call('connect', { integration: 'hackernews' }).then((r) => r.body.url as string)),
    );
    const page = await signedInPage(browser, alice);
    const answers = await Promise.all(links.map((url) => page.request.get(url, { maxRedirects: 0 })));
    const opened = answers.filter((a) => a.status() === 303);
    const refused = answers.filter((a) => a.status() === 429);
    expect(opened.length).toBeGreaterThanOrEqual(1);
    expect(opened.length).toBeLessThanOrEqual(2);
    expect(opened.length + refused.length).toBe(links.length);
    expect(await refused[0].text()).toContain('sign-in browsers');
    expect(sessions().heldBy(alice.user.tenantId)).toBeLessThanOrEqual(2);

    // Bob, another tenant, is not starved.
    const { page: bobPage } = await openCapture(bob);
    expect(await bobPage.locator('h1').textContent()).toBe('Sign in to Hacker News');
    await bobPage.context().close();
    await page.context().close();
    await sessions().closeAll();
  }, 180_000);

  it('finding 12: frame requests beyond COOKIE_CAPTURE_FRAMES_PER_SEC get the cached frame, not a new screenshot', async () => {
    const { page, sid } = await openCapture(bob);
    const session = sessions().get(sid, { tenantId: bob.user.tenantId, userId: bob.user.id })!;
    // Stop the page's own polling, then count the screenshots a burst of requests causes.
    await page.goto('about:blank');
    await settle(1000);
    let screenshots = 0;
    const take = session.page.screenshot.bind(session.page);
    session.page.screenshot = ((...args: Parameters<Page['screenshot']>) => {
      screenshots++;
      return take(...args);
    }) as Page['screenshot'];
    const started = Date.now();
    const frames = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        settle(i * 40).then(() => page.request.get(`${stack.baseUrl}/portal/capture/${sid}/frame.jpg?n=${i}`)),
      ),
    );
    const elapsed = Date.now() - started;
    for (const frame of frames) {
      expect(frame.status()).toBe(200);
      expect(frame.headers()['content-type']).toBe('image/jpeg');
    }
    // 2 frames a second: a burst of ~0.5 s takes at most one new screenshot per started half second, plus one.
    expect(screenshots).toBeLessThanOrEqual(Math.ceil(elapsed / 500) + 1);
    expect(screenshots).toBeLessThan(frames.length / 2);
    await page.context().close();
    await sessions().closeAll();
  }, 180_000);
});
