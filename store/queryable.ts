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
