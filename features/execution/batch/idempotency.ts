import { createHash } from 'node:crypto';
import type { Caller } from '../../../core/caller.js';
import { canonicalJson } from '../../../core/canonical-json.js';
import { MetaToolError } from '../../../core/errors.js';
import type { ToolCallRequest } from '../../../core/execution.js';
import type { ServiceContext } from '../../context.js';
import { recordBatchRequest } from '../store/batch-requests.js';

/**
 * The batch id of a request with a `requestId`: derived from tenant, user and id, so the same
 * request again joins or reads the batch it started. The request itself (its calls, bound to
 * tenant and user) is hashed and recorded with it: the same id with other calls is refused (409)
 * rather than silently answered with the first batch's results. `seen`: whether this request was
 * recorded before (`same`) or is recorded now (`new`).
 */
export async function idempotentBatchId(
  ctx: Pick<ServiceContext, 'pool'>,
  caller: Caller,
  calls: ToolCallRequest[],
  requestId: string,
): Promise<{ batchId: string; seen: 'new' | 'same' }> {
  const batchId = createHash('sha256').update(`${caller.tenantId}\0${caller.userId}\0${requestId}`).digest('hex').slice(0, 32);
  const requestHash = createHash('sha256')
    .update(canonicalJson({ tenantId: caller.tenantId, userId: caller.userId, calls }))
    .digest();
  const seen = await recordBatchRequest(ctx.pool, { batchId, tenantId: caller.tenantId, userId: caller.userId, requestHash });
  if (seen === 'different') {
    throw new MetaToolError(
      {
        error:
          'This requestId was already used for different calls. The same requestId only collects the batch it first named; ' +
          'send a new requestId to run new calls.',
      },
      409,
    );
  }
  return { batchId, seen };
}
