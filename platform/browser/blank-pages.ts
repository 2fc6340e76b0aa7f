import type { Browser, BrowserContext, Page } from 'playwright-core';

/** The size of the engine's pages (screenshots are taken at this width). */
export const VIEWPORT = { width: 1280, height: 800 } as const;

interface BlankPage {
  context: BrowserContext;
  page: Page;
}

async function blankPage(browser: Browser): Promise<BlankPage> {
  const context = await browser.newContext({ viewport: VIEWPORT, serviceWorkers: 'block', acceptDownloads: false, locale: 'en-US' });
  try {
    return { context, page: await context.newPage() };
  } catch (err) {
    await context.close().catch(() => {});
    throw err;
  }
}

/**
 * Never-used contexts with a blank page, one per call (no cookies or storage shared between
 * calls). Opening a page starts a renderer process (seconds on a slow sandbox), so one is made
 * ahead for the next call while this one runs.
 */
export class BlankPages {
  private spare?: Promise<BlankPage>;
  private closed = false;

  async take(browser: Browser): Promise<BlankPage> {
    // Taken before any await: concurrent calls never share a spare.
    const spare = this.spare;
    this.spare = this.closed ? undefined : blankPage(browser);
    this.spare?.catch(() => {});
    const ready = await spare?.catch(() => undefined);
    if (ready && ready.context.browser() === browser && browser.isConnected()) return ready;
    if (ready) await ready.context.close().catch(() => {});
    return blankPage(browser);
  }

  /** Closes the spare; none is made after. */
  async close(): Promise<void> {
    this.closed = true;
    const spare = await this.spare?.catch(() => undefined);
    this.spare = undefined;
    await spare?.context.close().catch(() => {});
  }
}
