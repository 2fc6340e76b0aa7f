import { afterEach, describe, expect, it, vi } from 'vitest';
import { TokenSigner } from '../../core/signed-tokens.js';

// TokenSigner remembers the tokens it verified (a burst of portal posts with one cookie would
// otherwise verify the same HMAC hundreds of times). Attacker: anyone holding a token — an expired
// one, one altered by a character, one of another kind, or one signed with another secret — trying
// to have the remembered verdict stand in for a check.

const SECRET = 'a'.repeat(64);

afterEach(() => {
  vi.useRealTimers();
});

describe('TokenSigner, verified tokens remembered', () => {
  it('answers a remembered token with its claims, a copy each time', async () => {
    const signer = new TokenSigner(SECRET);
    const token = await signer.sign('portal-session', { u: 'user_1', t: 'ten_1', v: '1' }, 60);
    const first = await signer.verify('portal-session', token);
    expect(first).toMatchObject({ u: 'user_1', t: 'ten_1', v: '1' });
    first!.u = 'user_evil';
    expect(await signer.verify('portal-session', token)).toMatchObject({ u: 'user_1' });
  });

  it('refuses a remembered token once it expired', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-12-04T12:00:00Z'));
    const signer = new TokenSigner(SECRET);
    const token = await signer.sign('portal-session', { u: 'user_1', t: 'ten_1', v: '1' }, 60);
    expect(await signer.verify('portal-session', token)).toBeDefined();
    vi.setSystemTime(new Date('2026-12-04T12:00:59Z'));
    expect(await signer.verify('portal-session', token)).toBeDefined();
    vi.setSystemTime(new Date('2026-12-04T12:01:00Z'));
    expect(await signer.verify('portal-session', token)).toBeUndefined();
    // …and stays refused (the remembered entry is gone, the full check refuses it too).
    expect(await signer.verify('portal-session', token)).toBeUndefined();
  });

  it('does not let a remembered token stand for another kind, an altered token or another secret', async () => {
    const signer = new TokenSigner(SECRET);
    const token = await signer.sign('portal-session', { u: 'user_1', t: 'ten_1', v: '1' }, 60);
    expect(await signer.verify('portal-session', token)).toBeDefined();
    expect(await signer.verify('connect-link', token)).toBeUndefined();
    const [head, body, mac] = token.split('.');
    const flipped = `${head}.${body}.${mac.slice(0, -2)}${mac.at(-2) === 'A' ? 'B' : 'A'}${mac.at(-1)}`;
    expect(await signer.verify('portal-session', flipped)).toBeUndefined();
    const otherBody = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), u: 'user_2' })).toString(
      'base64url',
    );
    expect(await signer.verify('portal-session', `${head}.${otherBody}.${mac}`)).toBeUndefined();
    expect(await new TokenSigner('b'.repeat(64)).verify('portal-session', token)).toBeUndefined();
  });
});

describe('TokenSigner.mac', () => {
  it('gives the same MAC for the same purpose and data, and another for another purpose', () => {
    const signer = new TokenSigner(SECRET);
    expect(signer.mac('portal-csrf', 'session')).toBe(signer.mac('portal-csrf', 'session'));
    expect(signer.mac('portal-csrf', 'session')).toBe(new TokenSigner(SECRET).mac('portal-csrf', 'session'));
    expect(signer.mac('portal-csrf', 'session')).not.toBe(signer.mac('other', 'session'));
  });
});
