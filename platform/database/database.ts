import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import pg from 'pg';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

interface DatabaseOptions {
  url: string;
  /** Schema holding Switchboard's tables; tests use one per file. */
  schema?: string;
  poolMax?: number;
  onError?: (err: Error) => void;
}

export type Pool = pg.Pool;

/** One pool per process. `search_path` pins every query to Switchboard's schema. */
export function createPool(options: DatabaseOptions): pg.Pool {
  const schema = options.schema ?? 'public';
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolMax ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    options: `-c search_path=${schema}`,
    application_name: 'switchboard',
  });
  // An idle client's error (server restart, network) would otherwise crash the process.
  pool.on('error', (err) => options.onError?.(err));
  return pool;
}

/** Creates the database named in `url` when it does not exist yet (connects to `postgres`). */
export async function ensureDatabase(url: string): Promise<boolean> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!name) throw new Error('DATABASE_URL names no database');
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    } catch (err) {
      // Another process created it between the check and the create.
      if ((err as { code?: string }).code !== '42P04') throw err;
    }
    return true;
  } finally {
    await client.end();
  }
}

/** Applies pending SQL migrations under an advisory lock; running it again is a no-op. */
export async function migrate(options: { url: string; schema?: string; log?: (msg: string) => void }): Promise<string[]> {
  const applied = await runner({
    databaseUrl: options.url,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'switchboard_migrations',
    schema: options.schema ?? 'public',
    createSchema: true,
    checkOrder: true,
    // The worker and the server start together in production: the second waits for the first.
    advisoryLockMode: 'wait',
    log: options.log ?? (() => {}),
  });
  return applied.map((m) => m.name);
}
