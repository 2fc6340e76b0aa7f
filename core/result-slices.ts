/**
 * Reading a stored result piece by piece (read_result): byte slices of its JSON text cut on
 * UTF-8 character boundaries, and RFC 6901 JSON pointers to pick parts of it. Pure code.
 */

export class ResultReadError extends Error {}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const isContinuation = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80;

interface ResultSlice {
  /** The text from `offset`, at most `maxBytes` bytes of UTF-8, never half a character. */
  text: string;
  /** Where the slice starts: the offset asked for, moved back to the start of its character if it fell inside one. */
  offset: number;
  /** Where the next slice starts; null at the end. */
  nextOffset: number | null;
  totalBytes: number;
}

/**
 * The slice of `bytes` starting at byte `offset` of at most `maxBytes` bytes. An offset inside a
 * character is moved back to that character's start (nothing is skipped, and the slice says where
 * it really starts). A slice too short to hold the next character (maxBytes < 4) still returns
 * that one character, so paging always advances.
 */
export function sliceUtf8(bytes: Uint8Array, offset: number, maxBytes: number): ResultSlice {
  const totalBytes = bytes.length;
  if (offset > totalBytes) throw new ResultReadError(`offset ${offset} is past the end of the result (totalBytes ${totalBytes}).`);
  let start = offset;
  while (start > 0 && isContinuation(bytes[start])) start--;
  let end = Math.min(totalBytes, start + maxBytes);
  while (end > start && end < totalBytes && isContinuation(bytes[end])) end--;
  if (end === start && start < totalBytes) {
    end = start + 1;
    while (end < totalBytes && isContinuation(bytes[end])) end++;
  }
  return { text: decoder.decode(bytes.subarray(start, end)), offset: start, nextOffset: end < totalBytes ? end : null, totalBytes };
}

export const utf8 = (text: string): Uint8Array => encoder.encode(text);

/** The reference tokens of an RFC 6901 pointer ("" is the whole document). */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/'))
    throw new ResultReadError(`select: "${clip(pointer)}" is not a JSON pointer (it must be "" or start with "/").`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => {
      if (/~(?![01])/.test(token)) throw new ResultReadError(`select: "${clip(pointer)}" has a "~" not followed by 0 or 1 (RFC 6901).`);
      return token.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/** The value `pointer` names in `document`, or `found: false`. Only own properties count (no `__proto__` games). */
export function resolvePointer(document: unknown, pointer: string): { found: true; value: unknown } | { found: false } {
  let current = document;
  for (const token of parsePointer(pointer)) {
    if (Array.isArray(current)) {
      if (!ARRAY_INDEX.test(token) || Number(token) >= current.length) return { found: false };
      current = current[Number(token)];
    } else if (current !== null && typeof current === 'object' && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}

/** The parts of `document` the pointers name, keyed by pointer, and the pointers that name nothing. */
export function selectPointers(document: unknown, pointers: readonly string[]): { selected: Record<string, unknown>; missing: string[] } {
  for (const pointer of pointers) parsePointer(pointer);
  const selected: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const pointer of pointers) {
    const hit = resolvePointer(document, pointer);
    if (hit.found) Object.defineProperty(selected, pointer, { value: hit.value, enumerable: true, writable: true, configurable: true });
    else missing.push(pointer);
  }
  return { selected, missing };
}

const clip = (text: string) => (text.length > 60 ? `${text.slice(0, 59)}…` : text);
