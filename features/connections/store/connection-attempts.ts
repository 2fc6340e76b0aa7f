import { createHash } from 'node:crypto';
import type { CallerOwner } from '../../../core/caller.js';
import type { AttemptStatus } from '../../../core/connection.js';
import type { OAuthContext } from '../../../core/oauth-context.js';
import type { Keyring } from '../../../platform/database/keyring.js';
import { storableText } from '../../../platform/database/postgres-text.js';
import { inTransaction, lockKey, type Queryable } from '../../../platform/database/queryable.js';
import { newAttemptId } from '../../../platform/database/random-ids.js';

export interface ConnectionAttempt {
  id: string;
  tenantId: string;
  userId: string;
  integration: string;
  authMode: string;
  /** `tenant`: an administrator connects an organisation account; `user`: the user's own. */
  accountScope: 'user' | 'tenant';
  status: AttemptStatus;
  accountId: string | null;
  error: string | null;
  expiresAt: Date;
}

const COLUMNS = `id, tenant_id AS "tenantId", user_id AS "userId", integration, auth_mode AS "authMode",
  account_scope AS "accountScope", status, account_id AS "accountId", error, expires_at AS "expiresAt"`;

const hashState = (state: string): Buffer => createHash('sha256').update(state).digest();
const pkceAad = (attemptId: string) => `attempt:${attemptId}:pkce`;

/** What `createAttempt` did: the new attempt and the open ones it expired to make room, or why it could not. */
type CreatedAttempt = { attempt: ConnectionAttempt; displaced: string[] } | { full: { max: number; nextExpiresAt: Date } };

/**
 * Creates a PENDING attempt, keeping the user at `maxOpen` open attempts at most (PENDING and
 * before expiry) across every server process: the user's attempts are serialised by an advisory
 * lock. Past the bound the oldest attempts nobody opened in a browser are expired, as their timer
 * would: an agent that loops `connect` replaces its own unused links instead of locking the user
 * out until they expire. An attempt a person opened is never taken; when all are opened, nothing
 * is created and `full` says when the first of them expires.
 */
export async function createAttempt(
  db: Queryable,
  input: { tenantId: string; userId: string; integration: string; authMode: string; ttlSec: number; accountScope?: 'user' | 'tenant' },
  maxOpen: number,
): Promise<CreatedAttempt> {
  return inTransaction(db, async (tx) => {
    await lockKey(tx, `connection-attempts:${input.tenantId}:${input.userId}`);
    const { rows: open } = await tx.query<{ id: string; openedAt: Date | null; expiresAt: Date }>(
      `SELECT id, opened_at AS "openedAt", expires_at AS "expiresAt" FROM connection_attempts
        WHERE tenant_id = $1 AND user_id = $2 AND status = 'PENDING' AND expires_at > now() ORDER BY created_at, id`,
      [input.tenantId, input.userId],
    );
    const excess = open.length - maxOpen + 1;
    let displaced: string[] = [];
    if (excess > 0) {
      const unopened = open.filter((a) => a.openedAt === null).slice(0, excess);
      if (unopened.length < excess) {
        const nextExpiresAt = new Date(Math.min(...open.map((a) => a.expiresAt.getTime())));
        return { full: { max: maxOpen, nextExpiresAt } };
      }
      // Exactly what the attempt's own timer does (finishAttempt), so its link and waits answer EXPIRED.
      const { rows } = await tx.query<{ id: string }>(
        `UPDATE connection_attempts SET status = 'EXPIRED', completed_at = now(), pkce_sealed = NULL
          WHERE id = ANY($1) AND status = 'PENDING' RETURNING id`,
        [unopened.map((a) => a.id)],
      );
      displaced = rows.map((r) => r.id);
    }
    const { rows } = await tx.query(
      `INSERT INTO connection_attempts (id, tenant_id, user_id, integration, auth_mode, expires_at, account_scope)
       VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6), $7) RETURNING ${COLUMNS}`,
      [newAttemptId(), input.tenantId, input.userId, input.integration, input.authMode, input.ttlSec, input.accountScope ?? 'user'],
    );
    return { attempt: rows[0], displaced };
  });
}

/**
 * Records that the attempt's user opened its connect link in a signed-in browser (the first time
 * counts): from then on a newer attempt never displaces it (createAttempt).
 */
export async function markAttemptOpened(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE connection_attempts SET opened_at = now() WHERE id = $1 AND opened_at IS NULL AND status = 'PENDING'`, [id]);
}

/** The attempt, only if it belongs to this caller: others' ids look exactly like unknown ones. */
export async function getAttemptForCaller(db: Queryable, caller: CallerOwner, id: string): Promise<ConnectionAttempt | undefined> {
  // An id the agent quotes back may hold what no stored id can: unknown, like any other.
  if (!storableText(id)) return undefined;
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM connection_attempts WHERE id::text = $1 AND tenant_id = $2 AND user_id = $3`, [
    id,
    caller.tenantId,
    caller.userId,
  ]);
  return rows[0];
}

/** Forgets an attempt whose workflow never started: nothing can ever finish it. */
export async function deleteAttempt(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM connection_attempts WHERE id = $1', [id]);
}

export async function getAttempt(db: Queryable, id: string): Promise<ConnectionAttempt | undefined> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM connection_attempts WHERE id = $1`, [id]);
  return rows[0];
}

/**
 * Whether the attempt can still connect: PENDING and before its `expires_at`. The workflow's
 * timer marks an attempt EXPIRED, but every step checks the time itself, so an attempt whose
 * expiry has passed never connects, even if the timer has not fired yet.
 */
export const isOpenAttempt = (attempt: Pick<ConnectionAttempt, 'status' | 'expiresAt'>, now = Date.now()): boolean =>
  attempt.status === 'PENDING' && attempt.expiresAt.getTime() > now;

/**
 * Records the OAuth state (hashed), PKCE verifier (sealed) and, for discovered OAuth, what the
 * consent was asked with, for an open attempt, replacing the previous ones (a state handed out
 * before stops working), with the time it was handed out.
 */
export async function recordAuthorizationRequest(
  db: Queryable,
  keyring: Keyring,
  id: string,
  input: { state: string; codeVerifier: string; context?: OAuthContext },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE connection_attempts SET state_hash = $2, pkce_sealed = $3, oauth_context = $4, consent_requested_at = now()
      WHERE id = $1 AND status = 'PENDING' AND expires_at > now()`,
    [id, hashState(input.state), keyring.encrypt(input.codeVerifier, pkceAad(id)), input.context ? JSON.stringify(input.context) : null],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * How many of this user's open attempts (other than `exceptId`) handed a browser a consent URL in
 * the last `withinSec` seconds and have not come back: the connect link bounds it, which bounds the
 * browser-binding cookies a browser holds.
 */
export async function countOpenConsentRequests(
  db: Queryable,
  who: { tenantId: string; userId: string },
  exceptId: string,
  withinSec: number,
): Promise<number> {
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM connection_attempts
      WHERE tenant_id = $1 AND user_id = $2 AND id <> $3 AND status = 'PENDING' AND state_hash IS NOT NULL
        AND consent_requested_at > now() - make_interval(secs => $4) AND expires_at > now()`,
    [who.tenantId, who.userId, exceptId, withinSec],
  );
  return rows[0].n;
}

/**
 * Looks an attempt up by its OAuth state and consumes the state, so a replayed callback finds
 * nothing. Returns the PKCE verifier alongside, opened — none once the attempt is final (the
 * state is kept until then so a late callback can still be told the attempt expired).
 */
export async function consumeState(
  db: Queryable,
  keyring: Keyring,
  state: string,
): Promise<{ attempt: ConnectionAttempt; codeVerifier?: string; oauthContext?: OAuthContext } | undefined> {
  const { rows } = await db.query(
    `UPDATE connection_attempts a SET state_hash = NULL, pkce_sealed = NULL, oauth_context = NULL
       FROM (SELECT id, pkce_sealed, oauth_context FROM connection_attempts WHERE state_hash = $1 FOR UPDATE) old
      WHERE a.id = old.id
      RETURNING ${COLUMNS.replace(/\bid,/, 'a.id,')}, old.pkce_sealed AS "pkceSealed", old.oauth_context AS "oauthContext"`,
    [hashState(state)],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { pkceSealed, oauthContext, ...attempt } = row;
  return {
    attempt,
    codeVerifier: pkceSealed ? keyring.decrypt(pkceSealed, pkceAad(attempt.id)) : undefined,
    ...(oauthContext && { oauthContext }),
  };
}

/**
 * Moves a PENDING attempt to a final state. Only PENDING moves: an EXPIRED attempt stays
 * EXPIRED whatever arrives later. Returns the status the attempt has afterwards.
 */
export async function finishAttempt(
  db: Queryable,
  id: string,
  outcome: { status: Exclude<AttemptStatus, 'PENDING'>; accountId?: string; error?: string },
): Promise<AttemptStatus | undefined> {
  const { rows } = await db.query(
    `WITH moved AS (
       UPDATE connection_attempts SET status = $2, account_id = $3, error = $4, completed_at = now(),
              pkce_sealed = NULL
        WHERE id = $1 AND status = 'PENDING' RETURNING status)
     SELECT status FROM moved UNION ALL SELECT status FROM connection_attempts WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM moved)`,
    [id, outcome.status, outcome.accountId ?? null, outcome.error ?? null],
  );
  return rows[0]?.status;
}

/**
 * Locks an open attempt (PENDING and before its expiry) inside a transaction; every auth mode's
 * last step promotes it under this lock, so one whose expiry passed is never promoted.
 */
export async function lockPendingAttempt(db: Queryable, id: string): Promise<ConnectionAttempt | undefined> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM connection_attempts WHERE id = $1 AND status = 'PENDING' AND expires_at > now() FOR UPDATE`,
    [id],
  );
  return rows[0];
}
