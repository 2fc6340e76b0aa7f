import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';
import { newAssertionKeyPair, signAssertion, verifyAssertion } from '../../features/sources/assertion.js';
import { forwardedRequestId } from '../../features/sources/request-id.js';

const { privateKey, publicKey } = newAssertionKeyPair();
const entry = { name: 'us', url: 'https://us.example', apiKey: 'sbk_x', assertionKey: privateKey, tenants: ['ten_a'] };

function sourcesProblem(value: unknown): string | undefined {
  try {
    loadConfig({ SWITCHBOARD_SOURCES: JSON.stringify(value) }, []);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems.find((p) => p.variable === 'SWITCHBOARD_SOURCES')?.message;
  }
}

describe('finding 3: remote sources', () => {
  it('finding 3: a source entry must name its local tenants and carry an Ed25519 assertionKey', () => {
    expect(sourcesProblem([entry])).toBeUndefined();
    const { tenants: _, ...withoutTenants } = entry;
    expect(sourcesProblem([withoutTenants])).toMatch(/tenants/);
    expect(sourcesProblem([{ ...entry, tenants: [] }])).toMatch(/at least one local tenant/);
    const { assertionKey: __, ...withoutKey } = entry;
    expect(sourcesProblem([withoutKey])).toMatch(/assertionKey/);
    expect(sourcesProblem([{ ...entry, assertionKey: 'A'.repeat(64) }])).toMatch(/create-source-key/);
  });

  it('finding 3: an assertion verifies only with its own key', async () => {
    const token = await signAssertion(privateKey, { tenant: 'ten_a', user: 'usr_1' });
    expect(await verifyAssertion(publicKey, token)).toEqual({ tenant: 'ten_a', user: 'usr_1' });
    expect(await verifyAssertion(newAssertionKeyPair().publicKey, token)).toBeUndefined();
    expect(await verifyAssertion(publicKey, `${token.slice(0, -4)}AAAA`)).toBeUndefined();
    expect(await verifyAssertion(publicKey, 'garbage')).toBeUndefined();
  });

  it('finding 3: a forwarded requestId depends on the local tenant and user', () => {
    // Long enough that a random MAC cannot contain it by chance (a two-letter id did, about 1 run in 100).
    const id = 'retry-of-batch-0042';
    const a = forwardedRequestId(privateKey, { tenantId: 'ten_a', userId: 'usr_1', roles: [] }, id);
    expect(a).toBe(forwardedRequestId(privateKey, { tenantId: 'ten_a', userId: 'usr_1', roles: [] }, id));
    expect(a).not.toBe(forwardedRequestId(privateKey, { tenantId: 'ten_a', userId: 'usr_2', roles: [] }, id));
    expect(a).not.toBe(forwardedRequestId(privateKey, { tenantId: 'ten_b', userId: 'usr_1', roles: [] }, id));
    expect(a).not.toContain(id);
    expect(a).not.toContain('usr_1');
  });
});
