import type { Logger } from 'pino';
import type { BrowserContext, CDPSession, Page, Response } from 'playwright-core';
import type { AllowedHost } from '../../core/network-policy.js';
import type { BrowserCaller, BrowserEngine, Extraction, OpenedPage, Screenshot } from '../../core/ports/browser-engine.js';
import { EgressPolicy, type Lookup } from '../egress/egress-policy.js';
import { BlankPages } from './blank-pages.js';
import { briefly } from './browser-errors.js';
import type { ChromiumSettings } from './chromium.js';
import { extractElements, waitForFirstMatch } from './extract-elements.js';
import { FairSlots } from './fair-slots.js';
import { FirstFailure, failOnTimeoutOrAbort } from './first-failure.js';
import { checkStartUrl, guardNavigation, throwIfProxyRefused } from './navigation-guards.js';
import { letScriptsFinish, NetworkActivity } from './page-settle.js';
import { readPage } from './read-page.js';
import { fittingScreenshot, screenshotHeight } from './screenshot.js';
import { type RunningChromium, SharedChromium } from './shared-chromium.js';
import { proxyLimits, watchResponseSizes } from './size-limits.js';

interface ChromiumEngineOptions extends ChromiumSettings {
  allowedHosts: readonly AllowedHost[];
  /** The time limit of one page, from navigation to answer (BROWSER_PAGE_TIMEOUT_MS). */
  pageTimeoutMs: number;
  /** The largest response a page may receive (BROWSER_MAX_PAGE_BYTES). */
  maxPageBytes: number;
  /** Results above this are cut by the engine (CONNECTIONS_TOOL_RESULT_MAX_BYTES): screenshots fit under it. */
  maxResultBytes: number;
  logger: Logger;
  /** Pages open at once in this process (BROWSER_CONCURRENCY); more calls wait their turn, tenants fairly. */
  concurrency?: number;
  /** DNS, for tests. */
  lookup?: Lookup;
}

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
 * The `browser` built-in's engine. One chromium per worker process, launched on first use and
 * reused; each call gets a fresh context (no cookies or storage shared between calls), closed
 * after. Every connection goes through the egress proxy (the network policy at connect time);
 * the navigation guards also check each request so a refused page fails with a clear message
 * and refused subresources never leave.
 */
export class ChromiumBrowserEngine implements BrowserEngine {
  private readonly chromium: SharedChromium;
  private readonly blankPages = new BlankPages();
  private closed = false;
  private readonly policy: EgressPolicy;
  private readonly slots: FairSlots;

  constructor(private readonly options: ChromiumEngineOptions) {
    this.policy = new EgressPolicy(options.allowedHosts, options.lookup);
    this.slots = new FairSlots(options.concurrency ?? 4);
    this.chromium = new SharedChromium({
      settings: { chromiumPath: options.chromiumPath, runAs: options.runAs, sandbox: options.sandbox },
      policy: this.policy,
      limits: proxyLimits(options.maxPageBytes),
      // Frames in the page's process, so the size watch sees their responses too.
      extraArgs: ['--disable-features=IsolateOrigins,site-per-process'],
      logger: options.logger,
    });
  }

  async openPage(
    input: { url: string; maxChars: number; maxLinks: number },
    signal: AbortSignal,
    caller: BrowserCaller,
  ): Promise<OpenedPage> {
    return this.withPage(input.url, signal, caller, async ({ page, guard, settle, blockedRequests }, response) => {
      const found = await readPage(page, guard, input);
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
      await waitForFirstMatch(page, guard, input.selector, deadline);
      const found = await extractElements(page, guard, input);
      await settle();
      if (found.invalid) throw new Error(`"${input.selector}" is not a valid CSS selector.`);
      return { url: page.url(), selector: input.selector, count: found.count, items: found.items };
    });
  }

  async screenshot(input: { url: string; fullPage: boolean }, signal: AbortSignal, caller: BrowserCaller): Promise<Screenshot> {
    return this.withPage(input.url, signal, caller, async ({ page, cdp, guard, settle }) => {
      const cssHeight = await screenshotHeight(page, guard, input.fullPage);
      await settle();
      return fittingScreenshot(cdp, guard, {
        url: page.url(),
        cssHeight,
        fullPage: input.fullPage,
        maxResultBytes: this.options.maxResultBytes,
      });
    });
  }

  /** Stops chromium and the proxy (worker shutdown). Later calls fail. */
  async close(): Promise<void> {
    this.closed = true;
    await this.blankPages.close();
    await this.chromium.close();
  }

  private running(): Promise<RunningChromium> {
    if (this.closed) return Promise.reject(new Error('The browser is shut down (the worker is stopping).'));
    return this.chromium.get().catch((err) => {
      throw new Error(`The browser could not start: ${briefly(err)}`);
    });
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
    await checkStartUrl(this.policy, url);
    // Slots are shared fairly between tenants: one tenant's queue never holds back another's call for long.
    const release = await this.slots.acquire(caller.tenantId, signal, 'The tool call was cancelled while waiting for the browser.');
    let context: BrowserContext | undefined;
    let failure: FirstFailure | undefined;
    let stopTimeLimits: (() => void) | undefined;
    let stopSizeWatch: (() => void) | undefined;
    try {
      const { browser, proxy } = await this.running();
      if (signal.aborted) throw new Error('The tool call was cancelled.');
      const blank = await this.blankPages.take(browser);
      context = blank.context;
      const ctx = context;
      const page = blank.page;
      const call = new FirstFailure(() => void ctx.close().catch(() => {}));
      failure = call;
      const { guard } = call;
      const deadline = Date.now() + this.options.pageTimeoutMs;
      stopTimeLimits = failOnTimeoutOrAbort(call, { url, timeoutMs: this.options.pageTimeoutMs, signal });

      const guards = await guardNavigation(ctx, page, this.policy, call, this.options.logger);
      const network = new NetworkActivity(ctx);
      const cdp = await guard(ctx.newCDPSession(page));
      stopSizeWatch = watchResponseSizes({
        context: ctx,
        cdp,
        proxyEvents: proxy.events,
        maxBytes: this.options.maxPageBytes,
        pageUrl: url,
        failure: call,
      });
      await guard(cdp.send('Network.enable'));

      const settle = async () => {
        await guard(guards.redirectsChecked());
        if (call.error) throw call.error;
      };
      let response: Response | null;
      try {
        response = await guard(page.goto(url, { waitUntil: 'domcontentloaded', timeout: 0 }));
      } catch (err) {
        await settle();
        throw err === call.error ? err : new Error(`Could not open ${url}: ${briefly(err)}`);
      }
      await settle();
      throwIfProxyRefused(response);
      await letScriptsFinish(page, network, call, deadline);
      return await guard(work({ page, cdp, guard, settle, deadline, blockedRequests: guards.blockedRequests }, response));
    } catch (err) {
      throw failure?.error ?? err;
    } finally {
      stopTimeLimits?.();
      stopSizeWatch?.();
      await context?.close().catch(() => {});
      release();
    }
  }
}
