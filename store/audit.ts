import type { Queryable } from './queryable.js';

export interface ToolCallAudit {
  callKey: string;
  tenantId: string;
  actorUserId: string;
  /** NULL for an organisation account: the actor is the real user and there is no owner. */
  ownerUserId: string | null;
  accountId: string | null;
  tool: string;
  outcome: 'ok' | 'error';
  errorCode: string | null;
  durationMs: number;
  /** Argument names only; values are never recorded. */
  argNames: string[];
}

/** Writes the call's audit row once; a second write of the same call key is ignored. */
export async function recordToolCall(db: Queryable, row: ToolCallAudit): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (call_key, tenant_id, kind, actor_user_id, owner_user_id, account_id, tool, outcome, error_code, duration_ms, arg_names)
     VALUES ($1, $2, 'tool_call', $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (call_key) WHERE call_key IS NOT NULL DO NOTHING`,
    [
      row.callKey,
      row.tenantId,
      row.actorUserId,
      row.ownerUserId,
      row.accountId,
      row.tool,
      row.outcome,
      row.errorCode,
      Math.round(row.durationMs),
      row.argNames,
    ],
  );
}
