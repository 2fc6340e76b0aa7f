import { describe, expect, it } from 'vitest';
import { ResponseTooLarge } from '../../providers/sdk/http.js';
import { capResponse } from '../../providers/sdk/response-cap.js';

const body = (text: string) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
  });

describe('capResponse', () => {
  it('a declared length within the cap on an undecoded body is read as it is, with no counting stream', async () => {
    const res = new Response(body('{"a":1}'), { headers: { 'content-length': '7' } });
    expect(capResponse(res, 100)).toBe(res);
    expect(await res.json()).toEqual({ a: 1 });
  });

  it('a body with no declared length, a compressed one, or an unreadable length is counted', async () => {
    const long = 'x'.repeat(200);
    for (const headers of [{}, { 'content-length': '20', 'content-encoding': 'gzip' }, { 'content-length': '1, 1' }] as Record<
      string,
      string
    >[]) {
      const res = new Response(body(long), { headers });
      const capped = capResponse(res, 100);
      expect(capped).not.toBe(res);
      await expect(capped.text()).rejects.toBeInstanceOf(ResponseTooLarge);
    }
    const small = new Response(body('ok'), { headers: { 'content-length': '2', 'content-encoding': 'gzip' } });
    const counted = capResponse(small, 100);
    expect(counted).not.toBe(small);
    expect(await counted.text()).toBe('ok');
  });

  it('a declared length over the cap is refused before anything is read', () => {
    expect(() => capResponse(new Response(body('x'), { headers: { 'content-length': '101' } }), 100)).toThrow(ResponseTooLarge);
  });
});
