import {
  InvalidCursorError,
  type Jot,
  type JotOwner,
  type JotSearchHit,
  type JotSummary,
  type JotsStore,
} from '../providers/jots/store.js';
import { newId } from './ids.js';
import type { Queryable } from './queryable.js';

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

export async function getJot(db: Queryable, owner: JotOwner, id: string): Promise<Jot | undefined> {
  const { rows } = await db.query(`SELECT ${NOTE} FROM jots WHERE id = $1 AND tenant_id = $2 AND user_id = $3`, [
    id,
    owner.tenantId,
    owner.userId,
  ]);
  return rows[0] && toJot(rows[0]);
}

export async function listJots(
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

export async function searchJots(db: Queryable, owner: JotOwner, query: { text: string; limit: number }): Promise<JotSearchHit[]> {
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

export async function updateJot(
  db: Queryable,
  owner: JotOwner,
  id: string,
  patch: { title?: string; body?: string; tags?: string[] },
): Promise<Jot | undefined> {
  const { rows } = await db.query(
    `UPDATE jots SET title = coalesce($4, title), body = coalesce($5, body), tags = coalesce($6, tags), updated_at = now()
      WHERE id = $1 AND tenant_id = $2 AND user_id = $3
      RETURNING ${NOTE}`,
    [id, owner.tenantId, owner.userId, patch.title ?? null, patch.body ?? null, patch.tags ?? null],
  );
  return rows[0] && toJot(rows[0]);
}

export async function deleteJot(db: Queryable, owner: JotOwner, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM jots WHERE id = $1 AND tenant_id = $2 AND user_id = $3', [
    id,
    owner.tenantId,
    owner.userId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** The JotsStore the worker lends the jots tools. */
export function createJotsStore(db: Queryable): JotsStore {
  return {
    create: (owner, note) => createJot(db, owner, note),
    get: (owner, id) => getJot(db, owner, id),
    list: (owner, page) => listJots(db, owner, page),
    search: (owner, query) => searchJots(db, owner, query),
    update: (owner, id, patch) => updateJot(db, owner, id, patch),
    delete: (owner, id) => deleteJot(db, owner, id),
  };
}
