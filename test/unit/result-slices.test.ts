import { describe, expect, it } from 'vitest';
import { parsePointer, ResultReadError, resolvePointer, selectPointers, sliceUtf8, utf8 } from '../../core/result-slices.js';
import { inlineResultLimit, isStoredOutcome, outcomeOfStoredResult, RESULTS_INLINE_BUDGET_BYTES } from '../../core/stored-results.js';

describe('sliceUtf8', () => {
  const text = JSON.stringify({ body: 'aé€😀'.repeat(50) });
  const bytes = utf8(text);

  it('pages over the whole text on character boundaries, for every slice size', () => {
    for (const maxBytes of [1, 2, 3, 4, 5, 7, 64, 1000, bytes.length + 10]) {
      let offset: number | null = 0;
      let joined = '';
      while (offset !== null) {
        const slice = sliceUtf8(bytes, offset, maxBytes);
        expect(slice.offset).toBe(offset);
        expect(slice.text).not.toContain('\uFFFD');
        // A slice smaller than one character still carries that character, so paging advances.
        expect(utf8(slice.text).length).toBeLessThanOrEqual(Math.max(maxBytes, 4));
        expect(slice.totalBytes).toBe(bytes.length);
        joined += slice.text;
        offset = slice.nextOffset;
      }
      expect(joined).toBe(text);
    }
  });

  it('moves an offset inside a character back to its start', () => {
    const euro = utf8('x€y');
    expect(sliceUtf8(euro, 2, 10)).toEqual({ text: '€y', offset: 1, nextOffset: null, totalBytes: 5 });
    expect(sliceUtf8(euro, 3, 10).offset).toBe(1);
    expect(sliceUtf8(euro, 4, 10)).toEqual({ text: 'y', offset: 4, nextOffset: null, totalBytes: 5 });
  });

  it('answers an empty last slice at the end, and refuses an offset past it', () => {
    expect(sliceUtf8(utf8('abc'), 3, 10)).toEqual({ text: '', offset: 3, nextOffset: null, totalBytes: 3 });
    expect(() => sliceUtf8(utf8('abc'), 4, 10)).toThrow(new ResultReadError('offset 4 is past the end of the result (totalBytes 3).'));
  });
});

describe('JSON pointers (RFC 6901)', () => {
  const doc = { 'a/b': 1, 'm~n': 2, items: [{ title: 'x' }, { title: 'y' }], '': 3, nil: null };

  it('resolves escaped tokens, array indexes and the whole document', () => {
    expect(resolvePointer(doc, '/a~1b')).toEqual({ found: true, value: 1 });
    expect(resolvePointer(doc, '/m~0n')).toEqual({ found: true, value: 2 });
    expect(resolvePointer(doc, '/items/1/title')).toEqual({ found: true, value: 'y' });
    expect(resolvePointer(doc, '/')).toEqual({ found: true, value: 3 });
    expect(resolvePointer(doc, '/nil')).toEqual({ found: true, value: null });
    expect(resolvePointer(doc, '')).toEqual({ found: true, value: doc });
  });

  it('finds nothing for out-of-range or non-canonical indexes and inherited properties', () => {
    for (const pointer of [
      '/items/2',
      '/items/01',
      '/items/-',
      '/items/x',
      '/__proto__',
      '/constructor',
      '/items/0/title/0/x',
      '/toString',
    ])
      expect(resolvePointer(doc, pointer)).toEqual({ found: false });
  });

  it('refuses malformed pointers with a message naming them', () => {
    expect(() => parsePointer('items')).toThrow(/"items" is not a JSON pointer/);
    expect(() => parsePointer('/a~2')).toThrow(/"~" not followed by 0 or 1/);
    expect(() => parsePointer('/a~')).toThrow(/"~" not followed by 0 or 1/);
  });

  it('selects by pointer and lists the pointers that name nothing', () => {
    expect(selectPointers(doc, ['/items/0/title', '/nope', '/__proto__'])).toEqual({
      selected: { '/items/0/title': 'x' },
      missing: ['/nope', '/__proto__'],
    });
    expect(() => selectPointers(doc, ['/ok', 'bad'])).toThrow(ResultReadError);
  });
});

describe('stored results', () => {
  it('keeps the inline results of any batch within the budget, and small results always inline', () => {
    expect(inlineResultLimit(1, 2048)).toBe(2048);
    expect(inlineResultLimit(32, 2048)).toBe(2048);
    expect(inlineResultLimit(80, 2048)).toBe(819);
    expect(inlineResultLimit(500, 2048) * 500).toBeLessThanOrEqual(RESULTS_INLINE_BUDGET_BYTES);
    // An operator who raises the limit raises the budget with it (at most 1 MiB, the config's ceiling).
    expect(inlineResultLimit(8, 1024 * 1024)).toBe(128 * 1024);
    expect(inlineResultLimit(500, 1024 * 1024) * 500).toBeLessThanOrEqual(1024 * 1024);
    expect(inlineResultLimit(100_000, 2048)).toBe(128);
  });

  it('answers a stored result the way the spec cuts it, with the reference when cut', () => {
    const json = JSON.stringify({ body: '€'.repeat(100) });
    const ref = { resultRef: 'res_x', totalBytes: Buffer.byteLength(json) };
    expect(outcomeOfStoredResult(json, ref, 10_000)).toEqual({ ok: true, result: { body: '€'.repeat(100) } });
    const cut = outcomeOfStoredResult(json, ref, 100);
    expect(cut).toMatchObject({ ok: true, truncated: true, originalBytes: ref.totalBytes, resultRef: 'res_x', totalBytes: ref.totalBytes });
    expect(Buffer.byteLength(cut.result as string)).toBeLessThanOrEqual(100);
    expect(cut.result).not.toContain('\uFFFD');
  });

  it('recognises only the reference shape as a stored outcome', () => {
    expect(isStoredOutcome({ ok: true, stored: { resultRef: 'res_a', totalBytes: 3 } })).toBe(true);
    for (const v of [
      null,
      'x',
      { ok: true, result: 1 },
      { ok: false, stored: { resultRef: 'a', totalBytes: 1 } },
      { ok: true, stored: { resultRef: 1 } },
    ])
      expect(isStoredOutcome(v)).toBe(false);
  });
});
