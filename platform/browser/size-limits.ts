import type { BrowserContext, CDPSession } from 'playwright-core';
import { authorityOf, type EgressProxy, type EgressProxyOptions, type OversizeEvent } from '../egress/egress-proxy.js';
import type { FirstFailure } from './first-failure.js';

/** An HTTPS connection (all its responses together) may carry this many times BROWSER_MAX_PAGE_BYTES. */
const TUNNEL_FACTOR = 4;

/** The engine's egress proxy limits for a page size limit (BROWSER_MAX_PAGE_BYTES). */
export const proxyLimits = (maxPageBytes: number): EgressProxyOptions => ({
  maxResponseBytes: maxPageBytes,
  maxTunnelBytes: TUNNEL_FACTOR * maxPageBytes,
});

/**
 * The size limit of one call: any response over `maxBytes` (declared or received) fails it. The
 * proxy cuts oversized downloads at network speed (its `oversize` events, matched to this call's
 * requests, as the proxy is shared); CDP sees what chromium decodes. Call before
 * `Network.enable`; returns what stops watching the proxy.
 */
export function watchResponseSizes(input: {
  context: BrowserContext;
  cdp: CDPSession;
  proxyEvents: EgressProxy['events'];
  maxBytes: number;
  /** The URL the call opens, named when a response's own URL is unknown. */
  pageUrl: string;
  failure: FirstFailure;
}): () => void {
  const { context, cdp, proxyEvents, maxBytes: max, pageUrl, failure } = input;
  const requestedUrls = new Set<string>();
  const requestedAuthorities = new Set<string>();
  context.on('request', (request) => {
    try {
      const requested = new URL(request.url());
      requested.hash = '';
      requestedUrls.add(requested.href);
      requestedAuthorities.add(authorityOf(requested));
    } catch {
      // not a URL the proxy sees
    }
  });
  const tooLarge = (where: string, bytes: number) =>
    failure.fail(
      new Error(
        `${where} is larger than the browser's size limit of ${max} bytes (BROWSER_MAX_PAGE_BYTES; ${bytes} bytes or more): loading stopped.`,
      ),
    );
  const onOversize = (event: OversizeEvent) => {
    const mine = event.url ? requestedUrls.has(event.url) : requestedAuthorities.has(event.authority);
    if (mine) tooLarge(event.url ?? `A response from ${event.authority}`, event.bytes);
  };
  proxyEvents.on('oversize', onOversize);
  const received = new Map<string, number>();
  const responseUrls = new Map<string, string>();
  cdp.on('Network.responseReceived', (event) => {
    responseUrls.set(event.requestId, event.response.url);
    const declared = Object.entries(event.response.headers).find(([k]) => k.toLowerCase() === 'content-length')?.[1];
    if (declared !== undefined && Number(declared) > max) tooLarge(event.response.url, Number(declared));
  });
  cdp.on('Network.dataReceived', (event) => {
    const total = (received.get(event.requestId) ?? 0) + Math.max(event.dataLength, event.encodedDataLength);
    received.set(event.requestId, total);
    if (total > max) tooLarge(responseUrls.get(event.requestId) ?? pageUrl, total);
  });
  cdp.on('Network.loadingFinished', (event) => {
    if (event.encodedDataLength > max) tooLarge(responseUrls.get(event.requestId) ?? pageUrl, event.encodedDataLength);
    received.delete(event.requestId);
    responseUrls.delete(event.requestId);
  });
  return () => proxyEvents.off('oversize', onOversize);
}
