import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Worker } from '@temporalio/worker';
import { listen, type RunningServer } from '../../bin/support/listen.js';
import { configFromEnv, createWorker, openServices, type Services } from '../../bin/support/services.js';
import { type DemoOptions, type RunningDemo, startDemo } from '../../demo/index.js';
import { createApiKey } from '../../features/accounts/store/api-keys.js';
import { createLoginToken } from '../../features/accounts/store/login-tokens.js';
import { createTenant } from '../../features/accounts/store/tenants.js';
import { createUser, type User } from '../../features/accounts/store/users.js';
import { createLogger } from '../../platform/telemetry/logger.js';
import { registry } from '../../platform/telemetry/metrics.js';
import { freePort } from './ports.js';
import { SwitchboardProcesses, spawnSwitchboardProcess } from './switchboard-processes.js';

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
  /** Switchboard's services in this process: its pool, Temporal client, keyring… (what tests inspect and drive directly). */
  services: Services;
  /** The in-process worker, when the stack runs in one process. */
  worker?: Worker;
  workerRun?: Promise<void>;
  /** The HTTP server, or with `Infra.processes` the load balancer in front of the server processes. */
  http: RunningServer;
  baseUrl: string;
  schema: string;
  /** Every log line of the stack, its child processes' included. */
  logs: LogCapture;
  env: Record<string, string>;
  /** The demo integration, when the stack was started with `demo` (as `npm start` serves it; in-process stacks only). */
  demo?: RunningDemo;
  /** The demo's lines for the terminal (sign-ins, consents, tokens, refreshes, revocations). */
  demoLog: string[];
  /** The stack's HTTP server and worker processes with `Infra.processes` (none otherwise). */
  processes: SwitchboardProcesses;
  /** Starts (or restarts) the stack's worker: in this process, or its worker processes. */
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  /** The /metrics text of every process that runs part of this Switchboard, this one included. */
  metricsTexts(): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * A whole Switchboard on real parts (no vitest here, so benchmarks use it too): its own Postgres schema, its own task
 * queue on the shared Temporal server, a worker and an HTTP server on a free port.
 */
export interface Infra {
  temporalAddress: string;
  databaseUrl: string;
  workflowBundlePath: string;
  /**
   * Run each stack as a cluster does: this many HTTP server processes (`bin/server.ts`) behind a
   * round-robin load balancer on the stack's port, and this many worker processes (`bin/worker.ts`).
   * Without it, the HTTP server and the worker run inside the test's own process.
   */
  processes?: { servers: number; workers: number };
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
    // As separate processes, a stack holds five pools (four processes and this one's services):
    // two test files at once must fit, with the Temporal server, in PostgreSQL's default 100 connections.
    ...(infra.processes ? { DATABASE_POOL_MAX: '4' } : {}),
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
  const processes = new SwitchboardProcesses({ env, logs });
  const http = infra.processes ? await processes.startServers(infra.processes.servers, port) : await listen(services, port);
  const stack: Stack = {
    services,
    http,
    baseUrl,
    schema,
    logs,
    env,
    demo,
    demoLog,
    processes,
    async startWorker() {
      if (infra.processes) return processes.startWorkers(infra.processes.workers);
      stack.worker = await createWorker(services, { workflowBundle: { codePath: infra.workflowBundlePath } });
      stack.workerRun = stack.worker.run();
    },
    async stopWorker() {
      await processes.stopWorkers();
      const { worker, workerRun } = stack;
      if (!worker) return;
      stack.worker = undefined;
      // A worker may already be stopping by itself (a signal); shutting it down twice throws.
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await workerRun?.catch(() => {});
    },
    async metricsTexts() {
      return [await registry.metrics(), ...(await processes.metricsTexts())];
    },
    async close() {
      await stack.stopWorker();
      await http.close();
      await processes.stop();
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
export function spawnWorkerProcess(stack: Pick<Stack, 'env' | 'logs'>): Promise<ChildProcess> {
  return spawnSwitchboardProcess(stack, 'worker', { LOG_LEVEL: 'info' });
}

/** The HTTP server as a separate OS process (`bin/server.ts`) on `port`, so a test can SIGKILL it mid-request. */
export function spawnServerProcess(stack: Pick<Stack, 'env' | 'logs'>, port: number): Promise<ChildProcess> {
  return spawnSwitchboardProcess(stack, 'server', { LOG_LEVEL: 'info', PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
}
