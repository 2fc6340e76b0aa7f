import { Context } from '@temporalio/activity';
import type { ActivityDeps } from '../activity-deps.js';
import { PRUNABLE, type PrunableTable, pruneRows } from './store/retention.js';

export interface PruneInput {
  /** Audit rows, connection attempts and login links older than this go (RETENTION_DAYS). */
  retentionDays: number;
  /** Idempotency records go after this: never sooner than Temporal forgets the batches they name. */
  idempotencyDays: number;
  /** Rows per DELETE statement. */
  batchSize?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Rate-limit windows are one minute; an hour's worth is plenty for anyone looking. */
const BUDGET_WINDOW_KEEP_MS = 60 * 60 * 1000;

/**
 * The daily retention job's work (started by the `prune` schedule): deletes old rows table by
 * table, a batch per statement, heartbeating between batches so a long backlog survives a worker
 * restart (the next attempt carries on: every delete is by age, so re-running is harmless).
 */
export function createPruneActivities(deps: Pick<ActivityDeps, 'pool' | 'logger'>) {
  return {
    async pruneOldRows(input: PruneInput): Promise<Record<PrunableTable, number>> {
      const batchSize = input.batchSize ?? 1000;
      const now = Date.now();
      const cutoffs: Record<PrunableTable, Date> = {
        audit_log: new Date(now - input.retentionDays * DAY_MS),
        connection_attempts: new Date(now - input.retentionDays * DAY_MS),
        login_tokens: new Date(now - input.retentionDays * DAY_MS),
        tool_batch_requests: new Date(now - Math.max(input.idempotencyDays, input.retentionDays) * DAY_MS),
        stored_results: new Date(now),
        mcp_sessions: new Date(now),
        mcp_tasks: new Date(now),
        approvals: new Date(now - input.retentionDays * DAY_MS),
        call_budgets: new Date(now - BUDGET_WINDOW_KEEP_MS),
      };
      const deleted = {} as Record<PrunableTable, number>;
      for (const table of Object.keys(PRUNABLE) as PrunableTable[]) {
        deleted[table] = 0;
        for (;;) {
          const n = await pruneRows(deps.pool, table, cutoffs[table], batchSize);
          deleted[table] += n;
          heartbeat(deleted);
          if (n < batchSize) break;
        }
      }
      deps.logger.info({ deleted, retentionDays: input.retentionDays }, 'pruned old rows');
      return deleted;
    },
  };
}

export type PruneActivities = ReturnType<typeof createPruneActivities>;

function heartbeat(details: unknown): void {
  try {
    Context.current().heartbeat(details);
  } catch {
    // Called outside an activity (a test, the admin CLI): nothing to report to.
  }
}
