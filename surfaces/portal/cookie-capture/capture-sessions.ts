import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { BrowserContext, Page } from 'playwright-core';
import type { CallerOwner } from '../../../core/caller.js';
import { RecentResult } from '../../../core/recent-result.js';
import { type ChromiumConfig, type ChromiumSettings, chromiumSettings } from '../../../platform/browser/chromium.js';
import { openServiceOnlyContext, type ServiceOnlyContext, serviceOnlyChromium } from '../../../platform/browser/service-only-browser.js';
import type { SharedChromium } from '../../../platform/browser/shared-chromium.js';
import type { Lookup } from '../../../platform/egress/egress-policy.js';
import type { EgressProxy } from '../../../platform/egress/egress-proxy.js';

/**
 * Capture sessions: a browser Switchboard runs for a human who signs in to a cookie service
 * live. One chromium per server process (platform/browser/service-only-browser.ts: the same launcher as
 * the browser built-in, not root, sandboxed, every connection through an egress proxy), launched
 * on first use and closed after a minute without sessions; one browser context per capture
 * session (nothing shared between humans) with its own egress proxy that reaches only the
 * service's hosts, closed on Capture, Cancel, or after COOKIE_CAPTURE_TIMEOUT_SEC (never
 * outliving its connection attempt).
 */

export const VIEWPORT = { width: 1024, height: 768 } as const;
const IDLE_CLOSE_MS = 60_000;
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

// ---- the process's one browser ----

let shared: SharedChromium | undefined;
let liveContexts = 0;
let idleTimer: NodeJS.Timeout | undefined;

/** The process's capture chromium (its settings are the process's config, the same for every session). */
function captureChromium(settings: ChromiumSettings, logger: Logger): SharedChromium {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = undefined;
  shared ??= serviceOnlyChromium(settings, logger);
  return shared;
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
  await closing?.close();
}

// ---- sessions ----

type CaptureOwner = CallerOwner;

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
  /** What the page shows, at most COOKIE_CAPTURE_FRAMES_PER_SEC screenshots a second (see `frame`). */
  readonly frames: RecentResult<Buffer>;
  inputs: Promise<unknown>;
}

interface OpenCapture {
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

interface CaptureLimits {
  /** COOKIE_CAPTURE_MAX_SESSIONS: all tenants together, per process. */
  sessions: number;
  /** COOKIE_CAPTURE_MAX_PER_TENANT. */
  perTenant: number;
  /** COOKIE_CAPTURE_MAX_PER_USER: a user's older sessions make way for a newer one up to this. */
  perUser: number;
  /** COOKIE_CAPTURE_FRAMES_PER_SEC. */
  framesPerSec: number;
}

interface CaptureSessionsOptions {
  chromium: ChromiumSettings;
  timeoutMs: number;
  logger: Logger;
  limits: CaptureLimits;
  /** DNS, for tests. */
  lookup?: Lookup;
}

/** The capture options of this process's config. */
export function captureSessionsOptions(
  config: ChromiumConfig & {
    COOKIE_CAPTURE_TIMEOUT_SEC: number;
    COOKIE_CAPTURE_MAX_SESSIONS: number;
    COOKIE_CAPTURE_MAX_PER_TENANT: number;
    COOKIE_CAPTURE_MAX_PER_USER: number;
    COOKIE_CAPTURE_FRAMES_PER_SEC: number;
  },
  logger: Logger,
): CaptureSessionsOptions {
  return {
    chromium: chromiumSettings(config),
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
    let opened: ServiceOnlyContext | undefined;
    try {
      const { browser } = await captureChromium(this.options.chromium, this.options.logger).get();
      opened = await openServiceOnlyContext(
        browser,
        { loginUrl: input.loginUrl, cookieDomain: input.cookieDomain, loginUrlFromOperator: input.loginUrlFromOperator ?? false },
        { viewport: VIEWPORT, lookup: this.options.lookup, logger: log },
      );
      const { context, page, proxy } = opened;
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
        frames: new RecentResult(1000 / this.options.limits.framesPerSec, () =>
          page.screenshot({ type: 'jpeg', quality: 70, timeout: 10_000, caret: 'initial' }),
        ),
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
      await opened?.context.close().catch(() => {});
      await opened?.proxy.close();
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
    return session.frames.current();
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
