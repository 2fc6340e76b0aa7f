import { setTimeout as delay } from 'node:timers/promises';
import type { BrowserContext, Page } from 'playwright-core';
import type { FirstFailure } from './first-failure.js';

/** Scripts get at most this long after the page's HTML to finish what they start. */
export const SETTLE_MAX_MS = 3000;
/** The network counts as quiet after this long without a request starting or ending. */
const QUIET_MS = 250;

/** Requests of a context in flight, and when the last one started or ended. */
export class NetworkActivity {
  private inflight = 0;
  private lastActivity = Date.now();

  constructor(context: BrowserContext) {
    const finished = () => {
      this.inflight = Math.max(0, this.inflight - 1);
      this.lastActivity = Date.now();
    };
    context.on('requestfinished', finished);
    context.on('requestfailed', finished);
    context.on('request', () => {
      this.inflight++;
      this.lastActivity = Date.now();
    });
  }

  get quiet(): boolean {
    return this.inflight === 0 && Date.now() - this.lastActivity >= QUIET_MS;
  }
}

/**
 * Lets a loaded page's scripts finish what they start: waits for the load event, then for a
 * quiet network, within SETTLE_MAX_MS and a second short of the call's deadline.
 */
export async function letScriptsFinish(page: Page, network: NetworkActivity, failure: FirstFailure, deadline: number): Promise<void> {
  const settleFor = Math.min(SETTLE_MAX_MS, deadline - Date.now() - 1000);
  if (settleFor <= 0) return;
  const until = Date.now() + settleFor;
  await failure.guard(page.waitForLoadState('load', { timeout: settleFor }).catch(() => undefined));
  while (Date.now() < until && !failure.error && !network.quiet) await delay(50);
}
