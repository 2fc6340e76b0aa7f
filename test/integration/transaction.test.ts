import { afterAll, describe, expect, inject, it } from 'vitest';
import { createPool } from '../../platform/database/database.js';
import { transaction } from '../../platform/database/queryable.js';

/** platform/database/queryable.ts `transaction`: a connection lost between two of its queries. */
const pool = createPool({ url: inject('testDatabaseUrl'), poolMax: 2 });
const admin = createPool({ url: inject('testDatabaseUrl'), poolMax: 1 });

afterAll(async () => {
  await pool.end();
  await admin.end();
});

describe('transaction', () => {
  it('a backend terminated while the transaction waits between queries fails the transaction, not the process', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const running = transaction(pool, async (db) => {
        const { rows } = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        // What a restart or an administrator does to this connection while the transaction is between queries.
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await db.query('SELECT 1');
      });
      await expect(running).rejects.toThrow();
      expect(uncaught).toEqual([]);
      // The broken client was discarded: the pool still answers.
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
