/**
 * Results kept outside Temporal's history (the claim-check pattern): a call whose result is
 * larger than a few KB answers the workflow with a reference to a sealed row in Postgres, and the
 * server puts the result back before anyone reads it. Pure types and arithmetic: safe in workflows.
 *
 * The bound: a tool batch records, per call, either an inline outcome of at most
 * `inlineResultLimit(calls, configured)` bytes of result JSON, a failure (a message of at most a few
 * hundred characters; `issues` name the call's own arguments), or a reference (~100 bytes). The
 * inline results of one batch together stay under max(RESULTS_INLINE_BUDGET_BYTES,
 * RESULT_INLINE_MAX_BYTES) — 64 KiB by default, 1 MiB at most (the config's ceiling) — and history
 * holds each twice (the call's local-activity marker and the batch's result). So a batch's history is
 * at most its input + ~0.75 KB of Temporal's own bookkeeping per call + twice that budget, whatever
 * the tools answer: with the defaults, about 500 KB at worst for the largest batch the API accepts
 * (500 calls), and under 400 KB when every result is maximal (test/integration/stored-results.test.ts
 * measures that case).
 */

import type { ToolOutcome } from './execution.js';
import { limitJsonText } from './result-limits.js';

/** Default of RESULT_INLINE_MAX_BYTES: results (as JSON) above this are stored, not carried by the workflow. */
export const RESULT_INLINE_MAX_BYTES = 2048;
/** Inline results of one batch together never pass this; a large batch stores smaller results. */
export const RESULTS_INLINE_BUDGET_BYTES = 64 * 1024;
/** However large the batch, results up to this size stay inline (a reference would not be much smaller). */
const INLINE_FLOOR_BYTES = 128;

/** A stored result as the workflow carries it: the reference and the size of the result's JSON text. */
export interface StoredResultRef {
  resultRef: string;
  totalBytes: number;
}

/** The outcome of a call whose result was stored: `ok` like any success, the result itself elsewhere. */
export interface StoredOutcome {
  ok: true;
  stored: StoredResultRef;
}

/** What the execute activity answers: an outcome, or (for a tool batch) a stored result's reference. */
export type CallOutcome = ToolOutcome | StoredOutcome;

export const isStoredOutcome = (value: unknown): value is StoredOutcome =>
  typeof value === 'object' &&
  value !== null &&
  (value as StoredOutcome).ok === true &&
  typeof (value as StoredOutcome).stored?.resultRef === 'string' &&
  typeof (value as StoredOutcome).stored?.totalBytes === 'number';

/**
 * The largest result (JSON bytes) a batch of `calls` carries inline: the configured limit, shrunk so
 * the batch's inline results stay within the budget (64 KiB, or the configured limit when an
 * operator set it higher).
 */
export function inlineResultLimit(calls: number, configured: number): number {
  const budget = Math.max(RESULTS_INLINE_BUDGET_BYTES, configured);
  return Math.max(INLINE_FLOOR_BYTES, Math.min(configured, Math.floor(budget / Math.max(1, calls))));
}

/**
 * The outcome the caller reads for a stored result: the spec's cut at `maxResultBytes` (with
 * `truncated` and `originalBytes`), plus the reference and total size when it was cut, so the
 * rest can be read with read_result.
 */
export function outcomeOfStoredResult(
  json: string,
  ref: StoredResultRef,
  maxResultBytes: number,
): { ok: true; result: unknown; truncated?: true; originalBytes?: number; resultRef?: string; totalBytes?: number } {
  // `json` is JSON.stringify's text of the result (deliverResult), so the cut is made on it directly.
  const limited = limitJsonText(json, maxResultBytes);
  return limited.truncated ? { ok: true, ...limited, resultRef: ref.resultRef, totalBytes: ref.totalBytes } : { ok: true, ...limited };
}

/**
 * The most bytes of result JSON an agent's workflow (switchboard/workflow) gets inline from one
 * call, whatever CONNECTIONS_TOOL_RESULT_MAX_BYTES says: a larger result is cut here and names its
 * resultRef (read on with readResult, whose slices are as large at most). A cut result is JSON text,
 * which its payload escapes again (a `"` in it takes two bytes), so one outcome stays under ~512 KB
 * — Temporal's payload warning — and far from its 2 MB limit, past which the activity's completion
 * is refused and the workflow gets an error instead of an outcome.
 */
export const WORKFLOW_RESULT_MAX_BYTES = 256 * 1024;

/** The result limit of a call whose outcome an agent's workflow carries inline. */
export const workflowResultLimit = (configured: number): number => Math.min(configured, WORKFLOW_RESULT_MAX_BYTES);
