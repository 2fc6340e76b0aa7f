import { randomBytes } from 'node:crypto';
import type { ApprovalSummary } from '../../../core/approval-summary.js';
import type { ApprovalStatus } from '../../../core/approvals.js';
import type { CallerOwner } from '../../../core/caller.js';
import type { ToolCallRequest } from '../../../core/execution.js';
import type { CallOutcome } from '../../../core/stored-results.js';
import { Keyring } from '../../../platform/database/keyring.js';
import { asStorableJson, asStorableText, storableText } from '../../../platform/database/postgres-text.js';
import { inTransaction, type Queryable } from '../../../platform/database/queryable.js';

/**
 * Tool calls waiting for a person's approval. The call (arguments may hold secrets) and, once it
 * ran, its outcome are sealed with the keyring, bound by their AAD to the row, its tenant and its
 * requester; the summary a person sees is stored in the clear and holds no secret
 * (core/approval-summary.ts). Ids are 128 random bits: nothing about them can be guessed.
 */

export interface Approval {
  id: string;
  tenantId: string;
  requesterUserId: string;
  tool: string;
  accountId: string | null;
  accountLabel: string | null;
  /** `tenant`: the call runs on an organisation account (orgApproverRoles decide it). */
  accountScope: 'user' | 'tenant';
  summary: ApprovalSummary;
  status: ApprovalStatus;
  decidedBy: string | null;
  decidedAt: Date | null;
  reason: string | null;
  outcomeCode: string | null;
  createdAt: Date;
  expiresAt: Date;
}

const COLUMNS = `id, tenant_id AS "tenantId", requester_user_id AS "requesterUserId", tool, account_id AS "accountId",
  account_label AS "accountLabel", account_scope AS "accountScope", summary, status, decided_by AS "decidedBy", decided_at AS "decidedAt", reason,
  outcome_code AS "outcomeCode", created_at AS "createdAt", expires_at AS "expiresAt"`;

const newApprovalId = (): string => `apr_${randomBytes(16).toString('base64url')}`;

const callAad = (a: Pick<Approval, 'id' | 'tenantId' | 'requesterUserId'>) => `approvals:${a.id}:${a.tenantId}:${a.requesterUserId}:call`;
const outcomeAad = (a: Pick<Approval, 'id' | 'tenantId' | 'requesterUserId'>) =>
  `approvals:${a.id}:${a.tenantId}:${a.requesterUserId}:outcome`;

/** The longest reason a decision keeps. */
export const APPROVAL_REASON_MAX_CHARS = 500;

/**
 * Records a gated call, once per call key: a re-run of the same call (a local activity run again
 * after its workflow task was lost) gets the approval recorded the first time (`created: false`).
 */
export async function createApproval(
  db: Queryable,
  keyring: Keyring,
  input: {
    callKey: string;
    tenantId: string;
    requesterUserId: string;
    call: ToolCallRequest;
    accountId: string | null;
    accountLabel: string | null;
    accountScope: 'user' | 'tenant';
    summary: ApprovalSummary;
    /** The arguments in full, secrets replaced (core/approval-summary.ts redactedArguments): what the page shows. */
    shownArguments: Record<string, unknown>;
    ttlSec: number;
  },
): Promise<{ approval: Approval; created: boolean }> {
  const id = newApprovalId();
  const sealed = keyring.encrypt(JSON.stringify(input.call), callAad({ id, ...input }));
  const { rows } = await db.query(
    `INSERT INTO approvals (id, call_key, tenant_id, requester_user_id, tool, account_id, account_label, sealed_call, summary, expires_at, account_scope, shown_arguments)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() + make_interval(secs => $10), $11, $12)
     ON CONFLICT (call_key) DO NOTHING RETURNING ${COLUMNS}`,
    [
      id,
      input.callKey,
      input.tenantId,
      input.requesterUserId,
      input.call.tool,
      input.accountId,
      input.accountLabel,
      sealed,
      // What a person is shown: any U+0000 an agent put in the arguments shows as U+FFFD (the sealed call keeps it).
      asStorableJson(input.summary),
      input.ttlSec,
      input.accountScope,
      JSON.stringify(asStorableJson(input.shownArguments)),
    ],
  );
  if (rows[0]) return { approval: rows[0], created: true };
  return { approval: (await getApprovalByCallKey(db, input.callKey))!, created: false };
}

/** The arguments of an approval in full, secrets replaced: what its page shows (kept out of list queries: they may be large). */
export async function readShownArguments(db: Queryable, approvalId: string): Promise<Record<string, unknown>> {
  const { rows } = await db.query('SELECT shown_arguments FROM approvals WHERE id = $1', [approvalId]);
  return (rows[0]?.shown_arguments as Record<string, unknown> | undefined) ?? {};
}

/** Approvals one user may have waiting at once: each is a workflow that lives for up to its TTL. */
export const MAX_PENDING_APPROVALS_PER_USER = 100;

/** How many of the user's approvals are still undecided and unexpired. */
export async function countPendingApprovals(db: Queryable, owner: { tenantId: string; userId: string }): Promise<number> {
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM approvals WHERE tenant_id = $1 AND requester_user_id = $2 AND status = 'PENDING' AND expires_at > now()`,
    [owner.tenantId, owner.userId],
  );
  return rows[0].n;
}

/** The approval a call key's gated call recorded, if any. */
export async function getApprovalByCallKey(db: Queryable, callKey: string): Promise<Approval | undefined> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM approvals WHERE call_key = $1`, [callKey]);
  return rows[0];
}

export async function getApproval(db: Queryable, id: string): Promise<Approval | undefined> {
  if (!storableText(id)) return undefined; // an id from a URL; no stored one holds U+0000
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM approvals WHERE id = $1`, [id]);
  return rows[0];
}

/** The approval, only if this caller asked for it: others' ids look exactly like unknown ones. */
export async function getApprovalForRequester(db: Queryable, caller: CallerOwner, id: string): Promise<Approval | undefined> {
  // An id the agent quotes back may hold what no stored id can: unknown, like any other.
  if (!storableText(id)) return undefined;
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM approvals WHERE id = $1 AND tenant_id = $2 AND requester_user_id = $3`, [
    id,
    caller.tenantId,
    caller.userId,
  ]);
  return rows[0];
}

/** The call to run, opened from its sealed form. */
export async function openApprovedCall(db: Queryable, keyring: Keyring, approval: Approval): Promise<ToolCallRequest> {
  const { rows } = await db.query('SELECT sealed_call FROM approvals WHERE id = $1', [approval.id]);
  return JSON.parse(keyring.decrypt(rows[0].sealed_call, callAad(approval)));
}

/** The approved call's recorded outcome (undefined until it ran). */
export async function readApprovalOutcome(db: Queryable, keyring: Keyring, approval: Approval): Promise<CallOutcome | undefined> {
  const { rows } = await db.query('SELECT sealed_outcome FROM approvals WHERE id = $1', [approval.id]);
  const sealed = rows[0]?.sealed_outcome;
  return sealed ? JSON.parse(keyring.decrypt(sealed, outcomeAad(approval))) : undefined;
}

/** Pending approvals of a tenant, newest first: of one requester, or everyone's. Past their expiry they are not listed. */
export async function listPendingApprovals(db: Queryable, tenantId: string, requesterUserId?: string): Promise<Approval[]> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM approvals WHERE tenant_id = $1 AND status = 'PENDING' AND expires_at > now()
       AND ($2::text IS NULL OR requester_user_id = $2) ORDER BY created_at DESC LIMIT 200`,
    [tenantId, requesterUserId ?? null],
  );
  return rows;
}

export type Decision = 'APPROVED' | 'DENIED';

/**
 * Records a person's decision, if the approval is still PENDING and not past its expiry: under
 * the row's lock, so of two deciders racing exactly one decides (`decided: true`) and the other
 * reads the winner's decision. The decision's audit row (who, when, reason) is written in the
 * same transaction.
 */
export async function decideApproval(
  db: Queryable,
  input: { id: string; tenantId: string; decision: Decision; decidedBy: string; reason: string | null },
): Promise<{ decided: boolean; approval: Approval } | undefined> {
  if (!storableText(input.id)) return undefined; // no stored approval's id holds U+0000
  // A person's reason may carry U+0000, which Postgres text cannot hold: kept as U+FFFD, as audit rows keep it.
  const reason = input.reason === null ? null : asStorableText(input.reason);
  return inTransaction(db, async (tx) => {
    const { rows } = await tx.query(
      `SELECT ${COLUMNS}, expires_at <= now() AS "pastExpiry" FROM approvals WHERE id = $1 AND tenant_id = $2 FOR UPDATE`,
      [input.id, input.tenantId],
    );
    const found = rows[0] as (Approval & { pastExpiry: boolean }) | undefined;
    if (!found) return undefined;
    const { pastExpiry, ...current } = found;
    if (current.status !== 'PENDING' || pastExpiry) return { decided: false, approval: current };
    const updated = await tx.query(
      `UPDATE approvals SET status = $2, decided_by = $3, decided_at = now(), reason = $4 WHERE id = $1 RETURNING ${COLUMNS}`,
      [input.id, input.decision, input.decidedBy, reason],
    );
    const approval: Approval = updated.rows[0];
    await tx.query(
      `INSERT INTO audit_log (tenant_id, kind, actor_user_id, owner_user_id, account_id, tool, outcome, detail)
       VALUES ($1, 'approval_decision', $2, $3, $4, $5, $6, $7)`,
      [
        approval.tenantId,
        input.decidedBy,
        approval.requesterUserId,
        approval.accountId,
        approval.tool,
        input.decision,
        { approvalId: approval.id, reason },
      ],
    );
    return { decided: true, approval };
  });
}

/**
 * Ends an undecided approval as EXPIRED (its time ran out) or CANCELLED (its workflow was
 * cancelled); answers the status it has afterwards, so a decision that landed a moment earlier wins.
 */
export async function closeUndecidedApproval(
  db: Queryable,
  id: string,
  status: 'EXPIRED' | 'CANCELLED',
): Promise<ApprovalStatus | undefined> {
  await db.query(`UPDATE approvals SET status = $2, finished_at = now() WHERE id = $1 AND status = 'PENDING'`, [id, status]);
  return (await getApproval(db, id))?.status;
}

/**
 * An approval decided APPROVED whose workflow is gone (an operator terminated it): nothing will run
 * its call, so it is CANCELLED (waiters hear EXPIRED) rather than APPROVED with no result forever.
 * Only while its call has not started.
 */
export async function cancelApprovedWithoutRun(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE approvals SET status = 'CANCELLED', finished_at = now() WHERE id = $1 AND status = 'APPROVED'`, [id]);
}

/** Takes an APPROVED approval to RUNNING, once: false when it was taken before (the call must not run again). */
export async function claimApprovedRun(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query(`UPDATE approvals SET status = 'RUNNING' WHERE id = $1 AND status = 'APPROVED'`, [id]);
  return rowCount === 1;
}

/** Records the approved call's outcome, sealed, and the approval as DONE. */
export async function finishApproval(db: Queryable, keyring: Keyring, approval: Approval, outcome: CallOutcome): Promise<void> {
  const sealed = keyring.encrypt(JSON.stringify(outcome), outcomeAad(approval));
  await db.query(
    `UPDATE approvals SET status = 'DONE', sealed_outcome = $2, outcome_code = $3, finished_at = now() WHERE id = $1 AND status = 'RUNNING'`,
    [approval.id, sealed, outcome.ok ? 'ok' : outcome.error.code],
  );
}

/** Re-seals every approval's call and outcome under the active key (`keys reseal`); returns how many rows moved. */
export async function resealApprovals(db: Queryable, keyring: Keyring): Promise<number> {
  const { rows } = await db.query(
    `SELECT id, tenant_id AS "tenantId", requester_user_id AS "requesterUserId", sealed_call, sealed_outcome FROM approvals`,
  );
  const stale = (sealed: string | null) => sealed !== null && Keyring.keyIdOf(sealed) !== keyring.activeKeyId;
  let moved = 0;
  for (const row of rows) {
    if (!stale(row.sealed_call) && !stale(row.sealed_outcome)) continue;
    const reseal = (sealed: string | null, aad: string) => (sealed === null ? null : keyring.encrypt(keyring.decrypt(sealed, aad), aad));
    const { rowCount } = await db.query(
      `UPDATE approvals SET sealed_call = $4, sealed_outcome = $5
       WHERE id = $1 AND sealed_call = $2 AND sealed_outcome IS NOT DISTINCT FROM $3`,
      [row.id, row.sealed_call, row.sealed_outcome, reseal(row.sealed_call, callAad(row)), reseal(row.sealed_outcome, outcomeAad(row))],
    );
    moved += rowCount ?? 0;
  }
  return moved;
}
