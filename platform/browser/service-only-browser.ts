import type { Logger } from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type Lookup, refuseAllEgressPolicy, type ServiceHosts, serviceOnlyEgressPolicy } from '../egress/egress-policy.js';
import { type EgressProxy, startEgressProxy } from '../egress/egress-proxy.js';
import type { ChromiumSettings } from './chromium.js';
import { checkRequests, closePopups } from './navigation-guards.js';
import { SharedChromium } from './shared-chromium.js';

/**
 * Cookie capture's browser: a human signs in to one service in it, live. Each human gets a
 * context of their own with its own egress proxy that reaches only that service; the chromium
 * they share reaches nothing by itself.
 */

/** A capture page's responses: larger than the built-in's (a human signs in to a full web app), still bounded. */
const MAX_RESPONSE_BYTES = 25 * 1024 * 1024;
const MAX_TUNNEL_BYTES = 250 * 1024 * 1024;

/**
 * A chromium whose launch-wide proxy refuses everything: a context that names no proxy of its own
 * (see openServiceOnlyContext) reaches nothing.
 */
export function serviceOnlyChromium(settings: ChromiumSettings, logger: Logger): SharedChromium {
  return new SharedChromium({
    settings,
    policy: refuseAllEgressPolicy("a capture session's service"),
    limits: { maxResponseBytes: 0, maxTunnelBytes: 0 },
    logger: logger.child({ component: 'capture-browser' }),
    onStarted: ({ browser, sandboxed }) => logger.info({ version: browser.version(), sandboxed }, 'capture browser started'),
  });
}

export interface ServiceOnlyContext {
  context: BrowserContext;
  page: Page;
  /** The context's own egress proxy: close it with the context. */
  proxy: EgressProxy;
}

/**
 * A context with one page that reaches only `service` (serviceOnlyEgressPolicy): every connection
 * of the context (pop-ups and frames included) goes through its own proxy holding that policy.
 * Every request of every frame and pop-up is also checked here, for a clear refusal; redirect
 * hops, which do not pass here, the proxy refuses itself. Pop-ups would be invisible to the
 * human; they are closed.
 */
export async function openServiceOnlyContext(
  browser: Browser,
  service: ServiceHosts,
  options: { viewport: { width: number; height: number }; lookup?: Lookup; logger: Logger },
): Promise<ServiceOnlyContext> {
  const { logger } = options;
  const policy = serviceOnlyEgressPolicy(service, options.lookup);
  const proxy = await startEgressProxy(policy, { maxResponseBytes: MAX_RESPONSE_BYTES, maxTunnelBytes: MAX_TUNNEL_BYTES }, logger);
  let context: BrowserContext | undefined;
  try {
    context = await browser.newContext({
      proxy: { server: proxy.url },
      viewport: options.viewport,
      deviceScaleFactor: 1,
      acceptDownloads: false,
      serviceWorkers: 'block',
      locale: 'en-US',
      // Headless chromium announces itself; services that refuse it would refuse the human.
      userAgent: `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${browser.version()} Safari/537.36`,
    });
    const page = await context.newPage();
    closePopups(context, page);
    await checkRequests(context, policy, (request, reason) =>
      logger.info({ url: request.url().slice(0, 200), reason }, 'capture browser: request off the service blocked'),
    );
    return { context, page, proxy };
  } catch (err) {
    await context?.close().catch(() => {});
    await proxy.close();
    throw err;
  }
}
