import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_FLAGS } from '../../core/search-attributes.js';
import { DYNAMIC_CONFIG_FLAGS } from './temporal-dynamic-config.js';

export interface DevServerOptions {
  cli: string;
  port: number;
  uiPort?: number;
  /** SQLite file; runs survive a restart. Omit for an in-memory server (tests). */
  dbFilename?: string;
  headless?: boolean;
  namespace?: string;
  codecEndpoint?: string;
  log?: (line: string) => void;
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `temporal server start-dev` and resolves once its frontend answers. */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--namespace',
    options.namespace ?? 'default',
    '--log-level',
    'warn',
    ...DYNAMIC_CONFIG_FLAGS.flatMap((flag) => ['--dynamic-config-value', flag]),
    ...SEARCH_ATTRIBUTE_FLAGS.flatMap((flag) => ['--search-attribute', flag]),
  ];
  if (options.dbFilename) {
    mkdirSync(dirname(options.dbFilename), { recursive: true });
    args.push('--db-filename', options.dbFilename);
  }
  if (options.headless) args.push('--headless');
  else if (options.uiPort) args.push('--ui-port', String(options.uiPort));
  if (options.codecEndpoint) args.push('--ui-codec-endpoint', options.codecEndpoint);

  // Its own process group, so a stop reaches every process it started.
  const child = spawn(options.cli, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const forward = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line.trim()) options.log?.(line);
  };
  child.stdout?.on('data', forward);
  child.stderr?.on('data', forward);
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );

  const address = `127.0.0.1:${options.port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`temporal server start-dev exited early (exit code ${child.exitCode}); is port ${options.port} taken?`);
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1_000 });
      await conn.workflowService.getSystemInfo({});
      await conn.close();
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        process.kill(-child.pid!, 'SIGKILL');
        throw new Error(`Temporal dev server did not answer on ${address} within 60 s: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  return {
    address,
    uiUrl: options.headless || !options.uiPort ? undefined : `http://127.0.0.1:${options.uiPort}`,
    process: child,
    async stop() {
      if (exited) return;
      process.kill(-child.pid!, 'SIGTERM');
      const timer = setTimeout(() => !exited && process.kill(-child.pid!, 'SIGKILL'), 10_000);
      await exitedPromise;
      clearTimeout(timer);
    },
  };
}
