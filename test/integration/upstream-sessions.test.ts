import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { insertAccount } from '../../features/accounts/store/accounts.js';
import { createTestUser, type Stack, startStack, type TestUser } from '../support/harness.js';
import { startTestUpstream } from '../support/mcp-upstream-server.js';

// An upstream server's MCP sessions in one process: a session a call is using is never closed under
// it, keys the server refuses never take a place (so never push a working session out), and a
// session nobody used for UPSTREAM_MCP_SESSION_IDLE_SEC is closed.

const API_KEY = 'bank-key-0123456789abcdef';
let releaseTransfer: () => void = () => {};
let transferStarted: () => void = () => {};
const upstream = await startTestUpstream({
  apiKey: API_KEY,
  extraTools: (server) => {
    server.registerTool(
      'transfer',
      { description: 'Moves money', inputSchema: { amount: z.number() }, annotations: { destructiveHint: false } },
      async ({ amount }) => {
        transferStarted();
        // Runs until the test has tried its refused keys (at most 20 s).
        await new Promise<void>((resolve) => {
          releaseTransfer = resolve;
          setTimeout(resolve, 20_000);
        });
        return { content: [{ type: 'text', text: `moved ${amount}` }] };
      },
    );
  },
});
const servers = (name: string) =>
  JSON.stringify([{ name, displayName: 'Bank', url: upstream.url, auth: { type: 'apikey', header: 'X-Api-Key', label: 'Key' } }]);
const stacks: Stack[] = [];
afterAll(async () => {
  await Promise.all(stacks.map((s) => s.close()));
  await upstream.close();
});

const execute = (user: TestUser, name: string, args: Record<string, unknown> = {}) =>
  user.call('connections_execute', { name, arguments: args }).then((r) => r.body);

/** Sessions this key opened at the server (an initialize: a POST without a session id). */
const openings = (key: string) => upstream.requests.filter((r) => r.method === 'POST' && !r.sessionId && r.apiKey === key).length;

async function connectedUser(stack: Stack, integration: string): Promise<TestUser> {
  const user = await createTestUser(stack);
  await insertAccount(stack.services.pool, stack.services.keyring, {
    tenantId: user.user.tenantId,
    ownerUserId: user.user.id,
    integration,
    label: 'Bank',
    credential: { type: 'apikey', fields: { apiKey: API_KEY }, boundTo: `mcp:${upstream.url}` },
  });
  return user;
}

describe('upstream MCP sessions', () => {
  it('a call in flight survives 200+ refused keys, and the refused keys never push a working session out', async () => {
    const stack = await startStack({
      env: { CONNECTIONS_TOOL_TIMEOUT_MS: '30000', UPSTREAM_MCP_ALLOWED_HOSTS: '127.0.0.1', UPSTREAM_MCP_SERVERS: servers('bank') },
    });
    stacks.push(stack);
    const alice = await connectedUser(stack, 'bank');
    const started = new Promise<void>((resolve) => {
      transferStarted = resolve;
    });
    const transfer = execute(alice, 'bank__transfer', { amount: 100 });
    await started;
    expect(openings(API_KEY)).toBe(1);

    // What re-posting the portal's API-key form does: each key is tried by listing the tools with it.
    const provider = stack.services.registry.get('bank')!;
    const refused = await Promise.allSettled(
      Array.from({ length: 210 }, () =>
        provider.identify!({
          credential: { type: 'apikey', fields: { apiKey: randomBytes(12).toString('hex') } },
          signal: AbortSignal.timeout(20_000),
          apiBaseUrl: upstream.url,
          fetch,
          logger: { info() {}, warn() {} },
          caller: { tenantId: alice.user.tenantId, userId: alice.user.id },
        }),
      ),
    );
    expect(refused.every((r) => r.status === 'rejected' && (r.reason as { status?: number }).status === 401)).toBe(true);
    releaseTransfer();
    expect(await transfer).toEqual({ ok: true, result: 'moved 100' });
    // Her session is still the one she opened: no refused key took its place.
    expect(await execute(alice, 'bank__echo', { message: 'again' })).toEqual({ ok: true, result: 'echo: again' });
    expect(openings(API_KEY)).toBe(1);
  });

  it('a session unused for UPSTREAM_MCP_SESSION_IDLE_SEC is closed; the next call opens a new one', async () => {
    const stack = await startStack({
      env: { UPSTREAM_MCP_SESSION_IDLE_SEC: '2', UPSTREAM_MCP_ALLOWED_HOSTS: '127.0.0.1', UPSTREAM_MCP_SERVERS: servers('idlebank') },
    });
    stacks.push(stack);
    const carol = await connectedUser(stack, 'idlebank');
    const before = openings(API_KEY);
    expect(await execute(carol, 'idlebank__echo', { message: 'one' })).toEqual({ ok: true, result: 'echo: one' });
    expect(await execute(carol, 'idlebank__echo', { message: 'two' })).toEqual({ ok: true, result: 'echo: two' });
    expect(openings(API_KEY)).toBe(before + 1);
    await new Promise((r) => setTimeout(r, 4000));
    expect(await execute(carol, 'idlebank__echo', { message: 'three' })).toEqual({ ok: true, result: 'echo: three' });
    expect(openings(API_KEY)).toBe(before + 2);
  });
});
