import type { Queryable } from '../../../platform/database/queryable.js';

/**
 * Rows kept only for a while, and which of them are old enough to delete. Each prune statement
 * deletes at most `limit` rows, so a large backlog goes in short statements that never hold a
 * table for long.
 */
export const PRUNABLE = {
  /** Tool-call and other audit rows. */
  audit_log: { table: 'audit_log', key: 'id', where: 'created_at < $1' },
  /** Finished connection attempts, and pending ones long past their expiry. */
  connection_attempts: {
    table: 'connection_attempts',
    key: 'id',
    where: `created_at < $1 AND (status <> 'PENDING' OR expires_at < $1)`,
  },
  /** Portal sign-in links, used or not, long expired. */
  login_tokens: { table: 'login_tokens', key: 'token_hash', where: 'expires_at < $1' },
  /** Idempotency records of tool batches (kept as long as Temporal keeps the batches). */
  tool_batch_requests: { table: 'tool_batch_requests', key: 'batch_id', where: 'created_at < $1' },
  /** Tool results kept outside Temporal's history, once past their expiry (RESULT_RETENTION_DAYS). */
  stored_results: { table: 'stored_results', key: 'id', where: 'expires_at < $1' },
  /** MCP sessions past their idle expiry. */
  mcp_sessions: { table: 'mcp_sessions', key: 'id_hash', where: 'expires_at < $1' },
  /** MCP tasks past their TTL (their answers go with them). */
  mcp_tasks: { table: 'mcp_tasks', key: 'id_hash', where: 'expires_at < $1' },
  /**
   * Approvals, once settled (decided and run, denied, expired, cancelled) or long past their expiry:
   * the decision's audit row stays in audit_log for as long as audit rows do.
   */
  approvals: {
    table: 'approvals',
    key: 'id',
    where: `created_at < $1 AND (status IN ('DONE', 'DENIED', 'EXPIRED', 'CANCELLED') OR expires_at < $1)`,
  },
  /** Rate-limit windows (only the current minute is ever read). */
  call_budgets: { table: 'call_budgets', key: 'ctid', where: 'window_start < $1' },
} as const;

export type PrunableTable = keyof typeof PRUNABLE;

/** Deletes up to `limit` rows of `table` older than `before`; answers how many went. */
export async function pruneRows(db: Queryable, table: PrunableTable, before: Date, limit: number): Promise<number> {
  const { table: name, key, where } = PRUNABLE[table];
  const { rowCount } = await db.query(`DELETE FROM ${name} WHERE ${key} IN (SELECT ${key} FROM ${name} WHERE ${where} LIMIT $2)`, [
    before,
    limit,
  ]);
  return rowCount ?? 0;
}
