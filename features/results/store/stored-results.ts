import { randomBytes } from 'node:crypto';
import type { CallerOwner } from '../../../core/caller.js';
import type { StoredResultRef } from '../../../core/stored-results.js';
import type { Keyring } from '../../../platform/database/keyring.js';
import { storableText } from '../../../platform/database/postgres-text.js';
import { inTransaction, type Queryable } from '../../../platform/database/queryable.js';

/**
 * Tool results kept in Postgres instead of Temporal's history (core/stored-results.ts), sealed
 * with the keyring's `result` key. A reference is 192 random bits: nothing about it can be
 * guessed or counted. The AAD binds the ciphertext to its id, tenant and user, so a row whose
 * owner columns were changed no longer opens. Expired rows never answer, pruned or not.
 */

const REF_PREFIX = 'res_';

const aadOf = (id: string, tenantId: string, userId: string) => `stored_results:${id}:${tenantId}:${userId}`;

interface StoredResult extends StoredResultRef {
  /** The result's JSON text, as the tool answered it (after redaction, before any cut). */
  json: string;
}

/** Seconds a new stored result is safe from its user's bound: a batch answers within it unless it runs longer. */
const STORED_RESULT_GRACE_SEC = 15 * 60;

/**
 * Seals `json` for its user until `expiresAt`; answers the reference. A user's stored results hold
 * at most `maxBytesPerUser` together (STORED_RESULTS_MAX_BYTES_PER_USER): past it their oldest
 * results go (a reference to one then reads like an expired one), never one stored in the last
 * STORED_RESULT_GRACE_SEC: that one may still be on its way to the caller (a batch's answer reads
 * its results back only once the batch ends).
 */
export async function storeResult(
  db: Queryable,
  keyring: Keyring,
  owner: CallerOwner,
  json: string,
  expiresAt: Date,
  maxBytesPerUser: number,
): Promise<StoredResultRef> {
  const id = `${REF_PREFIX}${randomBytes(24).toString('base64url')}`;
  const plaintext = Buffer.from(json, 'utf8');
  const { keyId, data } = keyring.encryptBytes(plaintext, aadOf(id, owner.tenantId, owner.userId), 'result');
  await inTransaction(db, async (tx) => {
    await tx.query(
      `INSERT INTO stored_results (id, tenant_id, user_id, total_bytes, key_id, sealed, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [id, owner.tenantId, owner.userId, plaintext.length, keyId, data, expiresAt],
    );
    // The insert's trigger counted it and holds the user's usage row until commit (migration 033).
    const { rows } = await tx.query('SELECT bytes FROM stored_result_usage WHERE tenant_id = $1 AND user_id = $2', [
      owner.tenantId,
      owner.userId,
    ]);
    const excess = Number(rows[0]?.bytes ?? 0) - maxBytesPerUser;
    if (excess <= 0) return;
    // Oldest first until enough has gone. Expired rows are the daily prune's: taking them here could
    // deadlock with it (it holds them, then wants the usage row this holds).
    await tx.query(
      `DELETE FROM stored_results WHERE id IN (
         SELECT id FROM (
           SELECT id, total_bytes, sum(total_bytes) OVER (ORDER BY created_at, id) AS upto FROM stored_results
            WHERE tenant_id = $1 AND user_id = $2 AND expires_at > now()
              AND created_at < now() - make_interval(secs => $4)) older
          WHERE upto - total_bytes < $3)`,
      [owner.tenantId, owner.userId, excess, STORED_RESULT_GRACE_SEC],
    );
  });
  return { resultRef: id, totalBytes: plaintext.length };
}

interface Row {
  id: string;
  tenant_id: string;
  user_id: string;
  total_bytes: number;
  key_id: string;
  sealed: Buffer;
}

const open = (keyring: Keyring, row: Row): StoredResult => ({
  resultRef: row.id,
  totalBytes: row.total_bytes,
  json: keyring.decryptBytes(row.key_id, row.sealed, aadOf(row.id, row.tenant_id, row.user_id), 'result').toString('utf8'),
});

/**
 * Unexpired results among `refs`, by reference: the owner's only, or (owner `any`) whoever's.
 * Another user's, another tenant's, an expired and a made-up reference are all simply absent.
 */
async function readUnexpired(
  db: Queryable,
  keyring: Keyring,
  owner: CallerOwner | 'any',
  refs: readonly string[],
): Promise<Map<string, StoredResult>> {
  const wanted = refs.filter((r) => r.startsWith(REF_PREFIX) && r.length <= 100 && storableText(r));
  if (!wanted.length) return new Map();
  const byOwner = owner === 'any' ? '' : 'AND tenant_id = $2 AND user_id = $3';
  const { rows } = await db.query<Row>(
    `SELECT id, tenant_id, user_id, total_bytes, key_id, sealed FROM stored_results WHERE id = ANY($1) AND expires_at > now() ${byOwner}`,
    owner === 'any' ? [wanted] : [wanted, owner.tenantId, owner.userId],
  );
  return new Map(rows.map((row) => [row.id, open(keyring, row)]));
}

/** The owner's unexpired results among `refs` (callers cannot tell a foreign, expired or unknown one apart: all absent). */
export const readStoredResults = (db: Queryable, keyring: Keyring, owner: CallerOwner, refs: readonly string[]) =>
  readUnexpired(db, keyring, owner, refs);

/** One of the owner's results, or undefined (see readStoredResults). */
export async function readStoredResult(
  db: Queryable,
  keyring: Keyring,
  owner: CallerOwner,
  ref: string,
): Promise<StoredResult | undefined> {
  return (await readUnexpired(db, keyring, owner, [ref])).get(ref);
}

/**
 * Unexpired results among `refs`, whoever owns them: for the codec endpoint, whose callers (codec
 * operators) may read every tenant's payloads already.
 */
export const readStoredResultsForOperator = (db: Queryable, keyring: Keyring, refs: readonly string[]) =>
  readUnexpired(db, keyring, 'any', refs);
