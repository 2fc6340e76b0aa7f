import { describe, expect, it } from 'vitest';
import { cutUtf8, limitResult, providerErrorText, REDACTED } from '../../core/result-limits.js';

/** The longest run of whole characters of `text` within `maxBytes` UTF-8 bytes, counted one character at a time. */
function expectedCut(text: string, maxBytes: number): string {
  let out = '';
  for (const char of text) {
    if (Buffer.byteLength(out + char) > maxBytes) break;
    out += char;
  }
  return out;
}

describe('cutting results at a character boundary', () => {
  it('cuts before a 2-, 3- or 4-byte character that straddles the limit, at every alignment', () => {
    for (const char of ['é', '€', '😀']) {
      for (let pad = 0; pad < 4; pad++) {
        const text = `${'a'.repeat(pad)}${char.repeat(40)}`;
        for (const max of [1, 2, 3, 4, 5, 17, 64]) {
          const cut = cutUtf8(text, max);
          expect(cut, `${char} pad ${pad} max ${max}`).toBe(expectedCut(text, max));
        }
      }
    }
  });

  it('names the exact byte size of the whole JSON text as originalBytes', () => {
    const result = { text: '😀'.repeat(30), n: 1 };
    const json = JSON.stringify(result);
    const limited = limitResult(result, 50);
    expect(limited).toEqual({ result: expectedCut(json, 50), truncated: true, originalBytes: Buffer.byteLength(json) });
    expect(limitResult(result, Buffer.byteLength(json))).toEqual({ result });
  });
});

describe('provider error text', () => {
  const token = 'gho_Ab1/Cd2+Ef3=Gh4?Ij5&Kl6_Mn7-Op8';

  it('is at most 300 characters, cut between characters (an emoji is never halved)', () => {
    const text = `${'a'.repeat(298)}😀${'b'.repeat(10)}`;
    const out = providerErrorText(text, []);
    expect(out).toBe(`${'a'.repeat(298)}😀…`);
    expect([...out]).toHaveLength(300);
    expect(providerErrorText('x'.repeat(300), [])).toBe('x'.repeat(300));
  });

  it('leaves no part of a token that straddles the 300-character cut', () => {
    for (const start of [280, 290, 295, 299, 300]) {
      const out = providerErrorText(`${'x'.repeat(start)}${token} and more`, [token]);
      expect(out).not.toContain(token.slice(0, 4));
      expect([...out].length).toBeLessThanOrEqual(300);
    }
  });

  it('replaces a token sent back URL-encoded (either case), base64 or base64url, at any byte offset', () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const b64url = (s: string) => Buffer.from(s).toString('base64url');
    for (const echoed of [
      encodeURIComponent(token),
      encodeURIComponent(token).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
      b64(token),
      b64(`u:${token}`),
      b64(`us:${token}`),
      b64(`user:${token}`),
      b64url(`x-access-token:${token}`),
      b64url(token),
    ]) {
      const out = providerErrorText(`refused credential ${echoed} (see docs)`, [token]);
      expect(out, echoed).toContain(REDACTED);
      // Whatever is left of the encoded text no longer decodes to the token, nor to most of it.
      for (const run of out.match(/[A-Za-z0-9+/_%=-]{6,}/g) ?? []) {
        const decoded = [decodeURIComponentSafe(run), Buffer.from(run, 'base64').toString('latin1')];
        for (const text of decoded) expect(text, echoed).not.toContain(token.slice(4, 20));
      }
      expect(out).not.toContain(echoed);
    }
  });

  it('replaces every secret it is given: the refresh token and an API key too', () => {
    const out = providerErrorText('access gho_access_1234 refresh ghr_refresh_5678 key lin_api_key_9012', [
      'gho_access_1234',
      'ghr_refresh_5678',
      'lin_api_key_9012',
    ]);
    expect(out).toBe(`access ${REDACTED} refresh ${REDACTED} key ${REDACTED}`);
  });
});

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
