import type { CallerOwner } from '../caller.js';

/**
 * What the browser tools need from the process that hosts them: a headless browser behind the
 * network policy (`core/network-policy.ts`). The worker supplies it through
 * `ToolContext.services` (`platform/browser/engine.ts`); providers never launch it.
 *
 * Every method loads `url` in a fresh browser context and closes it after. It rejects with an
 * Error that says why when the page (after DNS, after any redirect) is at a refused address, or
 * is too slow (BROWSER_PAGE_TIMEOUT_MS) or too large (BROWSER_MAX_PAGE_BYTES).
 */

export interface PageLink {
  text: string;
  href: string;
}

export interface OpenedPage {
  /** The final URL, after redirects. */
  url: string;
  status: number | null;
  title: string;
  text: string;
  /** Characters of text on the page; more than `text.length` when cut at maxChars. */
  textLength: number;
  truncated: boolean;
  links: PageLink[];
  /** Links on the page (http and https, distinct); more than `links.length` when cut at maxLinks. */
  linkCount: number;
  /** Requests of the page the network policy refused (subresources, frames). */
  blockedRequests: number;
}

export interface Screenshot {
  url: string;
  mimeType: 'image/jpeg';
  /** Pixels of the image. */
  width: number;
  height: number;
  quality: number;
  fullPage: boolean;
  /** The image, base64. */
  data: string;
}

export interface ExtractedItem {
  /** The element's visible text, trimmed. */
  text: string;
  /** The attribute's value when one was asked for (null when the element lacks it). */
  value?: string | null;
}

export interface Extraction {
  url: string;
  selector: string;
  /** Elements matching the selector; more than `items.length` when cut at limit. */
  count: number;
  items: ExtractedItem[];
}

/** Who a page is opened for: the engine shares its few pages fairly between tenants. */
export type BrowserCaller = CallerOwner;

export interface BrowserEngine {
  openPage(input: { url: string; maxChars: number; maxLinks: number }, signal: AbortSignal, caller: BrowserCaller): Promise<OpenedPage>;
  screenshot(input: { url: string; fullPage: boolean }, signal: AbortSignal, caller: BrowserCaller): Promise<Screenshot>;
  extract(
    input: { url: string; selector: string; attribute?: string; limit: number },
    signal: AbortSignal,
    caller: BrowserCaller,
  ): Promise<Extraction>;
}
