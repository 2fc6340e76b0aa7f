import {
  InvalidCursorError,
  type Jot,
  type JotOwner,
  type JotSearchHit,
  type JotSummary,
  JotsFullError,
  type JotsStore,
} from '../../core/ports/jots.js';
import { inTransaction, lockKey, type Queryable } from './queryable.js';
import { newId } from './random-ids.js';

/**
 * The jots built-in's notes in Postgres (`jots` table). Every statement is scoped to the owner's
 * tenant and user, so another user's note reads exactly like a missing one.
 */

const PREVIEW_CHARS = 100;
const NOTE = `id, title, body, tags, created_at AS "createdAt", updated_at AS "updatedAt"`;
const SUMMARY = `id, title, tags, left(body, ${PREVIEW_CHARS}) AS preview, created_at AS "createdAt", updated_at AS "updatedAt"`;
/** Microsecond text of created_at in UTC: the exact position a cursor resumes from. */
const POSITION = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position`;

type Row = Omit<Jot, 'createdAt' | 'updatedAt'> & { createdAt: Date; updatedAt: Date };
type SummaryRow = Omit<JotSummary, 'createdAt' | 'updatedAt'> & { createdAt: Date; updatedAt: Date };

const toJot = (row: Row): Jot => ({
  id: row.id,
  title: row.title,
  body: row.body,
  tags: row.tags,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const toSummary = (row: SummaryRow): JotSummary => ({
  id: row.id,
  title: row.title,
  tags: row.tags,
  preview: row.preview,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const encodeCursor = (position: string, id: string) => Buffer.from(JSON.stringify([position, id])).toString('base64url');

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(value[0]) &&
      typeof value[1] === 'string'
    ) {
      return [value[0], value[1]];
    }
  } catch {
    // fall through
  }
  throw new InvalidCursorError();
}

export async function createJot(db: Queryable, owner: JotOwner, note: { title: string; body: string; tags: string[] }): Promise<Jot> {
  const { rows } = await db.query(
    `INSERT INTO jots (id, tenant_id, user_id, title, body, tags) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${NOTE}`,
    [newId('jot'), owner.tenantId, owner.userId, note.title, note.body, note.tags],
  );
  return toJot(rows[0]);
}

async function getJot(db: Queryable, owner: JotOwner, id: string): Promise<Jot | undefined> {
  const { rows } = await db.query(`SELECT ${NOTE} FROM jots WHERE id = $1 AND tenant_id = $2 AND user_id = $3`, [
    id,
    owner.tenantId,
    owner.userId,
  ]);
  return rows[0] && toJot(rows[0]);
}

async function listJots(
  db: Queryable,
  owner: JotOwner,
  page: { limit: number; cursor?: string },
): Promise<{ notes: JotSummary[]; nextCursor: string | null }> {
  const after = page.cursor ? decodeCursor(page.cursor) : undefined;
  const { rows } = await db.query(
    `SELECT ${SUMMARY}, ${POSITION} FROM jots
      WHERE tenant_id = $1 AND user_id = $2 ${after ? `AND (created_at, id) < ($4::timestamptz, $5)` : ''}
      ORDER BY created_at DESC, id DESC
      LIMIT $3`,
    [owner.tenantId, owner.userId, page.limit + 1, ...(after ?? [])],
  );
  const more = rows.length > page.limit;
  const notes = rows.slice(0, page.limit);
  const last = notes[notes.length - 1];
  return { notes: notes.map(toSummary), nextCursor: more && last ? encodeCursor(last.position, last.id) : null };
}

async function searchJots(db: Queryable, owner: JotOwner, query: { text: string; limit: number }): Promise<JotSearchHit[]> {
  // Rank and cut first; only the rows returned pay for ts_headline.
  const { rows } = await db.query(
    `SELECT hit.*, ts_headline('english', jots.body, hit.query,
              'StartSel=«, StopSel=», MaxWords=30, MinWords=10, MaxFragments=1') AS snippet
       FROM (
         SELECT id, title, tags, left(body, ${PREVIEW_CHARS}) AS preview, created_at AS "createdAt", updated_at AS "updatedAt",
                ts_rank(search, q.query) AS rank, q.query
           FROM jots, websearch_to_tsquery('english', $3) AS q(query)
          WHERE tenant_id = $1 AND user_id = $2 AND search @@ q.query
          ORDER BY rank DESC, updated_at DESC, id
          LIMIT $4
       ) AS hit JOIN jots USING (id)
      ORDER BY hit.rank DESC, hit."updatedAt" DESC, hit.id`,
    [owner.tenantId, owner.userId, query.text, query.limit],
  );
  return rows.map((row) => ({ ...toSummary(row), rank: Math.round(row.rank * 1e4) / 1e4, snippet: row.snippet }));
}

/** What one user's notes may hold together (JOTS_MAX_NOTES_PER_USER, JOTS_MAX_BYTES_PER_USER). */
interface JotLimits {
  maxNotes: number;
  maxBytes: number;
}

/** A note's size as the bound counts it: the UTF-8 bytes of its title, body and tags. */
const SIZE = (t: string) => `(octet_length(${t}.title) + octet_length(${t}.body) + octet_length(array_to_string(${t}.tags, '')))`;
const sizeOf = (note: { title: string; body: string; tags: string[] }) =>
  Buffer.byteLength(note.title) + Buffer.byteLength(note.body) + Buffer.byteLength(note.tags.join(''));

const fullOfNotes = (limits: JotLimits) =>
  new JotsFullError(
    `Notes are full: a user keeps at most ${limits.maxNotes} notes (JOTS_MAX_NOTES_PER_USER). Nothing was saved; delete some with delete_note first.`,
  );
const fullOfBytes = (limits: Pick<JotLimits, 'maxBytes'>) =>
  new JotsFullError(
    `Notes are full: a user's notes hold at most ${limits.maxBytes} bytes of text together (JOTS_MAX_BYTES_PER_USER), and this would pass it. Nothing was saved; delete or shorten some notes first.`,
  );

/** The owner's note count and bytes; under the owner's lock, so two writes cannot both see room for one. */
async function usage(tx: Queryable, owner: JotOwner): Promise<{ notes: number; bytes: number }> {
  await lockKey(tx, `jots:${owner.tenantId}:${owner.userId}`);
  const { rows } = await tx.query(
    `SELECT count(*)::int AS notes, coalesce(sum(${SIZE('j')}), 0)::bigint AS bytes FROM jots j WHERE tenant_id = $1 AND user_id = $2`,
    [owner.tenantId, owner.userId],
  );
  return { notes: rows[0].notes, bytes: Number(rows[0].bytes) };
}

/** createJot within the owner's limits; JotsFullError (nothing saved) past either. */
function createJotWithin(db: Queryable, owner: JotOwner, note: { title: string; body: string; tags: string[] }, limits: JotLimits) {
  return inTransaction(db, async (tx) => {
    const used = await usage(tx, owner);
    if (used.notes >= limits.maxNotes) throw fullOfNotes(limits);
    if (used.bytes + sizeOf(note) > limits.maxBytes) throw fullOfBytes(limits);
    return createJot(tx, owner, note);
  });
}

async function updateJot(
  db: Queryable,
  owner: JotOwner,
  id: string,
  patch: { title?: string; body?: string; tags?: string[] },
  limits: Pick<JotLimits, 'maxBytes'>,
): Promise<Jot | undefined> {
  return inTransaction(db, async (tx) => {
    const used = await usage(tx, owner);
    const { rows } = await tx.query(
      `UPDATE jots j SET title = coalesce($4, title), body = coalesce($5, body), tags = coalesce($6, tags), updated_at = now()
        WHERE id = $1 AND tenant_id = $2 AND user_id = $3
        RETURNING ${NOTE}, (SELECT ${SIZE('o')} FROM jots o WHERE o.id = j.id) AS "oldSize"`,
      [id, owner.tenantId, owner.userId, patch.title ?? null, patch.body ?? null, patch.tags ?? null],
    );
    const row = rows[0];
    if (!row) return undefined;
    const { oldSize, ...updated } = row;
    // A note that grows must still fit; one that keeps its size or shrinks always may.
    const grows = sizeOf(updated) - Number(oldSize);
    if (grows > 0 && used.bytes + grows > limits.maxBytes) throw fullOfBytes(limits);
    return toJot(updated);
  });
}

async function deleteJot(db: Queryable, owner: JotOwner, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM jots WHERE id = $1 AND tenant_id = $2 AND user_id = $3', [
    id,
    owner.tenantId,
    owner.userId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** The JotsStore the worker lends the jots tools. */
export function createJotsStore(db: Queryable, limits: JotLimits): JotsStore {
  return {
    create: (owner, note) => createJotWithin(db, owner, note, limits),
    get: (owner, id) => getJot(db, owner, id),
    list: (owner, page) => listJots(db, owner, page),
    search: (owner, query) => searchJots(db, owner, query),
    update: (owner, id, patch) => updateJot(db, owner, id, patch, limits),
    delete: (owner, id) => deleteJot(db, owner, id),
  };
}
