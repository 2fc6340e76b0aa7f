import { asStorableText } from '../../../platform/database/postgres-text.js';
import type { Queryable } from '../../../platform/database/queryable.js';
import { USER_AND_TENANT_SELECT, type UserAndTenant, userAndTenantOf } from '../../accounts/store/user-and-tenant.js';

interface ToolCallAudit {
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

export type ToolCallClaim = Pick<ToolCallAudit, 'callKey' | 'tenantId' | 'actorUserId' | 'tool' | 'argNames'>;

/**
 * Claims a call key before the call may reach its service: the audit row, written with no
 * outcome yet (a call in flight). False when the key was claimed before — this is a re-run of a
 * call that may already have reached the service, so it must not run again.
 */
export async function claimToolCall(db: Queryable, claim: ToolCallClaim): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO audit_log (call_key, tenant_id, kind, actor_user_id, tool, arg_names)
     VALUES ($1, $2, 'tool_call', $3, $4, $5)
     ON CONFLICT (call_key) WHERE call_key IS NOT NULL DO NOTHING`,
    [claim.callKey, claim.tenantId, claim.actorUserId, asStorableText(claim.tool), claim.argNames.map(asStorableText)],
  );
  return rowCount === 1;
}

/**
 * claimToolCall and getUserAndTenant(actor, tenant) in one statement (one round trip): the claim
 * is a data-modifying CTE, so it is written — and durable once the statement returns — whether or
 * not anything reads it; the user and tenant are read as getUserAndTenant reads them.
 */
export async function claimToolCallReadingCaller(db: Queryable, claim: ToolCallClaim): Promise<{ claimed: boolean } & UserAndTenant> {
  const { rows } = await db.query(
    `WITH claim AS (
       INSERT INTO audit_log (call_key, tenant_id, kind, actor_user_id, tool, arg_names)
       VALUES ($1, $2, 'tool_call', $3, $4, $5)
       ON CONFLICT (call_key) WHERE call_key IS NOT NULL DO NOTHING
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM claim)::int AS claimed, caller.*
       FROM (${USER_AND_TENANT_SELECT('$3', '$2')}) caller`,
    [claim.callKey, claim.tenantId, claim.actorUserId, asStorableText(claim.tool), claim.argNames.map(asStorableText)],
  );
  return { claimed: rows[0].claimed === 1, ...userAndTenantOf(rows[0]) };
}

/**
 * Writes the call's outcome once: a new row, or the outcome of a claimed one. A second write of
 * the same call key is ignored.
 */
export async function recordToolCall(db: Queryable, row: ToolCallAudit, releaseTicket?: string): Promise<void> {
  // With `releaseTicket`, the call's account slot is given back in the same statement (one round
  // trip; a data-modifying CTE always runs): features/execution/store/account-slots.ts leaveQueue's DELETE.
  const release = releaseTicket === undefined ? '' : 'WITH released AS (DELETE FROM account_call_slots WHERE ticket = $11) ';
  await db.query(
    `${release}INSERT INTO audit_log (call_key, tenant_id, kind, actor_user_id, owner_user_id, account_id, tool, outcome, error_code, duration_ms, arg_names)
     VALUES ($1, $2, 'tool_call', $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (call_key) WHERE call_key IS NOT NULL DO UPDATE
       SET owner_user_id = EXCLUDED.owner_user_id, account_id = EXCLUDED.account_id, outcome = EXCLUDED.outcome,
           error_code = EXCLUDED.error_code, duration_ms = EXCLUDED.duration_ms
       WHERE audit_log.outcome IS NULL`,
    [
      row.callKey,
      row.tenantId,
      row.actorUserId,
      row.ownerUserId,
      row.accountId,
      asStorableText(row.tool),
      row.outcome,
      row.errorCode,
      Math.round(row.durationMs),
      row.argNames.map(asStorableText),
      ...(releaseTicket === undefined ? [] : [releaseTicket]),
    ],
  );
}

/** How many of these calls have an outcome recorded (a batch's progress; index lookups on call_key). */
export async function countFinishedCalls(db: Queryable, callKeys: readonly string[]): Promise<number> {
  if (!callKeys.length) return 0;
  const { rows } = await db.query('SELECT count(*)::int AS n FROM audit_log WHERE call_key = ANY($1) AND outcome IS NOT NULL', [callKeys]);
  return rows[0].n;
}

/** An administrator's change of the tenant's settings (`detail`: what they set), for who-changed-what. */
export async function recordSettingsChange(
  db: Queryable,
  row: { tenantId: string; actorUserId: string; detail: Record<string, unknown> },
): Promise<void> {
  await db.query(`INSERT INTO audit_log (tenant_id, kind, actor_user_id, detail) VALUES ($1, 'settings_change', $2, $3)`, [
    row.tenantId,
    row.actorUserId,
    row.detail,
  ]);
}
