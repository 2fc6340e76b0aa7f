import { describe, expect, it } from 'vitest';
import { upstreamProvider } from '../../providers/remote-mcp/provider.js';
import type { ToolContext } from '../../providers/sdk/index.js';
import { startLegacyUpstream, startTestUpstream } from '../support/mcp-upstream-server.js';

// The upstream provider against real servers built with the official SDK, without the rest of Switchboard.

const options = { allowedHosts: [{ host: '127.0.0.1' }], maxResponseBytes: 1024 * 1024, toolsTtlSec: 300, version: 'test' };
const none = { type: 'none' as const };
const ctx = (signal = AbortSignal.timeout(10_000)) => ({ credential: none, signal }) as unknown as ToolContext;

describe('the upstream transport', () => {
  it('falls back to the legacy HTTP+SSE transport when the server offers only that', async () => {
    const legacy = await startLegacyUpstream();
    const provider = upstreamProvider({ name: 'legacy', displayName: 'Legacy', url: legacy.url, auth: { type: 'none' } }, options);
    try {
      const tools = await provider.dynamicTools!.list(none, AbortSignal.timeout(10_000));
      expect(tools.map((t) => t.name)).toEqual(['shout']);
      expect(await tools[0].run({ word: 'hey' }, ctx())).toBe('HEY');
      expect(legacy.calls).toEqual(['shout']);
    } finally {
      await provider.dynamicTools!.close();
      await legacy.close();
    }
  });

  it('aborts a call at the caller’s deadline', async () => {
    const upstream = await startTestUpstream();
    const provider = upstreamProvider({ name: 'slowpoke', displayName: 'Slow', url: upstream.url, auth: { type: 'none' } }, options);
    try {
      const tools = await provider.dynamicTools!.list(none, AbortSignal.timeout(10_000));
      const slow = tools.find((t) => t.name === 'slow')!;
      const started = Date.now();
      await expect(slow.run({}, ctx(AbortSignal.timeout(300)))).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await provider.dynamicTools!.close();
      await upstream.close();
    }
  });

  it('does not make every search wait on a server that is down', async () => {
    const provider = upstreamProvider(
      { name: 'down', displayName: 'Down', url: 'http://127.0.0.1:9/mcp', auth: { type: 'none' } },
      options,
    );
    await provider.dynamicTools!.warm();
    const started = Date.now();
    await provider.dynamicTools!.warm();
    expect(Date.now() - started).toBeLessThan(50);
    expect(provider.dynamicTools!.shared()).toEqual([]);
  });

  it('applies the allow-list: without it, a loopback upstream is refused before any request', async () => {
    const upstream = await startTestUpstream();
    const provider = upstreamProvider(
      { name: 'loop', displayName: 'Loop', url: upstream.url, auth: { type: 'none' } },
      { ...options, allowedHosts: [] },
    );
    try {
      await expect(provider.dynamicTools!.list(none, AbortSignal.timeout(10_000))).rejects.toThrow(/127\.0\.0\.1 is a loopback address/);
      expect(upstream.requests).toHaveLength(0);
    } finally {
      await upstream.close();
    }
  });
});
