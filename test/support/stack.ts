import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Worker } from '@temporalio/worker';
import { listen, type RunningServer } from '../../bin/support/listen.js';
import { configFromEnv, createWorker, openServices, type Services } from '../../bin/support/services.js';
import { type DemoOptions, type RunningDemo, startDemo } from '../../demo/index.js';
import { createLogger } from '../../server/logger.js';
import { createApiKey } from '../../store/api-keys.js';
import { createLoginToken } from '../../store/login-tokens.js';
import { createTenant } from '../../store/tenants.js';
import { createUser, type User } from '../../store/users.js';
import { freePort } from './ports.js';

export const TEST_KEY = `test1:${randomBytes(32).toString('base64')}`;

/** Captures every log line of a test stack, so tests can search them for leaked secrets. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: string, done: () => void) {
    this.lines.push(chunk.toString());
    done();
  }
  text(): string {
    return this.lines.join('');
  }
}

export interface Stack {
  services: Services;
  worker?: Worker;
  workerRun?: Promise<void>;
  http: RunningServer;
  baseUrl: string;
  schema: string;
  logs: LogCapture;
  env: Record<string, string>;
  /** The demo integration, when the stack was started with `demo` (as `npm start` serves it). */
  demo?: RunningDemo;
  /** The demo's lines for the terminal (sign-ins, consents, tokens, refreshes, revocations). */
  demoLog: string[];
  /** Starts (or restarts) the in-process worker. */
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A whole Switchboard on real parts (no vitest here, so benchmarks use it too): its own Postgres schema, its own task
 * queue on the shared Temporal dev server, a worker and an HTTP server on a free port.
 */
export interface Infra {
  temporalAddress: string;
  databaseUrl: string;
  workflowBundlePath: string;
}

export interface StackOptions {
  env?: Record<string, string>;
  worker?: boolean;
  /** Serve the demo integration and register it, as `npm start` does (`accessTokenTtlSec` shortens its tokens, `stateFile` keeps its state). */
  demo?: boolean | Pick<DemoOptions, 'accessTokenTtlSec' | 'stateFile'>;
}

export async function startStackOn(infra: Infra, options: StackOptions = {}): Promise<Stack> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const port = options.env?.PORT ? Number(options.env.PORT) : await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    PORT: String(port),
    PUBLIC_BASE_URL: baseUrl,
    DATABASE_URL: infra.databaseUrl,
    DATABASE_SCHEMA: schema,
    TEMPORAL_ADDRESS: infra.temporalAddress,
    TEMPORAL_TASK_QUEUE: `switchboard-${schema}`,
    ENCRYPTION_KEYS: TEST_KEY,
    PORTAL_SIGNING_SECRET: randomBytes(32).toString('hex'),
    // Debug by default so leak checks read every line; benchmarks pass their own level.
    LOG_LEVEL: 'debug',
    ...options.env,
  };
  const config = configFromEnv(env);
  const logs = new LogCapture();
  const demoLog: string[] = [];
  const demo = options.demo
    ? await startDemo({ port: 0, log: (line) => demoLog.push(line), ...(typeof options.demo === 'object' && options.demo) })
    : undefined;
  const services = await openServices(config, createLogger({ level: config.LOG_LEVEL, destination: logs }), {
    demo: demo?.integration,
  });
  const http = await listen(services, port);
  const stack: Stack = {
    services,
    http,
    baseUrl,
    schema,
    logs,
    env,
    demo,
    demoLog,
    async startWorker() {
      stack.worker = await createWorker(services, { workflowBundle: { codePath: infra.workflowBundlePath } });
      stack.workerRun = stack.worker.run();
    },
    async stopWorker() {
      const { worker, workerRun } = stack;
      if (!worker) return;
      stack.worker = undefined;
      // A worker may already be stopping by itself (a signal); shutting it down twice throws.
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await workerRun?.catch(() => {});
    },
    async close() {
      await stack.stopWorker();
      await http.close();
      await services.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await services.close();
      await demo?.close();
    },
  };
  if (options.worker !== false) await stack.startWorker();
  return stack;
}

export interface TestUser {
  user: User;
  apiKey: string;
  /** POST /v1/tools/<name> as this user. */
  call(tool: string, args?: unknown): Promise<{ status: number; body: any }>;
  loginLink(): Promise<string>;
}

export async function createTestUser(stack: Stack, input: { tenantId?: string; email?: string; roles?: string[] } = {}): Promise<TestUser> {
  const { pool } = stack.services;
  const tenantId = input.tenantId ?? (await createTenant(pool, { name: `tenant ${randomBytes(3).toString('hex')}` })).id;
  await pool.query(`INSERT INTO tenants (id, name) VALUES ($1, $1) ON CONFLICT DO NOTHING`, [tenantId]);
  const user = await createUser(pool, {
    tenantId,
    email: input.email ?? `${randomBytes(4).toString('hex')}@example.com`,
    roles: input.roles,
  });
  const { key } = await createApiKey(pool, { tenantId, userId: user.id });
  return {
    user,
    apiKey: key,
    async call(tool, args = {}) {
      const res = await fetch(`${stack.baseUrl}/v1/tools/${tool}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(args),
      });
      return { status: res.status, body: await res.json() };
    },
    async loginLink() {
      return `${stack.baseUrl}/portal/login-link?token=${await createLoginToken(pool, user.id)}`;
    },
  };
}

/** SIGKILLs a process started by spawnWorkerProcess or spawnServerProcess (as a crash would) and waits for it to exit. */
export async function killProcess(child: import('node:child_process').ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/**
 * Switchboard's worker as a separate OS process (`bin/worker.ts`), so a test can SIGKILL it
 * mid-run the way a crash would, and start a new one.
 */
export function spawnWorkerProcess(stack: Stack): Promise<import('node:child_process').ChildProcess> {
  return spawnBin(stack, 'bin/worker.ts', 'worker running');
}

/** The HTTP server as a separate OS process (`bin/server.ts`) on `port`, so a test can SIGKILL it mid-request. */
export function spawnServerProcess(stack: Stack, port: number): Promise<import('node:child_process').ChildProcess> {
  return spawnBin(stack, 'bin/server.ts', 'HTTP server listening', { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
}

async function spawnBin(
  stack: Stack,
  entry: string,
  ready: string,
  env: Record<string, string> = {},
): Promise<import('node:child_process').ChildProcess> {
  const { spawn } = await import('node:child_process');
  const root = new URL('../..', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: root,
    env: { ...process.env, ...stack.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    let partial = '';
    const onData = (d: Buffer) => {
      output += d;
      // Whole lines only, so two processes' output never interleaves inside a line.
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) stack.logs.lines.push(`${line}\n`);
      if (output.includes(ready)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${entry} exited (${code}) before running:\n${output}`)));
  });
  return child;
}
