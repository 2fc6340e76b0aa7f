import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from './ports.js';
import { type RoundRobin, startRoundRobin } from './round-robin.js';

/** Where a stack's child processes write: the stack's environment and its log capture. */
export interface ProcessHost {
  env: Record<string, string>;
  logs: { lines: string[] };
}

const ENTRIES = {
  server: { file: 'bin/server.ts', ready: 'HTTP server listening' },
  worker: { file: 'bin/worker.ts', ready: 'worker running' },
} as const;

/**
 * Starts `bin/server.ts` or `bin/worker.ts` with the stack's environment (and `env` over it) and
 * resolves once it says it is running. Its output goes into the stack's logs line by line, so leak
 * checks read every process.
 */
export async function spawnSwitchboardProcess(
  host: ProcessHost,
  kind: keyof typeof ENTRIES,
  env: Record<string, string> = {},
): Promise<ChildProcess> {
  const { file, ready } = ENTRIES[kind];
  const root = new URL('../..', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: root,
    env: { ...process.env, ...host.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Until it is ready, its output is kept for the error should it exit first; after, only the stack's logs hold it.
  let output: string | undefined = '';
  await new Promise<void>((resolve, reject) => {
    let partial = '';
    const onData = (d: Buffer) => {
      // Whole lines only, so two processes' output never interleaves inside a line.
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) host.logs.lines.push(`${line}\n`);
      if (output === undefined) return;
      output += d;
      if (output.includes(ready)) {
        output = undefined;
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${file} exited (${code}) before running:\n${output}`)));
  });
  return child;
}

/**
 * A stack's HTTP servers and workers as separate OS processes, the shape a cluster deployment has:
 * servers behind a round-robin load balancer on the stack's own port and URL, workers polling the
 * stack's task queue. Each process gets its own operator port, so its /metrics can be read.
 */
export class SwitchboardProcesses {
  readonly servers: ChildProcess[] = [];
  readonly workers: ChildProcess[] = [];
  private balancer?: RoundRobin;
  private readonly operatorUrls = new Map<ChildProcess, string>();

  constructor(private readonly host: ProcessHost) {}

  /** `count` HTTP server processes, and the balancer in front of them on `port` (the stack's PUBLIC_BASE_URL). */
  async startServers(count: number, port: number) {
    // The balancer binds its port first: a port found free now may be another connection's by the
    // time the servers are up (seconds later), as ephemeral ports come from the same range.
    const backends: string[] = [];
    this.balancer = await startRoundRobin(port, backends);
    const balancer = this.balancer;
    // Side by side: each spends its start mostly waiting (tsx, Postgres, Temporal).
    const started = await Promise.all(Array.from({ length: count }, () => this.spawnServer()));
    for (const { child, url } of started) {
      this.servers.push(child);
      backends.push(url);
    }
    return { server: balancer.server, url: balancer.url, close: () => balancer.close() };
  }

  /** One server process on a free port. */
  private spawnServer(): Promise<{ child: ChildProcess; url: string }> {
    return onFreshPorts(async () => {
      const own = await freePort();
      return { child: await this.spawn('server', { PORT: String(own) }), url: `http://127.0.0.1:${own}` };
    });
  }

  /** How many requests each server process answered, in start order. */
  get served(): number[] {
    return this.balancer?.served ?? [];
  }

  async startWorkers(count: number) {
    this.workers.push(...(await Promise.all(Array.from({ length: count }, () => onFreshPorts(() => this.spawn('worker', {}))))));
  }

  /** Stops the worker processes as an orchestrator would (SIGTERM: they drain and exit). */
  async stopWorkers() {
    await Promise.all(this.workers.splice(0).map((child) => this.retire(child)));
  }

  /** Every process's /metrics: the live ones now, the stopped ones as last read before they stopped (a scraper's last sample). */
  async metricsTexts(): Promise<string[]> {
    const live = [...this.servers, ...this.workers].filter(running);
    return [...this.retiredMetrics, ...(await Promise.all(live.map((child) => this.scrape(child))))];
  }

  async stop() {
    await this.stopWorkers();
    await Promise.all(this.servers.splice(0).map((child) => this.retire(child)));
  }

  private readonly retiredMetrics: string[] = [];

  private async retire(child: ChildProcess) {
    if (running(child)) this.retiredMetrics.push(await this.scrape(child).catch(() => ''));
    await stopProcess(child);
  }

  private async scrape(child: ChildProcess): Promise<string> {
    return (await fetch(`${this.operatorUrls.get(child)}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  }

  private async spawn(kind: keyof typeof ENTRIES, env: Record<string, string>) {
    const operatorPort = await freePort();
    const child = await spawnSwitchboardProcess(this.host, kind, { ...env, METRICS_PORT: String(operatorPort) });
    this.operatorUrls.set(child, `http://127.0.0.1:${operatorPort}`);
    return child;
  }
}

/**
 * Starts a process on ports found free just before: again, on other ports, when one was taken
 * before the process bound it (ephemeral ports of other connections come from the same range).
 */
async function onFreshPorts<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  try {
    return await start();
  } catch (err) {
    if (attempts <= 1 || !/EADDRINUSE/.test((err as Error).message)) throw err;
    return onFreshPorts(start, attempts - 1);
  }
}

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

async function stopProcess(child: ChildProcess): Promise<void> {
  if (!running(child)) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}
