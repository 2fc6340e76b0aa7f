import type { CallerOwner } from '../../core/caller.js';
import { selectPointers, sliceUtf8, utf8 } from '../../core/result-slices.js';
import type { Keyring } from '../../platform/database/keyring.js';
import type { Queryable } from '../../platform/database/queryable.js';
import { readStoredResult } from './store/stored-results.js';

/** The largest slice one read answers (bytes of UTF-8). */
export const READ_RESULT_MAX_BYTES = 256 * 1024;

export interface ReadResultRequest {
  resultRef: string;
  /** Byte offset into the (selected) JSON text; one inside a character moves back to its start. */
  offset?: number;
  /** At most READ_RESULT_MAX_BYTES. */
  maxBytes: number;
  /** RFC 6901 pointers: page over `{pointer: value}` of those that name something. */
  select?: readonly string[];
}

export interface ResultSliceAnswer {
  resultRef: string;
  /** The slice of JSON text. */
  result: string;
  offset: number;
  nextOffset: number | null;
  totalBytes: number;
  /** With `select`: the pointers that named nothing. */
  missing?: string[];
}

/**
 * A slice of one of the owner's stored results (read_result, and `readResult` for agent
 * workflows). Undefined for another user's, another tenant's, an expired and an unknown reference
 * alike; a ResultReadError for an offset past the end or a malformed pointer, only ever told to the owner.
 */
export async function readResultSlice(
  db: Queryable,
  keyring: Keyring,
  owner: CallerOwner,
  request: ReadResultRequest,
): Promise<ResultSliceAnswer | undefined> {
  const stored = await readStoredResult(db, keyring, owner, request.resultRef);
  if (!stored) return undefined;
  const maxBytes = Math.min(request.maxBytes, READ_RESULT_MAX_BYTES);
  const picked = request.select ? selectPointers(JSON.parse(stored.json), request.select) : undefined;
  const text = picked ? JSON.stringify(picked.selected) : stored.json;
  const slice = sliceUtf8(utf8(text), request.offset ?? 0, maxBytes);
  return {
    resultRef: request.resultRef,
    result: slice.text,
    offset: slice.offset,
    nextOffset: slice.nextOffset,
    totalBytes: slice.totalBytes,
    ...(picked?.missing.length ? { missing: picked.missing } : {}),
  };
}
