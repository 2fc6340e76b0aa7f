import { randomBytes } from 'node:crypto';
import type { ServerContext } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Caller } from '../../core/caller.js';
import { TokenSigner } from '../../core/signed-tokens.js';
import {
  authInfoFor,
  callDigest,
  type FlowState,
  REQUEST_STATE_TTL_SEC,
  requestStateSeal,
} from '../../surfaces/mcp/2026-07-28/request-state.js';

// The requestState of a 2026-07-28 call that waits on a person: signed, expiring, bound to the
// caller and the method (the integration tests drive the same through the v2 client).

const alice: Caller = { tenantId: 'ten_a', userId: 'usr_alice', roles: ['member'] };
const mallory: Caller = { tenantId: 'ten_a', userId: 'usr_mallory', roles: ['member'] };
const contextOf = (caller: Caller, method = 'tools/call') =>
  ({ mcpReq: { method }, http: { authInfo: authInfoFor(caller) } }) as unknown as ServerContext;

const state: FlowState = {
  v: 1,
  tool: 'execute_tools',
  call: callDigest({ executions: [{ tool: 'github_list_repos' }] }),
  requestId: 'mcp-round:1',
  steps: [
    {
      kind: 'connect',
      key: 'connect:github',
      id: 'att_1',
      integration: 'github',
      url: 'http://sb.test/connect/github?t=x',
      answer: 'asked',
    },
  ],
};

afterEach(() => vi.useRealTimers());

describe('requestState', () => {
  const seal = requestStateSeal({ signer: new TokenSigner(randomBytes(32).toString('hex')) });

  it("reads back for its caller, and for no one else, no other method, no other server's key", async () => {
    const sealed = (await seal.mint(state, contextOf(alice)))!;
    expect(await seal.verify(sealed, contextOf(alice))).toEqual(state);
    await expect(seal.verify(sealed, contextOf(mallory))).rejects.toThrow();
    await expect(seal.verify(sealed, contextOf(alice, 'prompts/get'))).rejects.toThrow();
    const elsewhere = requestStateSeal({ signer: new TokenSigner(randomBytes(32).toString('hex')) });
    await expect(elsewhere.verify(sealed, contextOf(alice))).rejects.toThrow();
  });

  it('an edited state fails its signature, even one whose payload still parses', async () => {
    const sealed = (await seal.mint(state, contextOf(alice)))!;
    const [version, body, mac] = sealed.split('.');
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
    payload.p.requestId = 'someone-elses-request';
    const edited = `${version}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
    await expect(seal.verify(edited, contextOf(alice))).rejects.toThrow();
  });

  it('expires after its TTL', async () => {
    vi.useFakeTimers({ now: Date.now(), toFake: ['Date'] });
    const sealed = (await seal.mint(state, contextOf(alice)))!;
    vi.setSystemTime(Date.now() + (REQUEST_STATE_TTL_SEC - 5) * 1000);
    expect(await seal.verify(sealed, contextOf(alice))).toEqual(state);
    vi.setSystemTime(Date.now() + 10_000);
    await expect(seal.verify(sealed, contextOf(alice))).rejects.toThrow();
  });

  it('refuses to mint more steps, or longer links, than its bounds', async () => {
    const steps = Array.from({ length: 9 }, (_, i) => ({ ...state.steps[0], key: `connect:x${i}`, integration: `x${i}` }));
    await expect(seal.mint({ ...state, steps }, contextOf(alice))).rejects.toThrow();
    const long = [{ ...state.steps[0], url: `http://sb.test/${'a'.repeat(1_000)}` }];
    await expect(seal.mint({ ...state, steps: long }, contextOf(alice))).rejects.toThrow();
    await expect(seal.verify('x'.repeat(30_000), contextOf(alice))).rejects.toThrow();
  });
});
