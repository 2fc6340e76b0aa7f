import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Connection } from '@temporalio/client';
import pg from 'pg';
import { SA, SEARCH_ATTRIBUTE_FLAGS } from '../../core/search-attributes.js';

/**
 * The Temporal server itself (`temporal-server start`, built from Go modules by scripts/setup.mjs)
 * on PostgreSQL persistence and visibility: what a cluster runs, started here for the cluster tests
 * and benchmarks. It is configured exactly as docker-compose.yml configures the official image: the
 * server's own embedded config template, filled in from the same environment variables
 * (TEMPORAL_SERVER_SETTINGS), the same dynamic config file, and the same setup script
 * (deploy/temporal/setup.sh) for the schema, the namespace and the search attributes.
 */

export const DEPLOY_TEMPORAL_DIR = join(import.meta.dirname, '..', '..', 'deploy', 'temporal');
export const DYNAMIC_CONFIG_FILE = join(DEPLOY_TEMPORAL_DIR, 'dynamicconfig.yaml');
export const SETUP_SCRIPT = join(DEPLOY_TEMPORAL_DIR, 'setup.sh');

/**
 * The server image's variables Switchboard sets, beyond where the database and the ports are
 * (test/unit/docker-compose.test.ts checks docker-compose.yml sets the same).
 */
export const TEMPORAL_SERVER_SETTINGS = {
  /** PostgreSQL 12+ for persistence and visibility alike (lib/pq). */
  DB: 'postgres12',
  /** Fixed for the life of a cluster's database: it can never change after the first start. */
  NUM_HISTORY_SHARDS: '4',
  /** No authorizer: the frontend is reachable on loopback or a private network only. */
  TEMPORAL_ALLOW_NO_AUTH: 'true',
  /**
   * PostgreSQL connections per service (frontend, history, matching and worker each hold a pool):
   * at most 4 × (10 + 5) here, which leaves room in PostgreSQL's default 100 for Switchboard's own.
   */
  SQL_MAX_CONNS: '10',
  SQL_MAX_IDLE_CONNS: '10',
  SQL_VIS_MAX_CONNS: '5',
  SQL_VIS_MAX_IDLE_CONNS: '5',
} as const;

/** What setup.sh's namespace step is given (docker-compose.yml's one-shot sets the same). */
export const TEMPORAL_NAMESPACE_SETTINGS = {
  /** How long Temporal keeps a closed run's history (what the UI shows and `npm run replay` reads). */
  NAMESPACE_RETENTION: '72h',
  SEARCH_ATTRIBUTES: SEARCH_ATTRIBUTE_FLAGS.join(' '),
} as const;

export interface TemporalServerOptions {
  /** The folder with `temporal-server` and `temporal-sql-tool` (scripts/setup.mjs ensureTemporalServer). */
  binDir: string;
  /** The Temporal CLI, for setup.sh's namespace step (the admin-tools image has the same). */
  cli: string;
  /** A URL of the PostgreSQL server with a user that may create databases (its database part is not used). */
  databaseUrl: string;
  /** Default `temporal_<random>` and `temporal_visibility_<random>`: created here, dropped on stop. */
  databases?: { main: string; visibility: string };
  namespace?: string;
  log?: (line: string) => void;
}

export interface TemporalServer {
  address: string;
  namespace: string;
  databases: { main: string; visibility: string };
  process: ChildProcess;
  stop(): Promise<void>;
}

/** The nine ports one server binds; membership ports are stored as PostgreSQL smallints, so all stay below 32768. */
const PORT_VARIABLES = [
  'FRONTEND_GRPC_PORT',
  'FRONTEND_HTTP_PORT',
  'FRONTEND_MEMBERSHIP_PORT',
  'HISTORY_GRPC_PORT',
  'HISTORY_MEMBERSHIP_PORT',
  'MATCHING_GRPC_PORT',
  'MATCHING_MEMBERSHIP_PORT',
  'WORKER_GRPC_PORT',
  'WORKER_MEMBERSHIP_PORT',
] as const;

/**
 * Sets up the databases, starts the server and resolves once its frontend answers and the namespace
 * and search attributes are in place. Stopping it drops the databases it created.
 */
export async function startTemporalServer(options: TemporalServerOptions): Promise<TemporalServer> {
  const suffix = randomBytes(4).toString('hex');
  const owned = !options.databases;
  const databases = options.databases ?? { main: `temporal_${suffix}`, visibility: `temporal_visibility_${suffix}` };
  const namespace = options.namespace ?? 'default';
  const db = new URL(options.databaseUrl);
  const ports = await freeLowPorts(PORT_VARIABLES.length);
  const env: Record<string, string> = {
    PATH: [options.binDir, cliDirectory(options.cli), process.env.PATH ?? ''].join(':'),
    HOME: homedir(),
    ...TEMPORAL_SERVER_SETTINGS,
    DB_PORT: db.port || '5432',
    POSTGRES_SEEDS: db.hostname,
    POSTGRES_USER: decodeURIComponent(db.username) || 'postgres',
    POSTGRES_PWD: decodeURIComponent(db.password),
    DBNAME: databases.main,
    VISIBILITY_DBNAME: databases.visibility,
    BIND_ON_IP: '127.0.0.1',
    DYNAMIC_CONFIG_FILE_PATH: DYNAMIC_CONFIG_FILE,
    LOG_LEVEL: 'warn',
    ...Object.fromEntries(PORT_VARIABLES.map((name, i) => [name, String(ports[i])])),
  };
  const address = `127.0.0.1:${ports[PORT_VARIABLES.indexOf('FRONTEND_GRPC_PORT')]}`;

  const dropDatabases = async () => {
    if (!owned) return;
    const admin = new pg.Client({ connectionString: adminUrl(db) });
    await admin.connect();
    try {
      for (const name of [databases.main, databases.visibility]) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  };

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid!, 'SIGTERM');
      const timer = setTimeout(() => child?.exitCode === null && child.signalCode === null && process.kill(-child.pid!, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await dropDatabases();
  };

  try {
    await runSetup('schema', env, options.log);
    // Its own process group, so a stop reaches it and Ctrl-C in a terminal does not.
    child = spawn(join(options.binDir, 'temporal-server'), ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const started = child;
    exited = new Promise((resolve) => started.once('exit', () => resolve()));
    const forward = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) if (line.trim()) options.log?.(line);
    };
    child.stdout?.on('data', forward);
    child.stderr?.on('data', forward);
    await waitForFrontend(address, started);
    await runSetup('namespace', { ...env, TEMPORAL_ADDRESS: address, NAMESPACE: namespace, ...TEMPORAL_NAMESPACE_SETTINGS }, options.log);
    await waitForSearchAttributes(address, namespace);
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
  return { address, namespace, databases, process: child, stop };
}

/** Runs one step of deploy/temporal/setup.sh; its output goes to `log`, and into the error should it fail. */
function runSetup(step: 'schema' | 'namespace', env: Record<string, string>, log?: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const setup = spawn('sh', [SETUP_SCRIPT, step], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk;
      for (const line of chunk.toString().split('\n')) if (line.trim()) log?.(line);
    };
    setup.stdout.on('data', collect);
    setup.stderr.on('data', collect);
    setup.once('error', reject);
    setup.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`deploy/temporal/setup.sh ${step} failed (exit ${code}):\n${output.slice(-4000)}`)),
    );
  });
}

async function waitForFrontend(address: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`temporal-server exited early (${child.exitCode ?? child.signalCode})`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`temporal-server did not answer on ${address} within 60 s: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** setup.sh registered them; the frontend lists them once its namespace cache has them. */
async function waitForSearchAttributes(address: string, namespace: string): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      if (Object.values(SA).every((key) => key.name in (customAttributes ?? {}))) return;
      if (Date.now() > deadline) throw new Error(`Switchboard's search attributes did not appear in namespace ${namespace} within 30 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await connection.close();
  }
}

/** A folder where setup.sh finds the CLI as `temporal`, the name the admin-tools image gives it. */
function cliDirectory(cli: string): string {
  if (basename(cli) === 'temporal') return dirname(cli);
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-temporal-cli-'));
  symlinkSync(cli, join(dir, 'temporal'));
  return dir;
}

/** The same server, its `postgres` maintenance database: where databases are created and dropped from. */
function adminUrl(db: URL): string {
  const url = new URL(db);
  url.pathname = '/postgres';
  return url.href;
}

/**
 * `count` distinct ports free on 127.0.0.1 between 20000 and 32767: below Linux's ephemeral range
 * (so no outgoing connection takes one meanwhile) and within PostgreSQL's smallint, where Temporal
 * stores membership ports.
 */
async function freeLowPorts(count: number): Promise<number[]> {
  const found = new Set<number>();
  for (let tries = 0; found.size < count; tries++) {
    if (tries > 1000) throw new Error('no free ports between 20000 and 32767 on 127.0.0.1');
    const port = 20_000 + Math.floor(Math.random() * 12_768);
    if (!found.has(port) && (await bindable(port))) found.add(port);
  }
  return [...found];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
