import type { CallerOwner } from '../../core/caller.js';
import { failure } from '../../core/execution.js';
import { limitJsonText } from '../../core/result-limits.js';
import type { CallOutcome } from '../../core/stored-results.js';
import type { ActivityDeps } from '../activity-deps.js';
import { storeResult } from '../results/store/stored-results.js';

const DAY_MS = 24 * 60 * 60 * 1000;

interface DeliveryLimits {
  /** The spec's cut (CONNECTIONS_TOOL_RESULT_MAX_BYTES). */
  maxResultBytes: number;
  /** Results above this are stored and answered as a reference; Infinity carries every result inline. */
  inlineResultMaxBytes: number;
}

/**
 * What a successful call answers. A result within both limits is carried as is. A larger one is
 * sealed in Postgres first (features/results/store/stored-results.ts): when it is over the inline limit, the
 * workflow gets only the reference (the server resolves it before answering); when it is only
 * over the spec's cut, the cut result names the reference (`resultRef`, `totalBytes`) so the rest
 * can be read with read_result.
 */
export async function deliverResult(
  deps: Pick<ActivityDeps, 'pool' | 'keyring' | 'config' | 'logger'>,
  owner: CallerOwner & { tool: string },
  result: unknown,
  limits: DeliveryLimits,
): Promise<CallOutcome> {
  const json = JSON.stringify(result) ?? 'null';
  const bytes = Buffer.byteLength(json);
  if (bytes <= limits.maxResultBytes && bytes <= limits.inlineResultMaxBytes) return { ok: true, result };
  let stored: Awaited<ReturnType<typeof storeResult>>;
  try {
    const days = deps.config.RESULT_RETENTION_DAYS ?? deps.config.RETENTION_DAYS;
    stored = await storeResult(
      deps.pool,
      deps.keyring,
      owner,
      json,
      new Date(Date.now() + days * DAY_MS),
      deps.config.STORED_RESULTS_MAX_BYTES_PER_USER,
    );
  } catch (err) {
    deps.logger.error({ tool: owner.tool, err: (err as Error).message }, 'could not store a tool result');
    return failure(
      'outcome_unknown',
      `${owner.tool} ran, but Switchboard could not keep its result, so check before retrying; the server logged the details.`,
    );
  }
  if (bytes > limits.inlineResultMaxBytes) return { ok: true, stored };
  return { ok: true, ...limitJsonText(json, limits.maxResultBytes, () => result), ...stored };
}
