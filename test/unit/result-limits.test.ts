import { describe, expect, it, vi } from 'vitest';
import { cutUtf8, ERROR_TEXT_SCAN_CHARS, limitResult, providerErrorText, REDACTED } from '../../core/result-limits.js';
import { outcomeOfStoredResult } from '../../core/stored-results.js';

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

describe('work bounded by the size of what is shown', () => {
  const token = 'gho_Ab1/Cd2+Ef3=Gh4?Ij5&Kl6_Mn7-Op8';

  it('reads only the first part of a long error body: what lies past it is never scanned nor shown', () => {
    // Each secret form is one scan of the text: a 10 MB error body would be scanned in full per form.
    const out = providerErrorText(`${' '.repeat(ERROR_TEXT_SCAN_CHARS)}words past the scanned part`, [token]);
    expect(out).not.toContain('words');
    expect(out).toBe('…');
  });

  it('never shows the first half of a secret that straddles the end of the scanned part', () => {
    for (const back of [1, 5, 10, token.length - 1]) {
      const text = `${' '.repeat(ERROR_TEXT_SCAN_CHARS - back)}${token} tail`;
      const out = providerErrorText(text, [token]);
      expect(out, `back ${back}`).not.toContain(token.slice(0, Math.min(back, 4)));
    }
    const cut = providerErrorText(`${'😀 '.repeat(ERROR_TEXT_SCAN_CHARS)}`, [token]);
    expect([...cut]).toHaveLength(300);
    expect(cut.endsWith('…')).toBe(true);
  });

  it('cuts a stored result from its JSON text, parsing only a result that fits', () => {
    const result = { items: Array.from({ length: 5000 }, (_, i) => ({ id: i, name: `é${i}` })) };
    const json = JSON.stringify(result);
    const ref = { resultRef: 'r1', totalBytes: Buffer.byteLength(json) };
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const cut = outcomeOfStoredResult(json, ref, 1000);
      expect(parse).not.toHaveBeenCalled();
      expect(cut).toEqual({ ok: true, ...limitResult(result, 1000), resultRef: 'r1', totalBytes: ref.totalBytes });
      expect(outcomeOfStoredResult(json, ref, json.length * 2)).toEqual({ ok: true, result });
    } finally {
      parse.mockRestore();
    }
  });
});

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
