import { describe, expect, it } from 'vitest';
import { upstreamProvider } from '../../providers/remote-mcp/provider.js';
import { UPSTREAM_LIMITS } from '../../providers/remote-mcp/tools.js';
import { startTestUpstream } from '../support/mcp-upstream-server.js';

// What a hostile upstream's tools/list may make the event loop that serves every tenant parse: the
// MCP SDK parses and validates each page whole, so pages are bounded in bytes before it reads them,
// a listing stops asking for pages at its byte bound, and a server announcing changes without end is
// listed again at most every few seconds. Real servers built with the official SDK, over real HTTP.

const options = { allowedHosts: [{ host: '127.0.0.1' }], maxResponseBytes: 10 * 1024 * 1024, toolsTtlSec: 300, version: 'test' };
const none = { type: 'none' as const };

/** `count` tools whose input schemas are about `bytes` of JSON each (string fields with descriptions). */
function bigSchemas(count: number, bytes: number): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (let i = 0; i < count; i++) {
    const properties: Record<string, unknown> = {};
    const field = { type: 'string', description: 'x'.repeat(200) };
    const fields = Math.floor(bytes / (JSON.stringify(field).length + 12));
    for (let f = 0; f < fields; f++) properties[`f${String(f).padStart(5, '0')}`] = field;
    out[`tool_${i}`] = { type: 'object', properties };
  }
  return out;
}

describe('a hostile tool listing', () => {
  it('refuses a tools/list page larger than UPSTREAM_LIMITS.listingPageBytes before the SDK parses it', async () => {
    // 40 tools of ~60 KB in one page: ~2.4 MB, more than a page may carry.
    const upstream = await startTestUpstream({ listedSchemas: bigSchemas(40, 60_000) });
    const provider = upstreamProvider({ name: 'bigpage', displayName: 'Big page', url: upstream.url, auth: { type: 'none' } }, options);
    try {
      await expect(provider.dynamicTools!.list(none, AbortSignal.timeout(20_000))).rejects.toThrow(
        new RegExp(`larger than ${UPSTREAM_LIMITS.listingPageBytes} bytes`),
      );
      expect(upstream.listPages).toBe(1);
    } finally {
      await provider.dynamicTools!.close();
      await upstream.close();
    }
  }, 30_000);

  it('stops asking for pages once a listing carries UPSTREAM_LIMITS.listingSchemaBytes', async () => {
    // 100 tools of ~60 KB, 10 a page (~600 KB each, under the page bound): 10 pages, 6 MB in all.
    const upstream = await startTestUpstream({ listedSchemas: bigSchemas(100, 60_000), listPageSize: 10 });
    const provider = upstreamProvider({ name: 'manypages', displayName: 'Many pages', url: upstream.url, auth: { type: 'none' } }, options);
    try {
      await provider.dynamicTools!.list(none, AbortSignal.timeout(20_000));
      const pagesFor = Math.ceil(UPSTREAM_LIMITS.listingSchemaBytes / (10 * 60_000));
      expect(upstream.listPages).toBeLessThanOrEqual(pagesFor + 1);
      expect(upstream.listPages).toBeLessThan(10);
    } finally {
      await provider.dynamicTools!.close();
      await upstream.close();
    }
  }, 30_000);

  it('lists a server announcing changes without end again at most every few seconds, and still sees a real change', async () => {
    const upstream = await startTestUpstream({ listedSchemas: bigSchemas(3, 1000) });
    const provider = upstreamProvider({ name: 'chatty', displayName: 'Chatty', url: upstream.url, auth: { type: 'none' } }, options);
    try {
      await provider.dynamicTools!.list(none, AbortSignal.timeout(10_000));
      const first = upstream.listPages;
      // Twenty announcements, each followed by a search's listing, within a second.
      for (let i = 0; i < 20; i++) {
        upstream.announceToolsChanged();
        await new Promise((r) => setTimeout(r, 50));
        await provider.dynamicTools!.list(none, AbortSignal.timeout(10_000));
      }
      expect(upstream.listPages - first).toBe(0);
      // A change is still seen once the interval has passed.
      await expect
        .poll(
          async () => {
            await provider.dynamicTools!.list(none, AbortSignal.timeout(10_000));
            return upstream.listPages;
          },
          { timeout: 10_000, interval: 250 },
        )
        .toBeGreaterThan(first);
    } finally {
      await provider.dynamicTools!.close();
      await upstream.close();
    }
  }, 30_000);
});
