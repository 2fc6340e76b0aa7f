import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTenantSettings } from '../../features/accounts/store/tenants.js';
import { createTestUser, type Stack, startStack, type TestUser } from '../support/harness.js';
import { startTestUpstream, type TestUpstream } from '../support/mcp-upstream-server.js';

// An upstream MCP server that is down must not look like an integration with no tools: search
// names it in `unavailable` (as it names a remote source it skipped), for callers who could use it.

let stack: Stack;
let up: TestUpstream;
let alice: TestUser;

/** An address where nothing listens: a port taken, then given back. */
async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/mcp`;
}

beforeAll(async () => {
  up = await startTestUpstream();
  stack = await startStack({
    env: {
      UPSTREAM_MCP_ALLOWED_HOSTS: '127.0.0.1',
      UPSTREAM_MCP_SERVERS: JSON.stringify([
        { name: 'upnow', displayName: 'Up now', url: up.url },
        { name: 'gone', displayName: 'Gone', url: await deadUrl() },
      ]),
    },
  });
  alice = await createTestUser(stack);
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await up?.close();
});

describe('an upstream server that is down', () => {
  it('is named in search_tools and connections_search as unavailable, beside the tools of the servers that answer', async () => {
    const search = await alice.call('search_tools', { query: 'echo a message' });
    expect(search.status).toBe(200);
    expect(search.body.unavailable).toEqual(['gone']);
    expect(search.body.tools.map((t: { integration: string }) => t.integration)).toContain('upnow');

    const json = await alice.call('connections_search', { query: 'echo a message' });
    expect(json.status).toBe(200);
    expect(json.body.unavailable).toEqual(['gone']);
    expect(json.body.results.map((t: { provider: string }) => t.provider)).toContain('upnow');
  });

  it('is not named when the search asks for another integration, nor to a tenant that did not enable it', async () => {
    const other = await alice.call('search_tools', { query: 'echo a message', integration: 'upnow' });
    expect(other.status).toBe(200);
    expect(other.body).not.toHaveProperty('unavailable');
    expect(other.body.tools.length).toBeGreaterThan(0);

    const bob = await createTestUser(stack);
    await updateTenantSettings(stack.services.pool, bob.user.tenantId, { enabledProviders: ['upnow', 'jots'] });
    const bobs = await bob.call('search_tools', { query: 'echo a message' });
    expect(bobs.status).toBe(200);
    expect(bobs.body).not.toHaveProperty('unavailable');
  });
});
