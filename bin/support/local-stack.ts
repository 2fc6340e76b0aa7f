import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { childOutput } from './child-output.js';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** What `npm start` printed, read the way a person reads it off the terminal. */
export interface Printed {
  /** The `export SB=… KEY=… SB_USER=…` line README's first session starts from, exactly as printed. */
  exportLine: string;
  baseUrl: string;
  apiKey: string;
  userId: string;
  /** The one-time portal sign-in link. */
  signInLink: string;
  /** Temporal UI's workflow list. */
  temporalUi: string;
  /** The demo integration's origin. */
  demoOrigin: string;
}

/**
 * `npm start` as a child process, on free ports, with a data directory and database schema of its
 * own that `stop()` removes: what README's first-session test and `npm run docs:screenshots` run a
 * first session against. It runs bin/start.ts, which is what scripts/start.mjs runs once the
 * dependencies and the Temporal CLI are in place (the script itself may run `npm install`, which a
 * test must never do to a checkout).
 */
export interface LocalStack {
  printed: Printed;
  ports: { http: number; temporal: number; ui: number; metrics: number; demo: number };
  dataDir: string;
  /** What a shell next to this stack needs that a person's shell gets from the defaults. */
  shellEnv: Record<string, string>;
  /** Everything printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the first match of `pattern` in what is printed from `from` on (an index into output()). */
  waitFor(pattern: RegExp, options?: { from?: number; timeoutMs?: number }): Promise<RegExpExecArray>;
  /** Ctrl-C, as a person stops it; resolves with its exit code once everything it started is gone. */
  stop(): Promise<number | null>;
}

export interface LocalStackOptions {
  databaseUrl: string;
  /** The Temporal CLI (else bin/start.ts's own search: TEMPORAL_CLI, the cache, PATH). */
  temporalCli?: string;
  env?: Record<string, string>;
  /** Use npm start's own ports where they are free (pictures then show localhost:3000), else free ones. */
  preferDefaultPorts?: boolean;
}

const DEFAULT_PORTS = { http: 3000, temporal: 7233, ui: 8233, metrics: 9464, demo: 3100 };

/** `wanted` when nothing listens there, else a port the system picks. */
async function freePort(wanted = 0): Promise<number> {
  const server = createServer();
  const bound = await new Promise<boolean>((done) => {
    server.once('error', () => done(false));
    server.listen(wanted, '127.0.0.1', () => done(true));
  });
  if (!bound) return freePort();
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const ports = await pickPorts(options.preferDefaultPorts);
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-local-'));
  const schema = `s_${randomBytes(5).toString('hex')}`;
  // Its own process group, so that Ctrl-C (SIGINT to the group) reaches it as it reaches npm start.
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], {
    cwd: ROOT,
    env: startEnv(options, ports, dataDir, schema),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { output, waitFor } = childOutput(child, 'npm start');
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));

  const removeData = async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await dropSchema(options.databaseUrl, schema);
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGINT');
    const code = await exited;
    await removeData();
    return code;
  };

  try {
    await waitFor(/Press Ctrl-C to stop everything/);
  } catch (err) {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    await exited;
    await removeData();
    throw err;
  }
  return {
    printed: readPrinted(output()),
    ports,
    dataDir,
    shellEnv: {
      SWITCHBOARD_DATA_DIR: dataDir,
      DATABASE_URL: options.databaseUrl,
      DATABASE_SCHEMA: schema,
      TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`,
    },
    output,
    waitFor,
    stop,
  };
}

/** A port for each of npm start's listeners, one after the other (so no two get the same). */
async function pickPorts(preferDefaultPorts: boolean | undefined): Promise<LocalStack['ports']> {
  const pick = (name: keyof typeof DEFAULT_PORTS) => freePort(preferDefaultPorts ? DEFAULT_PORTS[name] : 0);
  return {
    http: await pick('http'),
    temporal: await pick('temporal'),
    ui: await pick('ui'),
    metrics: await pick('metrics'),
    demo: await pick('demo'),
  };
}

/**
 * npm start's environment: this stack's ports, data directory and schema over this process's own;
 * the settings a person's shell does not have by default are dropped unless the options set them,
 * so the stack starts as it does for a person.
 */
function startEnv(options: LocalStackOptions, ports: LocalStack['ports'], dataDir: string, schema: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(ports.http),
    TEMPORAL_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.ui),
    METRICS_PORT: String(ports.metrics),
    DEMO_PORT: String(ports.demo),
    SWITCHBOARD_DATA_DIR: dataDir,
    DATABASE_URL: options.databaseUrl,
    DATABASE_SCHEMA: schema,
    LOG_LEVEL: 'warn',
    ...(options.temporalCli && { TEMPORAL_CLI: options.temporalCli }),
    ...options.env,
  };
  for (const name of ['TEMPORAL_ADDRESS', 'PUBLIC_BASE_URL', 'NODE_ENV', 'DEMO_INTEGRATION', 'ENCRYPTION_KEYS', 'PORTAL_SIGNING_SECRET'])
    if (!options.env?.[name]) delete env[name];
  return env;
}

/** The stack's schema, gone with everything in it. */
async function dropSchema(databaseUrl: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
}

/** The export line and the labelled links npm start printed once it was ready. */
function readPrinted(output: string): Printed {
  const line = (label: string) => new RegExp(`${label}\\s+(\\S+)`).exec(output)?.[1] ?? '';
  const exportLine = /^ *(export SB=\S+ KEY=\S+ SB_USER=\S+)$/m.exec(output)?.[1] ?? '';
  const vars = Object.fromEntries([...exportLine.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]]));
  return {
    exportLine,
    baseUrl: vars.SB,
    apiKey: vars.KEY,
    userId: vars.SB_USER,
    signInLink: line('Portal sign-in'),
    temporalUi: line('Temporal UI'),
    demoOrigin: line('Demo integration'),
  };
}
