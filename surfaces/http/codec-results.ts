import type { Payload } from '@temporalio/common';
import { isStoredOutcome, outcomeOfStoredResult, type StoredOutcome } from '../../core/stored-results.js';
import type { ServiceContext } from '../../features/context.js';
import { readStoredResultsForOperator } from '../../features/results/store/stored-results.js';

/**
 * For Temporal UI: a tool batch's history carries references to stored results (its result, and
 * each local activity's marker), not the results. After the codec endpoint decoded the payloads,
 * this puts each stored result back — as the caller read it, cut at the result limit — next to its
 * reference (`stored`), so an operator still sees every call's result. Only a payload that is a
 * call's outcome or a batch's list of outcomes is looked at, never anything nested in a result.
 * A result past its retention is shown as `resultExpired: true`. Answers how many were put back.
 */
export async function resolveStoredResultsInPayloads(ctx: ServiceContext, payloads: Payload[]): Promise<number> {
  const decoded = payloads.map((payload) => {
    if (Buffer.from(payload.metadata?.encoding ?? []).toString() !== 'json/plain' || !payload.data) return undefined;
    try {
      const value: unknown = JSON.parse(Buffer.from(payload.data).toString('utf8'));
      const outcomes = (Array.isArray(value) ? value : [value]).filter(isStoredOutcome);
      return outcomes.length ? { value, outcomes } : undefined;
    } catch {
      return undefined;
    }
  });
  const refs = decoded.flatMap((d) => d?.outcomes.map((o) => o.stored.resultRef) ?? []);
  if (!refs.length) return 0;
  const stored = await readStoredResultsForOperator(ctx.pool, ctx.keyring, refs);
  const shown = (outcome: StoredOutcome) => {
    const found = stored.get(outcome.stored.resultRef);
    if (!found) return { ...outcome, resultExpired: true };
    return { ...outcomeOfStoredResult(found.json, outcome.stored, ctx.config.CONNECTIONS_TOOL_RESULT_MAX_BYTES), stored: outcome.stored };
  };
  decoded.forEach((d, i) => {
    if (!d) return;
    const value = Array.isArray(d.value) ? d.value.map((v) => (isStoredOutcome(v) ? shown(v) : v)) : shown(d.value as StoredOutcome);
    payloads[i] = { ...payloads[i], data: Buffer.from(JSON.stringify(value), 'utf8') };
  });
  return stored.size;
}
