import type pg from 'pg';

/** A pool or a client inside a transaction: repositories accept either. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

/** Runs `fn` in a transaction on one client; rolls back on any error. */
export async function transaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** Runs `fn` inside a transaction: the caller's, when `db` is already a client in one, else a new one. */
export function inTransaction<T>(db: Queryable, fn: (client: Queryable) => Promise<T>): Promise<T> {
  return 'release' in db ? fn(db) : transaction(db as pg.Pool, fn);
}

/** Serialises writers of one logical key until the transaction ends. */
export async function lockKey(db: Queryable, key: string): Promise<void> {
  await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [key]);
}
