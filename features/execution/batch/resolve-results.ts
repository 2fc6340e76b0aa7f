import type { Caller } from '../../../core/caller.js';
import { failure, type ToolCallRequest, type ToolOutcome } from '../../../core/execution.js';
import { type CallOutcome, isStoredOutcome, outcomeOfStoredResult } from '../../../core/stored-results.js';
import type { ServiceContext } from '../../context.js';
import { readStoredResults } from '../../results/store/stored-results.js';

/**
 * A tool batch's outcomes as the caller reads them: each stored result (a reference in the
 * workflow's answer) read back from Postgres and cut at the result limit as the spec says, so the
 * answer has the shape it had when results were carried inline.
 */
export async function resolveStoredResults(
  ctx: ServiceContext,
  caller: Caller,
  calls: readonly ToolCallRequest[],
  outcomes: readonly CallOutcome[],
): Promise<ToolOutcome[]> {
  const refs = outcomes.filter(isStoredOutcome).map((o) => o.stored.resultRef);
  const stored = refs.length ? await readStoredResults(ctx.pool, ctx.keyring, caller, refs) : new Map();
  return outcomes.map((outcome, i) => {
    if (!isStoredOutcome(outcome)) return outcome;
    const found = stored.get(outcome.stored.resultRef);
    // Only after RESULT_RETENTION_DAYS (a batch collected by its requestId that late).
    if (!found) return failure('tool_failed', `${calls[i]?.tool ?? 'The call'} ran, but its stored result has expired.`);
    return outcomeOfStoredResult(found.json, outcome.stored, ctx.config.CONNECTIONS_TOOL_RESULT_MAX_BYTES);
  });
}
