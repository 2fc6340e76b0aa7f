import type { Queryable } from './queryable.js';

/** One round trip to the database: resolves when it answers (the readiness probe). */
export async function pingDatabase(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}
