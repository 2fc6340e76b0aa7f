import type { Queryable } from '../../../platform/database/queryable.js';

/**
 * Records what an idempotent batch was asked the first time its id is seen. `same` when the id
 * was recorded before with this request, `different` when with another one (the caller reused a
 * requestId for new calls), `new` the first time.
 */
export async function recordBatchRequest(
  db: Queryable,
  request: { batchId: string; tenantId: string; userId: string; requestHash: Buffer },
): Promise<'new' | 'same' | 'different'> {
  const inserted = await db.query(
    `INSERT INTO tool_batch_requests (batch_id, tenant_id, user_id, request_hash)
     VALUES ($1, $2, $3, $4) ON CONFLICT (batch_id) DO NOTHING`,
    [request.batchId, request.tenantId, request.userId, request.requestHash],
  );
  if (inserted.rowCount === 1) return 'new';
  // A second statement: it sees the row a concurrent first request just committed.
  const { rows } = await db.query('SELECT request_hash FROM tool_batch_requests WHERE batch_id = $1', [request.batchId]);
  return rows[0] && Buffer.from(rows[0].request_hash).equals(request.requestHash) ? 'same' : 'different';
}
