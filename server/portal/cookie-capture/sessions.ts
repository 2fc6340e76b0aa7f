import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, type SandboxMode } from '../../../activities/builtins/chromium.js';
import { EgressPolicy, type HostScope, type Lookup } from '../../../activities/builtins/egress-policy.js';
import { type EgressProxy, startEgressProxy } from '../../../activities/builtins/egress-proxy.js';
import type { CallerOwner } from '../../../core/caller.js';
import { type AllowedHost, normalizeHost, parseIp } from '../../../core/network-policy.js';

/**
 * Capture sessions: a browser Switchboard runs for a human who signs in to a cookie service
 * live. One chromium per server process (the same launcher as the browser built-in: not root,
 * sandboxed, every connection through an egress proxy), launched on first use and closed after a
 * minute without sessions; one browser context per capture session (nothing shared between
 * humans) with its own egress proxy that reaches only the service's hosts, closed on Capture,
 * Cancel, or after COOKIE_CAPTURE_TIMEOUT_SEC (never outliving its connection attempt).
 */

export const VIEWPORT = { width: 1024, height: 768 } as const;
const IDLE_CLOSE_MS = 60_000;
const NAVIGATION_TIMEOUT_MS = 20_000;
/** A capture page's responses: larger than the built-in's (a human signs in to a full web app), still bounded. */
const MAX_RESPONSE_BYTES = 25 * 1024 * 1024;
const MAX_TUNNEL_BYTES = 250 * 1024 * 1024;

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

/**
 * Where a capture browser may go: the service's domain family (its cookie domain, subdomains and
 * parent domain) at public addresses, and the login URL's exact host and port at any address
 * when the operator set that URL (a staging or test site on a private or loopback address).
 * Every connection of the session's context (each redirect hop, pop-up, frame, subresource and
 * socket) goes through a proxy holding this policy, so a redirect on the service's host cannot
 * send the server's browser to a metadata address, Temporal UI or /metrics.
 */
export function captureEgressPolicy(
  input: { loginUrl: string; cookieDomain: string; loginUrlFromOperator: boolean },
  lookup?: Lookup,
): EgressPolicy {
  const login = new URL(input.loginUrl);
  const loginHost = login.hostname.replace(/^\[|\]$/g, '');
  // An address has no domain family: `0.0.1` is not "a parent domain" of 127.0.0.1.
  const ipService = parseIp(input.cookieDomain) !== undefined;
  const scope: HostScope = {
    includes: (host) =>
      ipService
        ? host === normalizeHost(input.cookieDomain) || host === normalizeHost(loginHost)
        : isServiceHost(host, input.cookieDomain, loginHost),
    description: `one of the hosts of ${input.cookieDomain}, the service being signed in to`,
  };
  const trusted: AllowedHost[] = input.loginUrlFromOperator
    ? [{ host: loginHost, port: Number(login.port || (login.protocol === 'https:' ? 443 : 80)) }]
    : [];
  return new EgressPolicy(trusted, lookup, scope);
}

/** Refuses everything: the launch-wide proxy, for any connection outside a session's own. */
const NOWHERE: HostScope = { includes: () => false, description: "a capture session's service" };

// ---- the process's one browser ----

interface CaptureBrowser {
  browser: Browser;
  /** Launch-wide proxy refusing everything: a context without its own proxy reaches nothing. */
  proxy: EgressProxy;
  sandboxed: boolean;
}

export interface CaptureBrowserOptions {
  chromiumPath?: string;
  runAs: { uid: number; gid: number };
  sandbox: SandboxMode;
}

let shared: Promise<CaptureBrowser> | undefined;
let liveContexts = 0;
let idleTimer: NodeJS.Timeout | undefined;

function sharedBrowser(options: CaptureBrowserOptions, logger: Logger): Promise<CaptureBrowser> {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = undefined;
  if (shared) return shared;
  const launching = (async () => {
    const proxy = await startEgressProxy(new EgressPolicy([], undefined, NOWHERE), { maxResponseBytes: 0, maxTunnelBytes: 0 }, logger);
    try {
      const launched = await launchChromium({ ...options, proxyUrl: proxy.url, logger: logger.child({ component: 'capture-browser' }) });
      launched.browser.on('disconnected', () => {
        if (shared === launching) shared = undefined;
        void proxy.close();
      });
      logger.info({ version: launched.browser.version(), sandboxed: launched.sandboxed }, 'capture browser started');
      return { browser: launched.browser, proxy, sandboxed: launched.sandboxed };
    } catch (err) {
      await proxy.close();
      throw err;
    }
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
  const running = await closing?.catch(() => undefined);
  await running?.browser.close().catch(() => {});
  await running?.proxy.close();
}

// ---- sessions ----

export type CaptureOwner = CallerOwner;

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
  /** This session's egress proxy: only the service's hosts. */
  readonly proxy: EgressProxy;
  closed: boolean;
  capturing: boolean;
  timer?: NodeJS.Timeout;
  pendingFrame?: Promise<Buffer>;
  /** The last frame and when it was taken: requests within the frame interval get it again. */
  lastFrame?: { at: number; image: Buffer };
  inputs: Promise<unknown>;
}

export interface OpenCapture {
  attemptId: string;
  integration: string;
  owner: CaptureOwner;
  loginUrl: string;
  cookieDomain: string;
  /** True when `<PREFIX>_LOGIN_URL` set the login URL: its exact host and port may then be private. */
  loginUrlFromOperator?: boolean;
  /** The connection attempt's expiry: the session never outlives it. */
  attemptExpiresAt: Date;
}

export interface CaptureLimits {
  /** COOKIE_CAPTURE_MAX_SESSIONS: all tenants together, per process. */
  sessions: number;
  /** COOKIE_CAPTURE_MAX_PER_TENANT. */
  perTenant: number;
  /** COOKIE_CAPTURE_MAX_PER_USER: a user's older sessions make way for a newer one up to this. */
  perUser: number;
  /** COOKIE_CAPTURE_FRAMES_PER_SEC. */
  framesPerSec: number;
}

export interface CaptureSessionsOptions extends CaptureBrowserOptions {
  timeoutMs: number;
  logger: Logger;
  limits: CaptureLimits;
  /** DNS, for tests. */
  lookup?: Lookup;
}

/** The capture options of this process's config. */
export function captureSessionsOptions(
  config: {
    CHROMIUM_PATH?: string;
    CHROMIUM_RUN_AS: { uid: number; gid: number };
    CHROMIUM_SANDBOX: SandboxMode;
    COOKIE_CAPTURE_TIMEOUT_SEC: number;
    COOKIE_CAPTURE_MAX_SESSIONS: number;
    COOKIE_CAPTURE_MAX_PER_TENANT: number;
    COOKIE_CAPTURE_MAX_PER_USER: number;
    COOKIE_CAPTURE_FRAMES_PER_SEC: number;
  },
  logger: Logger,
): CaptureSessionsOptions {
  return {
    chromiumPath: config.CHROMIUM_PATH,
    runAs: config.CHROMIUM_RUN_AS,
    sandbox: config.CHROMIUM_SANDBOX,
    timeoutMs: config.COOKIE_CAPTURE_TIMEOUT_SEC * 1000,
    logger,
    limits: {
      sessions: config.COOKIE_CAPTURE_MAX_SESSIONS,
      perTenant: config.COOKIE_CAPTURE_MAX_PER_TENANT,
      perUser: config.COOKIE_CAPTURE_MAX_PER_USER,
      framesPerSec: config.COOKIE_CAPTURE_FRAMES_PER_SEC,
    },
  };
}

/** A capture refused for a limit: the message says which, for the human (answered 429). */
export class CaptureLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CaptureLimitError';
  }
}

interface Opening {
  owner: CaptureOwner;
  done: Promise<CaptureSession>;
}

export class CaptureSessions {
  private readonly sessions = new Map<string, CaptureSession>();
  private readonly opening = new Map<string, Opening>();

  constructor(private readonly options: CaptureSessionsOptions) {}

  /**
   * The open session of this attempt and owner, or a new one at the service's login page. Sessions
   * are shared fairly: a user holds at most `perUser` (their older ones make way; more opening at
   * once are refused), a tenant at most `perTenant`, the process at most `sessions`.
   */
  open(input: OpenCapture): Promise<CaptureSession> {
    const existing = [...this.sessions.values()].find((s) => s.attemptId === input.attemptId && sameOwner(s.owner, input.owner));
    if (existing && !existing.closed) return Promise.resolve(existing);
    const running = this.opening.get(input.attemptId);
    if (running && sameOwner(running.owner, input.owner)) return running.done;
    if (running) return Promise.reject(new CaptureLimitError('This sign-in is already being opened.'));
    const { limits } = this.options;
    const openingBy = (match: (o: CaptureOwner) => boolean) => [...this.opening.values()].filter((o) => match(o.owner)).length;
    // Sessions still starting count too: a user opening many links at once holds no more than one at a time.
    const userOpening = openingBy((o) => sameOwner(o, input.owner));
    if (userOpening >= limits.perUser) {
      return Promise.reject(
        new CaptureLimitError(`You are already opening ${userOpening} sign-in browsers. Wait for them to load, then try this link again.`),
      );
    }
    // A human's older captures make way for the newest.
    const owned = [...this.sessions.values()].filter((s) => sameOwner(s.owner, input.owner));
    const superseded = owned.slice(0, Math.max(0, owned.length + userOpening - limits.perUser + 1));
    const left = [...this.sessions.values()].filter((s) => !superseded.includes(s));
    const tenantHolds =
      left.filter((s) => s.owner.tenantId === input.owner.tenantId).length + openingBy((o) => o.tenantId === input.owner.tenantId);
    if (tenantHolds >= limits.perTenant) {
      return Promise.reject(
        new CaptureLimitError(
          `Your organisation already has ${tenantHolds} sign-in browsers open, the most one organisation may hold (COOKIE_CAPTURE_MAX_PER_TENANT). Finish or cancel one, or try again in a few minutes.`,
        ),
      );
    }
    if (left.length + this.opening.size >= limits.sessions) {
      return Promise.reject(
        new CaptureLimitError(
          `All ${limits.sessions} sign-in browsers of this server are in use (COOKIE_CAPTURE_MAX_SESSIONS). Try again in a few minutes.`,
        ),
      );
    }
    for (const old of superseded) void this.close(old, 'superseded');
    const done = this.start(input).finally(() => this.opening.delete(input.attemptId));
    this.opening.set(input.attemptId, { owner: { ...input.owner }, done });
    return done;
  }

  /** The session, only for its owner: for anyone else it does not exist. */
  get(id: string, owner: CaptureOwner): CaptureSession | undefined {
    const session = this.sessions.get(id);
    return session && !session.closed && sameOwner(session.owner, owner) ? session : undefined;
  }

  /** Sessions open or opening for a tenant (tests, metrics). */
  heldBy(tenantId: string): number {
    const open = [...this.sessions.values()].filter((s) => s.owner.tenantId === tenantId).length;
    return open + [...this.opening.values()].filter((o) => o.owner.tenantId === tenantId).length;
  }

  private async start(input: OpenCapture): Promise<CaptureSession> {
    const log = this.options.logger.child({ attemptId: input.attemptId, integration: input.integration });
    liveContexts += 1;
    let context: BrowserContext | undefined;
    let proxy: EgressProxy | undefined;
    try {
      const { browser } = await sharedBrowser(this.options, this.options.logger);
      const policy = captureEgressPolicy(
        { loginUrl: input.loginUrl, cookieDomain: input.cookieDomain, loginUrlFromOperator: input.loginUrlFromOperator ?? false },
        this.options.lookup,
      );
      proxy = await startEgressProxy(policy, { maxResponseBytes: MAX_RESPONSE_BYTES, maxTunnelBytes: MAX_TUNNEL_BYTES }, log);
      context = await browser.newContext({
        // Every connection of this context (pop-ups and frames included) goes through its own proxy.
        proxy: { server: proxy.url },
        viewport: VIEWPORT,
        deviceScaleFactor: 1,
        acceptDownloads: false,
        serviceWorkers: 'block',
        locale: 'en-US',
        // Headless chromium announces itself; services that refuse it would refuse the human.
        userAgent: `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${browser.version()} Safari/537.36`,
      });
      const page = await context.newPage();
      // Pop-ups would be invisible to the human; they are closed (their requests meet the same policy).
      context.on('page', (popup) => {
        if (popup !== page) void popup.close().catch(() => {});
      });
      // The human sees only the service. Every request of every frame and pop-up is checked here,
      // for a clear refusal; redirect hops, which do not pass here, the proxy refuses itself.
      await context.route('**/*', async (route) => {
        const request = route.request();
        const verdict = await policy.checkUrl(request.url());
        if (verdict.ok) return route.continue().catch(() => {});
        log.info({ url: request.url().slice(0, 200), reason: verdict.reason }, 'capture browser: request off the service blocked');
        return route.abort('blockedbyclient').catch(() => {});
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
        proxy,
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
      await proxy?.close();
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
    await session.proxy.close();
    releaseContext();
    this.options.logger.info({ attemptId: session.attemptId, reason }, 'capture session closed');
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => this.close(s, 'shutdown')));
  }

  /**
   * A JPEG of what the page shows now, at most COOKIE_CAPTURE_FRAMES_PER_SEC screenshots a second:
   * a request within the interval gets the last frame again, and concurrent callers share one.
   */
  frame(session: CaptureSession): Promise<Buffer> {
    const interval = 1000 / this.options.limits.framesPerSec;
    if (session.lastFrame && Date.now() - session.lastFrame.at < interval) return Promise.resolve(session.lastFrame.image);
    session.pendingFrame ??= session.page
      .screenshot({ type: 'jpeg', quality: 70, timeout: 10_000, caret: 'initial' })
      .then((image) => {
        session.lastFrame = { at: Date.now(), image };
        return image;
      })
      .finally(() => {
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
