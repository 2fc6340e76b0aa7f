import { describe, expect, it } from 'vitest';
import { serviceOnlyEgressPolicy } from '../../platform/egress/egress-policy.js';

/** DNS for the test: public names resolve to a public address, `evil.news.example` to the metadata address. */
const lookup = async (host: string) => [{ address: host === 'evil.news.example' ? '169.254.169.254' : '93.184.216.34', family: 4 }];

describe('capture egress policy (finding 4)', () => {
  const hn = serviceOnlyEgressPolicy(
    { loginUrl: 'https://news.example/login', cookieDomain: 'news.example', loginUrlFromOperator: false },
    lookup,
  );

  it('finding 4: allows the service domain family at public addresses only', async () => {
    expect((await hn.resolve('news.example', 443)).ok).toBe(true);
    expect((await hn.resolve('cdn.news.example', 443)).ok).toBe(true);
    expect(await hn.resolve('other.example', 443)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('not one of the hosts of news.example'),
    });
    expect(await hn.resolve('169.254.169.254', 80)).toMatchObject({ ok: false });
    expect(await hn.resolve('127.0.0.1', 8233)).toMatchObject({ ok: false });
    // A service subdomain that resolves to an internal address is refused too.
    expect(await hn.resolve('evil.news.example', 80)).toMatchObject({ ok: false, reason: expect.stringContaining('metadata') });
  });

  it("finding 4: an operator's loopback login URL allows exactly its host and port; nothing else at that address", async () => {
    const local = serviceOnlyEgressPolicy(
      { loginUrl: 'http://127.0.0.1:4100/login', cookieDomain: '127.0.0.1', loginUrlFromOperator: true },
      lookup,
    );
    expect((await local.resolve('127.0.0.1', 4100)).ok).toBe(true);
    expect((await local.resolve('127.0.0.1', 8233)).ok).toBe(false); // Temporal UI
    expect((await local.resolve('localhost', 4100)).ok).toBe(false);
    expect((await local.resolve('0.0.1', 80)).ok).toBe(false);
    // The manifest's own login URL is not trusted at a private address.
    const manifest = serviceOnlyEgressPolicy(
      { loginUrl: 'http://10.0.0.5/login', cookieDomain: '10.0.0.5', loginUrlFromOperator: false },
      lookup,
    );
    expect((await manifest.resolve('10.0.0.5', 80)).ok).toBe(false);
  });
});
