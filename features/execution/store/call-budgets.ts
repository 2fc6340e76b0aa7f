import type { Queryable } from '../../../platform/database/queryable.js';

interface Budget {
  /** e.g. `key:<api key id>`, `tenant:<tenant id>`. */
  bucket: string;
  /** Calls allowed per one-minute window. */
  limit: number;
}

type SpendResult = { ok: true } | { ok: false; bucket: string; limit: number; retryAfterSec: number };

/**
 * Spends `calls` from every budget in the current one-minute window, or from none: when one
 * would go over its limit, what was added is given back. The counters live in Postgres, so every
 * server process draws from the same budgets.
 */
export async function spendCalls(db: Queryable, budgets: Budget[], calls: number): Promise<SpendResult> {
  const buckets = budgets.map((b) => b.bucket);
  const { rows } = await db.query(
    `INSERT INTO call_budgets (bucket, window_start, calls)
     SELECT bucket, date_trunc('minute', now()), $2::int FROM unnest($1::text[]) AS bucket
     ON CONFLICT (bucket, window_start) DO UPDATE SET calls = call_budgets.calls + EXCLUDED.calls
     RETURNING bucket, calls, window_start,
       greatest(1, ceil(extract(epoch FROM window_start + interval '1 minute' - now())))::int AS retry_after`,
    [buckets, calls],
  );
  const over = rows
    .map((row) => ({ row, budget: budgets.find((b) => b.bucket === row.bucket)! }))
    .find(({ row, budget }) => row.calls > budget.limit);
  if (!over) return { ok: true };
  await db.query(`UPDATE call_budgets SET calls = calls - $2 WHERE bucket = ANY($1::text[]) AND window_start = $3`, [
    buckets,
    calls,
    over.row.window_start,
  ]);
  return { ok: false, bucket: over.budget.bucket, limit: over.budget.limit, retryAfterSec: over.row.retry_after };
}
