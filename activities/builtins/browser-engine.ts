import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Browser, BrowserContext, CDPSession, Page, Request, Response } from 'playwright-core';
import type { AllowedHost } from '../../core/network-policy.js';
import type { BrowserCaller, BrowserEngine, Extraction, OpenedPage, Screenshot } from '../../providers/browser/engine.js';
import { launchChromium, type SandboxMode } from './chromium.js';
import { EgressPolicy, type Lookup } from './egress-policy.js';
import { authorityOf, type EgressProxy, type OversizeEvent, REFUSED_HEADER, startEgressProxy } from './egress-proxy.js';
import { FairSlots } from './fair-slots.js';

export interface ChromiumEngineOptions {
  allowedHosts: readonly AllowedHost[];
  /** The time limit of one page, from navigation to answer (BROWSER_PAGE_TIMEOUT_MS). */
  pageTimeoutMs: number;
  /** The largest response a page may receive (BROWSER_MAX_PAGE_BYTES). */
  maxPageBytes: number;
  /** Results above this are cut by the engine (CONNECTIONS_TOOL_RESULT_MAX_BYTES): screenshots fit under it. */
  maxResultBytes: number;
  /** CHROMIUM_PATH; default /usr/bin/chromium (or chromium-browser). */
  chromiumPath?: string;
  /** CHROMIUM_RUN_AS and CHROMIUM_SANDBOX (see chromium.ts). */
  runAs: { uid: number; gid: number };
  sandbox: SandboxMode;
  logger: Logger;
  /** Pages open at once in this process (BROWSER_CONCURRENCY); more calls wait their turn, tenants fairly. */
  concurrency?: number;
  /** DNS, for tests. */
  lookup?: Lookup;
}

export const VIEWPORT = { width: 1280, height: 800 } as const;
/** A full-page screenshot covers at most this many CSS pixels of height. */
export const FULL_PAGE_MAX_HEIGHT = 6000;
/** Widths and JPEG qualities tried in turn until the image fits the result cap. */
const SCREENSHOT_LADDER: readonly [width: number, quality: number][] = [
  [800, 50],
  [800, 35],
  [640, 35],
  [512, 30],
  [400, 30],
  [320, 25],
  [240, 20],
];
const SETTLE_MAX_MS = 3000;
/** An HTTPS connection (all its responses together) may carry this many times BROWSER_MAX_PAGE_BYTES. */
const TUNNEL_FACTOR = 4;
/** The network counts as quiet after this long without a request starting or ending. */
const QUIET_MS = 250;
const TEXT_PER_ITEM = 2000;

/** A refusal of the network policy, in words the agent can act on. */
export class BrowserRefusal extends Error {
  constructor(url: string, reason: string) {
    super(
      `Refused to open ${url}: ${reason}. The browser opens public http(s) addresses only; an operator can allow hosts with BROWSER_ALLOWED_HOSTS.`,
    );
    this.name = 'BrowserRefusal';
  }
}

/** Width and height of a JPEG, from its SOF marker. */
export function jpegSize(data: Buffer): { width: number; height: number } | undefined {
  let i = 2;
  while (i + 9 < data.length) {
    if (data[i] !== 0xff) return undefined;
    const marker = data[i + 1];
    const length = data.readUInt16BE(i + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: data.readUInt16BE(i + 5), width: data.readUInt16BE(i + 7) };
    }
    i += 2 + length;
  }
  return undefined;
}

/** The first line of a Playwright error, without the method name and call log. */
const briefly = (err: unknown) =>
  String((err as Error)?.message ?? err)
    .split('\n')[0]
    .replace(/^[a-zA-Z.]+: /, '');

/** What one call works with: its page, a CDP session, and `guard`, which races its failure. */
interface PageSession {
  page: Page;
  cdp: CDPSession;
  guard<T>(p: Promise<T>): Promise<T>;
  /** Waits for anything still pending (redirect checks) and throws the call's failure, if any. */
  settle(): Promise<void>;
  deadline: number;
  blockedRequests(): number;
}

/**
 * One chromium per worker process, launched on first use and reused; each call gets a fresh
 * context (no cookies or storage shared between calls), closed after. Every connection goes
 * through the egress proxy (the network policy at connect time); `page.route` also checks each
 * request so a refused page fails with a clear message and refused subresources never leave.
 */
export class ChromiumBrowserEngine implements BrowserEngine {
  private runtime?: Promise<{ browser: Browser; proxy: EgressProxy }>;
  /** A blank page made ahead of the next call (see takeBlankPage). */
  private spare?: Promise<{ context: BrowserContext; page: Page }>;
  private closed = false;
  private readonly policy: EgressPolicy;
  private readonly slots: FairSlots;

  constructor(private readonly options: ChromiumEngineOptions) {
    this.policy = new EgressPolicy(options.allowedHosts, options.lookup);
    this.slots = new FairSlots(options.concurrency ?? 4);
  }

  async openPage(
    input: { url: string; maxChars: number; maxLinks: number },
    signal: AbortSignal,
    caller: BrowserCaller,
  ): Promise<OpenedPage> {
    return this.withPage(input.url, signal, caller, async ({ page, guard, settle, blockedRequests }, response) => {
      const found = await guard(
        page.evaluate(
          ({ maxChars, maxLinks }) => {
            // Rendered text: what a reader sees, without scripts, styles or hidden elements.
            // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is the point
            const text = (document.body?.innerText ?? document.documentElement?.textContent ?? '')
              .replace(/[ \t]+\n/g, '\n')
              .replace(/\n{3,}/g, '\n\n')
              .trim();
            let cut = text.slice(0, maxChars);
            // Never end on half a surrogate pair.
            if (cut.length && /[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
            const seen = new Set<string>();
            const links: { text: string; href: string }[] = [];
            for (const a of Array.from(document.querySelectorAll('a[href]'))) {
              const href = (a as HTMLAnchorElement).href;
              if (!/^https?:/i.test(href) || seen.has(href)) continue;
              seen.add(href);
              if (links.length < maxLinks) {
                // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is the point
                const label = ((a as HTMLElement).innerText || a.getAttribute('aria-label') || a.getAttribute('title') || '')
                  .replace(/\s+/g, ' ')
                  .trim();
                links.push({ text: label.slice(0, 200), href });
              }
            }
            return { title: document.title, text: cut, textLength: text.length, links, linkCount: seen.size };
          },
          { maxChars: input.maxChars, maxLinks: input.maxLinks },
        ),
      );
      await settle();
      return {
        url: page.url(),
        status: response?.status() ?? null,
        title: found.title,
        text: found.text,
        textLength: found.textLength,
        truncated: found.textLength > found.text.length,
        links: found.links,
        linkCount: found.linkCount,
        blockedRequests: blockedRequests(),
      };
    });
  }

  async extract(
    input: { url: string; selector: string; attribute?: string; limit: number },
    signal: AbortSignal,
    caller: BrowserCaller,
  ): Promise<Extraction> {
    return this.withPage(input.url, signal, caller, async ({ page, guard, settle, deadline }) => {
      // Content that scripts add: wait a little for the first match.
      const wait = Math.min(SETTLE_MAX_MS, deadline - Date.now() - 500);
      if (wait > 0) {
        await guard(
          page
            .waitForFunction(
              (selector) => {
                try {
                  return document.querySelector(selector) !== null;
                } catch {
                  return true;
                }
              },
              input.selector,
              { timeout: wait, polling: 200 },
            )
            .catch(() => undefined),
        );
      }
      const found = await guard(
        page.evaluate(
          ({ selector, attribute, limit, perItem }) => {
            let nodes: Element[];
            try {
              nodes = Array.from(document.querySelectorAll(selector));
            } catch {
              return { invalid: true as const };
            }
            const urlAttributes = new Set(['href', 'src', 'action', 'poster', 'cite']);
            const items = nodes.slice(0, limit).map((el) => {
              // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is the point
              const text = ((el as HTMLElement).innerText ?? el.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, perItem);
              if (!attribute) return { text };
              let value = el.getAttribute(attribute);
              if (value !== null && urlAttributes.has(attribute.toLowerCase())) {
                try {
                  value = new URL(value, document.baseURI).href;
                } catch {
                  // keep the raw value
                }
              }
              return { text, value: value === null ? null : value.slice(0, perItem) };
            });
            return { invalid: false as const, count: nodes.length, items };
          },
          { selector: input.selector, attribute: input.attribute, limit: input.limit, perItem: TEXT_PER_ITEM },
        ),
      );
      await settle();
      if (found.invalid) throw new Error(`"${input.selector}" is not a valid CSS selector.`);
      return { url: page.url(), selector: input.selector, count: found.count, items: found.items };
    });
  }

  async screenshot(input: { url: string; fullPage: boolean }, signal: AbortSignal, caller: BrowserCaller): Promise<Screenshot> {
    return this.withPage(input.url, signal, caller, async ({ page, cdp, guard, settle }) => {
      const cssHeight = input.fullPage
        ? Math.min(
            FULL_PAGE_MAX_HEIGHT,
            Math.max(
              VIEWPORT.height,
              await guard(page.evaluate(() => Math.max(document.documentElement?.scrollHeight ?? 0, document.body?.scrollHeight ?? 0))),
            ),
          )
        : VIEWPORT.height;
      await settle();
      const url = page.url();
      const envelope = {
        url,
        mimeType: 'image/jpeg' as const,
        width: 99999,
        height: 99999,
        quality: 100,
        fullPage: input.fullPage,
        data: '',
      };
      const budget = this.options.maxResultBytes - Buffer.byteLength(JSON.stringify(envelope)) - 16;
      for (const [width, quality] of SCREENSHOT_LADDER) {
        const shot = await guard(
          cdp.send('Page.captureScreenshot', {
            format: 'jpeg',
            quality,
            clip: { x: 0, y: 0, width: VIEWPORT.width, height: cssHeight, scale: width / VIEWPORT.width },
            captureBeyondViewport: input.fullPage,
          }),
        );
        if (shot.data.length > budget) continue;
        const size = jpegSize(Buffer.from(shot.data, 'base64')) ?? {
          width,
          height: Math.round((cssHeight * width) / VIEWPORT.width),
        };
        return { url, mimeType: 'image/jpeg', ...size, quality, fullPage: input.fullPage, data: shot.data };
      }
      throw new Error(
        `The screenshot does not fit in ${this.options.maxResultBytes} bytes (CONNECTIONS_TOOL_RESULT_MAX_BYTES) even at ${SCREENSHOT_LADDER.at(-1)![0]} px wide${input.fullPage ? '; try without fullPage' : ''}.`,
      );
    });
  }

  /** Stops chromium and the proxy (worker shutdown). Later calls fail. */
  async close(): Promise<void> {
    this.closed = true;
    const spare = await this.spare?.catch(() => undefined);
    this.spare = undefined;
    await spare?.context.close().catch(() => {});
    const runtime = await this.runtime?.catch(() => undefined);
    this.runtime = undefined;
    await runtime?.browser.close().catch(() => {});
    await runtime?.proxy.close();
  }

  private async blankPage(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: VIEWPORT, serviceWorkers: 'block', acceptDownloads: false, locale: 'en-US' });
    try {
      return { context, page: await context.newPage() };
    } catch (err) {
      await context.close().catch(() => {});
      throw err;
    }
  }

  /**
   * A never-used context with a blank page. Opening a page starts a renderer process (seconds
   * on a slow sandbox), so one is made ahead for the next call while this one runs.
   */
  private async takeBlankPage(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
    // Taken before any await: concurrent calls never share a spare.
    const spare = this.spare;
    this.spare = this.closed ? undefined : this.blankPage(browser);
    this.spare?.catch(() => {});
    const ready = await spare?.catch(() => undefined);
    if (ready && ready.context.browser() === browser && browser.isConnected()) return ready;
    if (ready) await ready.context.close().catch(() => {});
    return this.blankPage(browser);
  }

  private acquireRuntime(): Promise<{ browser: Browser; proxy: EgressProxy }> {
    if (this.closed) return Promise.reject(new Error('The browser is shut down (the worker is stopping).'));
    if (!this.runtime) {
      const launching = this.launch();
      this.runtime = launching;
      launching.then(
        ({ browser, proxy }) =>
          browser.once('disconnected', () => {
            if (this.runtime === launching) this.runtime = undefined;
            void proxy.close();
          }),
        () => {
          if (this.runtime === launching) this.runtime = undefined;
        },
      );
    }
    return this.runtime;
  }

  private async launch(): Promise<{ browser: Browser; proxy: EgressProxy }> {
    const max = this.options.maxPageBytes;
    const proxy = await startEgressProxy(this.policy, { maxResponseBytes: max, maxTunnelBytes: TUNNEL_FACTOR * max }, this.options.logger);
    try {
      const { browser } = await launchChromium({
        chromiumPath: this.options.chromiumPath,
        proxyUrl: proxy.url,
        runAs: this.options.runAs,
        sandbox: this.options.sandbox,
        logger: this.options.logger,
        // Frames in the page's process, so the size watch sees their responses too.
        extraArgs: ['--disable-features=IsolateOrigins,site-per-process'],
      });
      return { browser, proxy };
    } catch (err) {
      await proxy.close();
      throw new Error(`The browser could not start: ${briefly(err)}`);
    }
  }

  /**
   * Opens `url` in a fresh context under the time and size limits, runs `work`, closes the
   * context. The first failure (refusal, time limit, size limit, cancellation) wins.
   */
  private async withPage<T>(
    url: string,
    signal: AbortSignal,
    caller: BrowserCaller,
    work: (session: PageSession, response: Response | null) => Promise<T>,
  ): Promise<T> {
    const first = await this.policy.checkUrl(url);
    if (!first.ok) throw first.unresolved ? new Error(`Could not open ${url}: ${first.reason}.`) : new BrowserRefusal(url, first.reason);
    // Slots are shared fairly between tenants: one tenant's queue never holds back another's call for long.
    const release = await this.slots.acquire(caller.tenantId, signal, 'The tool call was cancelled while waiting for the browser.');
    let context: BrowserContext | undefined;
    let timer: NodeJS.Timeout | undefined;
    let failure: Error | undefined;
    let onAbort: (() => void) | undefined;
    let onOversize: ((event: OversizeEvent) => void) | undefined;
    let proxyEvents: EgressProxy['events'] | undefined;
    try {
      const { browser, proxy } = await this.acquireRuntime();
      proxyEvents = proxy.events;
      if (signal.aborted) throw new Error('The tool call was cancelled.');
      const blank = await this.takeBlankPage(browser);
      context = blank.context;
      const ctx = context;
      const page = blank.page;
      let rejectFailed!: (err: Error) => void;
      const failed = new Promise<never>((_, reject) => {
        rejectFailed = reject;
      });
      failed.catch(() => {});
      const fail = (err: Error) => {
        if (failure) return;
        failure = err;
        rejectFailed(err);
        void ctx.close().catch(() => {});
      };
      const guard = <R>(p: Promise<R>) => Promise.race([p, failed]);
      const deadline = Date.now() + this.options.pageTimeoutMs;
      timer = setTimeout(
        () =>
          fail(
            new Error(`${url} did not load within ${this.options.pageTimeoutMs} ms (the browser's time limit, BROWSER_PAGE_TIMEOUT_MS).`),
          ),
        this.options.pageTimeoutMs,
      );
      onAbort = () => fail(new Error('The tool call was cancelled (its deadline passed).'));
      signal.addEventListener('abort', onAbort, { once: true });

      let blocked = 0;
      const pending: Promise<void>[] = [];
      const isMainNavigation = (request: Request) => {
        try {
          return request.isNavigationRequest() && request.frame() === page.mainFrame();
        } catch {
          return false; // service worker requests have no frame
        }
      };
      // Popups are not followed.
      ctx.on('page', (other) => {
        if (other !== page) void other.close().catch(() => {});
      });
      page.on('dialog', (dialog) => void dialog.dismiss().catch(() => {}));

      await guard(
        ctx.route('**/*', async (route) => {
          const request = route.request();
          const verdict = await this.policy.checkUrl(request.url());
          if (verdict.ok) {
            await route.continue().catch(() => {});
            return;
          }
          blocked++;
          if (isMainNavigation(request)) fail(new BrowserRefusal(request.url(), verdict.reason));
          else this.options.logger.debug({ url: request.url(), reason: verdict.reason }, 'browser request refused');
          await route.abort('blockedbyclient').catch(() => {});
        }),
      );
      // Redirect hops do not pass page.route: check them here (the proxy refuses the connection itself).
      // In-flight requests, so the page can settle once the network is quiet.
      let inflight = 0;
      let lastActivity = Date.now();
      const finished = () => {
        inflight = Math.max(0, inflight - 1);
        lastActivity = Date.now();
      };
      ctx.on('requestfinished', finished);
      ctx.on('requestfailed', finished);
      const requestedUrls = new Set<string>();
      const requestedAuthorities = new Set<string>();
      ctx.on('request', (request) => {
        inflight++;
        lastActivity = Date.now();
        try {
          const requested = new URL(request.url());
          requested.hash = '';
          requestedUrls.add(requested.href);
          requestedAuthorities.add(authorityOf(requested));
        } catch {
          // not a URL the proxy sees
        }
        if (!request.redirectedFrom()) return;
        pending.push(
          this.policy.checkUrl(request.url()).then((verdict) => {
            if (verdict.ok) return;
            blocked++;
            if (isMainNavigation(request)) fail(new BrowserRefusal(request.url(), verdict.reason));
          }),
        );
      });

      // The size limit: any response over maxPageBytes (declared or received) stops the page.
      const cdp = await guard(ctx.newCDPSession(page));
      const max = this.options.maxPageBytes;
      const received = new Map<string, number>();
      const responseUrls = new Map<string, string>();
      const tooLarge = (where: string, bytes: number) =>
        fail(
          new Error(
            `${where} is larger than the browser's size limit of ${max} bytes (BROWSER_MAX_PAGE_BYTES; ${bytes} bytes or more): loading stopped.`,
          ),
        );
      // The proxy cuts oversized downloads at network speed; CDP sees what chromium decodes.
      onOversize = (event: OversizeEvent) => {
        const mine = event.url ? requestedUrls.has(event.url) : requestedAuthorities.has(event.authority);
        if (mine) tooLarge(event.url ?? `A response from ${event.authority}`, event.bytes);
      };
      proxy.events.on('oversize', onOversize);
      cdp.on('Network.responseReceived', (event) => {
        responseUrls.set(event.requestId, event.response.url);
        const declared = Object.entries(event.response.headers).find(([k]) => k.toLowerCase() === 'content-length')?.[1];
        if (declared !== undefined && Number(declared) > max) tooLarge(event.response.url, Number(declared));
      });
      cdp.on('Network.dataReceived', (event) => {
        const total = (received.get(event.requestId) ?? 0) + Math.max(event.dataLength, event.encodedDataLength);
        received.set(event.requestId, total);
        if (total > max) tooLarge(responseUrls.get(event.requestId) ?? url, total);
      });
      cdp.on('Network.loadingFinished', (event) => {
        if (event.encodedDataLength > max) tooLarge(responseUrls.get(event.requestId) ?? url, event.encodedDataLength);
        received.delete(event.requestId);
        responseUrls.delete(event.requestId);
      });
      await guard(cdp.send('Network.enable'));

      const settle = async () => {
        await guard(Promise.all(pending));
        if (failure) throw failure;
      };
      let response: Response | null;
      try {
        response = await guard(page.goto(url, { waitUntil: 'domcontentloaded', timeout: 0 }));
      } catch (err) {
        await settle();
        throw err === failure ? err : new Error(`Could not open ${url}: ${briefly(err)}`);
      }
      await settle();
      const refused = response?.headers()[REFUSED_HEADER];
      if (refused) throw new BrowserRefusal(response!.url(), decodeURIComponent(refused));
      // Let scripts finish what they start, within a few seconds and the time limit.
      const settleFor = Math.min(SETTLE_MAX_MS, deadline - Date.now() - 1000);
      if (settleFor > 0) {
        const until = Date.now() + settleFor;
        await guard(page.waitForLoadState('load', { timeout: settleFor }).catch(() => undefined));
        while (Date.now() < until && !failure && (inflight > 0 || Date.now() - lastActivity < QUIET_MS)) await delay(50);
      }
      return await guard(work({ page, cdp, guard, settle, deadline, blockedRequests: () => blocked }, response));
    } catch (err) {
      throw failure ?? err;
    } finally {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
      if (onOversize) proxyEvents?.off('oversize', onOversize);
      await context?.close().catch(() => {});
      release();
    }
  }
}
