import type pg from 'pg';

/** A pool or a client inside a transaction: repositories accept either. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

/**
 * Runs `fn` in a transaction on one client; rolls back on any error. A checked-out client has no
 * listener of the pool's: a server going away between two of its queries (a restart, a terminated
 * backend) would emit 'error' with nobody listening and end the process. The error is kept here
 * instead: the next query fails, the transaction rolls back, and the broken client is discarded.
 */
export async function transaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const keepError = (err: Error) => {
    broken = err;
  };
  client.on('error', keepError);
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackErr: Error) => {
      broken ??= rollbackErr;
    });
    throw err;
  } finally {
    client.off('error', keepError);
    client.release(broken);
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
