import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Keyring, KeyringError } from '../../store/keyring.js';

const k1 = randomBytes(32);
const k2 = randomBytes(32);

describe('keyring (AES-256-GCM)', () => {
  it('round-trips and never contains the plaintext', () => {
    const ring = new Keyring(new Map([['k1', k1]]));
    const sealed = ring.encrypt('gho_secret-token', 'account:t:a:credential');
    expect(sealed).not.toContain('gho_secret-token');
    expect(sealed.startsWith('v1.k1.')).toBe(true);
    expect(ring.decrypt(sealed, 'account:t:a:credential')).toBe('gho_secret-token');
  });

  it('rotates: the old key still decrypts, new writes use the active key', () => {
    const old = new Keyring(new Map([['k1', k1]]));
    const sealedOld = old.encrypt('before rotation', 'aad');
    const rotated = new Keyring(
      new Map([
        ['k1', k1],
        ['k2', k2],
      ]),
      'k2',
    );
    expect(rotated.decrypt(sealedOld, 'aad')).toBe('before rotation');
    const sealedNew = rotated.encrypt('after rotation', 'aad');
    expect(Keyring.keyIdOf(sealedNew)).toBe('k2');
    expect(() => old.decrypt(sealedNew, 'aad')).toThrow(/no key "k2"/);
  });

  it("rejects a tampered ciphertext, a truncated tag and another row's AAD", () => {
    const ring = new Keyring(new Map([['k1', k1]]));
    const sealed = ring.encrypt('value', 'row-1');
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3], 'base64url');
    body[0] ^= 1;
    const tampered = [...parts.slice(0, 3), body.toString('base64url'), parts[4]].join('.');
    expect(() => ring.decrypt(tampered, 'row-1')).toThrow(KeyringError);
    const shortTag = [...parts.slice(0, 4), Buffer.from(parts[4], 'base64url').subarray(0, 8).toString('base64url')].join('.');
    expect(() => ring.decrypt(shortTag, 'row-1')).toThrow(/truncated/);
    expect(() => ring.decrypt(sealed, 'row-2')).toThrow(/failed authentication/);
    expect(() => ring.decrypt('garbage', 'row-1')).toThrow(/not a sealed value/);
  });

  it('refuses an active key id that is not in the ring', () => {
    expect(() => new Keyring(new Map([['k1', k1]]), 'nope')).toThrow(/not in the keyring/);
  });
});
