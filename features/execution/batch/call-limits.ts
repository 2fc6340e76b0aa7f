import type { Caller } from '../../../core/caller.js';
import { MetaToolError } from '../../../core/errors.js';
import type { ServiceContext } from '../../context.js';
import { spendCalls } from '../store/call-budgets.js';

/**
 * Counts work, not requests: a batch spends one unit per call from the caller's API key budget
 * (RATE_LIMIT_CALLS_PER_MINUTE) and from its tenant's (TENANT_RATE_LIMIT_CALLS_PER_MINUTE), in
 * Postgres so every server process shares them. Over either budget: 429 with Retry-After, and
 * nothing runs or is spent.
 */
export async function chargeCalls(ctx: Pick<ServiceContext, 'pool' | 'config'>, caller: Caller, calls: number): Promise<void> {
  const { config } = ctx;
  const perKey = config.RATE_LIMIT_CALLS_PER_MINUTE;
  const perTenant = config.TENANT_RATE_LIMIT_CALLS_PER_MINUTE;
  // Per key *and* user: an ordinary key has one user, while a remote source's key acts for each of
  // its delegates (finding 3), who must not draw from one another's budget.
  const keyBucket = caller.keyId ? `key:${caller.keyId}:${caller.userId}` : `user:${caller.userId}`;
  const largest = Math.min(perKey, perTenant);
  if (calls > largest) {
    throw new MetaToolError(
      { error: `This request carries ${calls} tool calls; at most ${largest} may run per minute. Split it into smaller batches.` },
      429,
    );
  }
  const spent = await spendCalls(
    ctx.pool,
    [
      { bucket: keyBucket, limit: perKey },
      { bucket: `tenant:${caller.tenantId}`, limit: perTenant },
    ],
    calls,
  );
  if (spent.ok) return;
  const whose = spent.bucket.startsWith('tenant:') ? 'your organisation' : 'this API key';
  throw new MetaToolError(
    {
      error: `Too many tool calls for ${whose}: ${spent.limit} per minute. Retry after ${spent.retryAfterSec} s.`,
      retryAfterSec: spent.retryAfterSec,
    },
    429,
    { 'Retry-After': String(spent.retryAfterSec) },
  );
}
