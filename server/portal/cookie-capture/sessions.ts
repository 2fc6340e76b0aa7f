import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { findChromium, QUIET_CHROMIUM_ARGS } from '../../../activities/builtins/chromium.js';

/**
 * Capture sessions: a browser Switchboard runs for a human who signs in to a cookie service
 * live. One chromium per server process, launched on first use and closed after a minute without
 * sessions; one browser context per capture session (nothing shared between humans), closed on
 * Capture, Cancel, or after COOKIE_CAPTURE_TIMEOUT_SEC (never outliving its connection attempt).
 */

export const VIEWPORT = { width: 1024, height: 768 } as const;
const IDLE_CLOSE_MS = 60_000;
/** Each session is a browser context (tens of MB): a bound per process, and per human. */
const MAX_SESSIONS = 20;
const MAX_SESSIONS_PER_OWNER = 2;
const NAVIGATION_TIMEOUT_MS = 20_000;

/** Keys forwarded by name; printable characters go through `type`. */
export const FORWARDED_KEYS = new Set([
  'Enter',
  'Tab',
  'Shift+Tab',
  'Backspace',
  'Delete',
  'Escape',
  'ArrowUp',
  'ArrowDown',
  'ArrowLeft',
  'ArrowRight',
  'Home',
  'End',
  'PageUp',
  'PageDown',
  'Control+a',
  'Meta+a',
]);

const bare = (domain: string) => domain.replace(/^\./, '').toLowerCase();

/**
 * Whether a cookie goes to the service's host (RFC 6265 domain-match): a host-only cookie
 * (no leading dot) of exactly that host, or a domain cookie of it or a parent domain.
 */
export function cookieMatchesDomain(cookieDomain: string, serviceHost: string): boolean {
  const host = serviceHost.toLowerCase();
  const domain = bare(cookieDomain);
  if (!cookieDomain.startsWith('.')) return domain === host;
  return domain === host || (host.endsWith(`.${domain}`) && domain.includes('.'));
}

/** Hosts the remote browser may navigate its page to: the service's domain family and the login host. */
export function isServiceHost(host: string, serviceHost: string, loginHost: string): boolean {
  const h = host.toLowerCase();
  const d = serviceHost.toLowerCase();
  return h === loginHost.toLowerCase() || h === d || h.endsWith(`.${d}`) || (d.endsWith(`.${h}`) && h.includes('.'));
}

// ---- the process's one browser ----

let shared: Promise<Browser> | undefined;
let liveContexts = 0;
let idleTimer: NodeJS.Timeout | undefined;

function sharedBrowser(chromiumPath: string | undefined, logger: Logger): Promise<Browser> {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = undefined;
  if (shared) return shared;
  const launching = (async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: findChromium(chromiumPath),
      headless: true,
      args: QUIET_CHROMIUM_ARGS,
    });
    browser.on('disconnected', () => {
      if (shared === launching) shared = undefined;
    });
    logger.info({ version: browser.version() }, 'capture browser started');
    return browser;
  })();
  shared = launching;
  launching.catch(() => {
    if (shared === launching) shared = undefined;
  });
  return launching;
}

function releaseContext(): void {
  liveContexts -= 1;
  if (liveContexts > 0) return;
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    if (liveContexts === 0) void closeCaptureBrowser();
  }, IDLE_CLOSE_MS);
  idleTimer.unref();
}

/** Closes the process's capture browser (shutdown, tests); the next capture launches a new one. */
export async function closeCaptureBrowser(): Promise<void> {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = undefined;
  const closing = shared;
  shared = undefined;
  const browser = await closing?.catch(() => undefined);
  await browser?.close().catch(() => {});
}

// ---- sessions ----

export interface CaptureOwner {
  tenantId: string;
  userId: string;
}

export interface CaptureSession {
  readonly id: string;
  readonly attemptId: string;
  readonly integration: string;
  readonly owner: CaptureOwner;
  /** The host whose cookies Capture keeps. */
  readonly cookieDomain: string;
  readonly loginUrl: string;
  readonly expiresAt: number;
  readonly context: BrowserContext;
  readonly page: Page;
  closed: boolean;
  capturing: boolean;
  timer?: NodeJS.Timeout;
  pendingFrame?: Promise<Buffer>;
  inputs: Promise<unknown>;
}

export interface OpenCapture {
  attemptId: string;
  integration: string;
  owner: CaptureOwner;
  loginUrl: string;
  cookieDomain: string;
  /** The connection attempt's expiry: the session never outlives it. */
  attemptExpiresAt: Date;
}

export class CaptureSessions {
  private readonly sessions = new Map<string, CaptureSession>();
  private readonly opening = new Map<string, Promise<CaptureSession>>();

  constructor(private readonly options: { chromiumPath?: string; timeoutMs: number; logger: Logger }) {}

  /** The open session of this attempt and owner, or a new one at the service's login page. */
  open(input: OpenCapture): Promise<CaptureSession> {
    const existing = [...this.sessions.values()].find((s) => s.attemptId === input.attemptId && sameOwner(s.owner, input.owner));
    if (existing && !existing.closed) return Promise.resolve(existing);
    const running = this.opening.get(input.attemptId);
    if (running) return running;
    // A human's older captures make way for the newest; the process as a whole refuses past its bound.
    const owned = [...this.sessions.values()].filter((s) => sameOwner(s.owner, input.owner));
    for (const old of owned.slice(0, Math.max(0, owned.length - MAX_SESSIONS_PER_OWNER + 1))) void this.close(old, 'superseded');
    if (this.sessions.size + this.opening.size >= MAX_SESSIONS) {
      return Promise.reject(new Error(`already ${MAX_SESSIONS} capture sessions open`));
    }
    const opening = this.start(input).finally(() => this.opening.delete(input.attemptId));
    this.opening.set(input.attemptId, opening);
    return opening;
  }

  /** The session, only for its owner: for anyone else it does not exist. */
  get(id: string, owner: CaptureOwner): CaptureSession | undefined {
    const session = this.sessions.get(id);
    return session && !session.closed && sameOwner(session.owner, owner) ? session : undefined;
  }

  private async start(input: OpenCapture): Promise<CaptureSession> {
    const log = this.options.logger.child({ attemptId: input.attemptId, integration: input.integration });
    liveContexts += 1;
    let context: BrowserContext | undefined;
    try {
      const browser = await sharedBrowser(this.options.chromiumPath, this.options.logger);
      context = await browser.newContext({
        viewport: VIEWPORT,
        deviceScaleFactor: 1,
        acceptDownloads: false,
        serviceWorkers: 'block',
        locale: 'en-US',
        // Headless chromium announces itself; services that refuse it would refuse the human.
        userAgent: `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${browser.version()} Safari/537.36`,
      });
      const page = await context.newPage();
      const loginHost = new URL(input.loginUrl).hostname;
      // The human sees only the service: a link elsewhere does not navigate the page.
      await context.route('**/*', (route) => {
        const request = route.request();
        let mainFrame = false;
        try {
          mainFrame = request.isNavigationRequest() && request.frame() === page.mainFrame();
        } catch {}
        if (mainFrame && !isServiceHost(new URL(request.url()).hostname, input.cookieDomain, loginHost)) {
          log.info({ host: new URL(request.url()).hostname }, 'capture browser: navigation off the service blocked');
          return route.abort('blockedbyclient');
        }
        return route.continue();
      });
      // Pop-ups would be invisible to the human; they are closed.
      context.on('page', (popup) => {
        if (popup !== page) void popup.close().catch(() => {});
      });
      const session: CaptureSession = {
        id: randomBytes(18).toString('base64url'),
        attemptId: input.attemptId,
        integration: input.integration,
        owner: { ...input.owner },
        cookieDomain: input.cookieDomain,
        loginUrl: input.loginUrl,
        expiresAt: Math.min(Date.now() + this.options.timeoutMs, input.attemptExpiresAt.getTime()),
        context,
        page,
        closed: false,
        capturing: false,
        inputs: Promise.resolve(),
      };
      this.sessions.set(session.id, session);
      session.timer = setTimeout(() => void this.close(session, 'timeout'), Math.max(0, session.expiresAt - Date.now()));
      session.timer.unref();
      page.on('close', () => void this.close(session, 'page closed'));
      await page.goto(input.loginUrl, { waitUntil: 'domcontentloaded', timeout: NAVIGATION_TIMEOUT_MS }).catch((err: Error) => {
        // The human sees whatever loaded (or the error page) and can still act.
        log.warn({ err: err.message }, 'capture browser: the login page did not load');
      });
      log.info({ captureSessionId: session.id }, 'capture session opened');
      return session;
    } catch (err) {
      await context?.close().catch(() => {});
      releaseContext();
      throw err;
    }
  }

  async close(session: CaptureSession, reason: string): Promise<void> {
    if (session.closed) return;
    session.closed = true;
    if (session.timer) clearTimeout(session.timer);
    this.sessions.delete(session.id);
    await session.context.close().catch(() => {});
    releaseContext();
    this.options.logger.info({ attemptId: session.attemptId, reason }, 'capture session closed');
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => this.close(s, 'shutdown')));
  }

  /** A JPEG of what the page shows now; concurrent callers share one screenshot. */
  frame(session: CaptureSession): Promise<Buffer> {
    session.pendingFrame ??= session.page.screenshot({ type: 'jpeg', quality: 70, timeout: 10_000, caret: 'initial' }).finally(() => {
      session.pendingFrame = undefined;
    });
    return session.pendingFrame;
  }

  /** Runs one forwarded input after the ones before it, in the order they came. */
  input(session: CaptureSession, action: (page: Page) => Promise<unknown>): Promise<void> {
    const run = session.inputs.then(() => action(session.page));
    session.inputs = run.catch(() => {});
    return run.then(() => {});
  }

  async state(session: CaptureSession): Promise<{ url: string; title: string; expiresAt: string }> {
    const title = await session.page.title().catch(() => '');
    return { url: session.page.url(), title, expiresAt: new Date(session.expiresAt).toISOString() };
  }

  /** The cookies the service's host would receive, and nothing else the browser holds. */
  async cookies(session: CaptureSession): Promise<{ name: string; value: string; domain: string; path: string }[]> {
    const all = await session.context.cookies();
    return all
      .filter((c) => cookieMatchesDomain(c.domain, session.cookieDomain))
      .map((c) => ({ name: c.name, value: c.value, domain: c.domain, path: c.path }));
  }
}

const sameOwner = (a: CaptureOwner, b: CaptureOwner) => a.tenantId === b.tenantId && a.userId === b.userId;
