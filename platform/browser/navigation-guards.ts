import type { Logger } from 'pino';
import type { BrowserContext, Page, Request, Response } from 'playwright-core';
import type { EgressPolicy } from '../egress/egress-policy.js';
import { REFUSED_HEADER } from '../egress/egress-proxy.js';
import { BrowserRefusal } from './browser-errors.js';
import type { FirstFailure } from './first-failure.js';

/**
 * The checks on where a page goes. The egress proxy holds every connection to the policy
 * whatever happens here; these checks make a refusal fail with a clear reason, and keep refused
 * subresources from ever leaving chromium.
 */

/** The URL a call opens, checked before it waits for a slot: a refused or unresolvable host fails at once. */
export async function checkStartUrl(policy: EgressPolicy, url: string): Promise<void> {
  const first = await policy.checkUrl(url);
  if (!first.ok) throw first.unresolved ? new Error(`Could not open ${url}: ${first.reason}.`) : new BrowserRefusal(url, first.reason);
}

/** Pop-ups are not followed: every page of the context but `page` is closed. */
export function closePopups(context: BrowserContext, page: Page): void {
  context.on('page', (other) => {
    if (other !== page) void other.close().catch(() => {});
  });
}

/**
 * Checks every request of the context (each frame, pop-up and subresource) against the policy
 * before it leaves; a refused one is aborted and `onRefused` hears why. Redirect hops do not pass
 * here: the proxy refuses their connections (and the engine checks them, see guardNavigation).
 */
export async function checkRequests(
  context: BrowserContext,
  policy: EgressPolicy,
  onRefused: (request: Request, reason: string) => void,
): Promise<void> {
  await context.route('**/*', async (route) => {
    const request = route.request();
    const verdict = await policy.checkUrl(request.url());
    if (verdict.ok) {
      await route.continue().catch(() => {});
      return;
    }
    onRefused(request, verdict.reason);
    await route.abort('blockedbyclient').catch(() => {});
  });
}

interface NavigationGuards {
  /** Requests of the page the policy refused (subresources, frames, redirect hops). */
  blockedRequests(): number;
  /** Waits for the redirect checks started so far. */
  redirectsChecked(): Promise<void>;
}

/**
 * The browser engine's checks on one call's page: every request and redirect hop against the
 * policy (a refused main-frame navigation fails the call, a refused subresource is counted),
 * pop-ups closed, dialogs dismissed.
 */
export async function guardNavigation(
  context: BrowserContext,
  page: Page,
  policy: EgressPolicy,
  failure: FirstFailure,
  logger: Pick<Logger, 'debug'>,
): Promise<NavigationGuards> {
  let blocked = 0;
  const pending: Promise<void>[] = [];
  const isMainNavigation = (request: Request) => {
    try {
      return request.isNavigationRequest() && request.frame() === page.mainFrame();
    } catch {
      return false; // service worker requests have no frame
    }
  };
  closePopups(context, page);
  page.on('dialog', (dialog) => void dialog.dismiss().catch(() => {}));
  await failure.guard(
    checkRequests(context, policy, (request, reason) => {
      blocked++;
      if (isMainNavigation(request)) failure.fail(new BrowserRefusal(request.url(), reason));
      else logger.debug({ url: request.url(), reason }, 'browser request refused');
    }),
  );
  // Redirect hops do not pass page.route: check them here (the proxy refuses the connection itself).
  context.on('request', (request) => {
    if (!request.redirectedFrom()) return;
    pending.push(
      policy.checkUrl(request.url()).then((verdict) => {
        if (verdict.ok) return;
        blocked++;
        if (isMainNavigation(request)) failure.fail(new BrowserRefusal(request.url(), verdict.reason));
      }),
    );
  });
  return {
    blockedRequests: () => blocked,
    redirectsChecked: async () => {
      await Promise.all(pending);
    },
  };
}

/** A page the proxy refused (its refusal header), as the refusal it is. */
export function throwIfProxyRefused(response: Response | null): void {
  const refused = response?.headers()[REFUSED_HEADER];
  if (refused) throw new BrowserRefusal(response!.url(), decodeURIComponent(refused));
}
