import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowUpdateStage } from '@temporalio/client';
import { WAIT_TIMEOUT_MAX_SEC } from '../core/connection.js';
import { connectionWorkflowId } from '../core/ids.js';
import { waitForConnectionUpdate } from '../features/connections/workflow.js';
import { freePort } from '../test/support/ports.js';
import { spawnWorkerProcess } from '../test/support/stack.js';
import { round } from './lib/alternate.js';
import { type BenchRun, withBenchStack } from './lib/bench-stack.js';
import { beginRun, resultHeader } from './lib/benchmark.js';
import { mapWithConcurrency } from './lib/concurrency.js';
import { cpuSince, cpuSnapshot, temporalCpuMs } from './lib/cpu.js';
import { callTool } from './lib/http.js';
import { formatTable, summary } from './lib/stats.js';
import { onEachServer, SERVER_LABEL, type TemporalServerKind, temporalServersFromEnv } from './lib/temporal-servers.js';

/**
 * What pending connection waits cost the worker while nothing happens: one worker process of its
 * own (bin/worker.ts), and at each level of BENCH_PARKED_LEVELS that many connection attempts,
 * each started with `connect` (record + connection workflow) and holding one accepted
 * `waitForConnection` Update — what `wait_for_connection` leaves in the workflow while the user
 * has not finished the OAuth flow. The Updates are started straight from the Temporal client and
 * the client returns once the workflow accepted them, so no HTTP request per wait stays open here
 * (the server's side of those would sit in this process, not the worker). At each level, after a
 * settle pause, the worker's CPU over IDLE_WINDOWS windows of IDLE_SEC and its RSS and V8 heap (its
 * /metrics) are read.
 * It runs on each Temporal server of BENCH_TEMPORAL (default the dev server, then the Temporal
 * server on PostgreSQL), with the server's own CPU and memory and PostgreSQL's CPU, side by side.
 * Goal (issue): idle CPU near zero, memory flat as the count grows.
 */
export const name = 'parked-waits';

const DEFAULT_LEVELS = [1_000, 5_000, 10_000];
/** Fixed for every run, and reported with its results. */
const PARAMETERS = {
  /** Attempts created at once; modest, so creation does not starve the machine. */
  createConcurrency: 16,
  /**
   * After creating a level (or starting the worker), before measuring: the last workflow tasks,
   * cache evictions, and the garbage collection and JIT work that follow a burst (a fresh worker
   * process spends ~20 s of it after bundling its workflows).
   */
  settleSec: 30,
  /** Steady-state window over which CPU is measured. */
  idleSec: 10,
  /**
   * Consecutive windows per level: their median is the worker's idle CPU, so one window that
   * catches a burst (a garbage collection after creating thousands of workflows) does not stand
   * for the level; the busiest window is reported beside it.
   */
  idleWindows: 3,
  /** Every Update waits this long (the most wait_for_connection allows); the run must end sooner. */
  waitTimeoutSec: WAIT_TIMEOUT_MAX_SEC,
} as const;
const USER_HZ_MS = 10;

interface Level {
  pendingWaits: number;
  /** Seconds it took to create this level's new waits (those above the level before), and their rate. */
  createSec: number;
  createdPerSec: number;
  /** Seconds since the first wait was created (each wait ends after PARAMETERS.waitTimeoutSec). */
  sinceFirstWaitSec: number;
  /** Worker CPU over the idle window as a share of one core, %. */
  /** Median over the PARAMETERS.idleWindows windows. */
  workerCpuPct: number;
  workerCpuMaxPct: number;
  temporalCpuPct: number;
  /** The Temporal server process's resident memory. */
  temporalRssMb: number;
  /** Every PostgreSQL process's CPU over the idle windows, % of one core. */
  postgresCpuPct: number;
  machineBusyPct?: number;
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  runningWorkflows?: number;
}

export async function run(): Promise<object> {
  const levels = levelsFromEnv();
  const servers = temporalServersFromEnv(['dev', 'postgres']);
  const what =
    `${levels.join(', ')} pending waits (BENCH_PARKED_LEVELS), created ${PARAMETERS.createConcurrency} at a time, ` +
    `${PARAMETERS.idleWindows} idle windows of ${PARAMETERS.idleSec} s each, on ${servers.map((s) => SERVER_LABEL[s]).join(', then ')}`;
  // Each server's waits must all still be pending when its last level is measured: the deadline is per server.
  const { timeoutSec, startedAt } = beginRun(name, what, PARAMETERS.waitTimeoutSec);
  const byServer = await onEachServer(servers, (temporal) => measure(levels, timeoutSec, temporal));
  const sideBySide = sideBySideOf(byServer);
  return {
    ...resultHeader(name, startedAt, {
      ...PARAMETERS,
      levels,
      servers,
      what: 'connect + one accepted waitForConnection Update per attempt, separate worker process',
    }),
    sideBySide,
    servers: byServer,
  };
}

/** Per level and server: the worker's and the Temporal server's idle CPU and memory, and Postgres's idle CPU. */
function sideBySideOf(byServer: Partial<Record<TemporalServerKind, ReturnType<typeof report>>>) {
  const rows = (Object.keys(byServer) as TemporalServerKind[]).flatMap((server) =>
    byServer[server]!.levels.map((l) => ({
      server: SERVER_LABEL[server],
      'pending waits': l.pendingWaits,
      'created/s': l.createdPerSec,
      'worker CPU %': l.workerCpuPct,
      'worker RSS MB': l.rssMb,
      'temporal CPU %': l.temporalCpuPct,
      'temporal RSS MB': l.temporalRssMb,
      'postgres CPU %': l.postgresCpuPct,
    })),
  );
  console.log('\nside by side, at rest (CPU as % of one core)');
  console.log(formatTable(rows));
  return rows;
}

function measure(levels: number[], timeoutSec: number, temporal: TemporalServerKind) {
  const env = { GITHUB_CLIENT_ID: 'bench-client', GITHUB_CLIENT_SECRET: 'bench-secret' };
  return withBenchStack({ name, timeoutSec, github: false, worker: false, env, temporal }, async (bench) => {
    const metricsPort = await freePort();
    const worker = await spawnWorkerProcess({ ...bench.stack, env: { ...bench.stack.env, METRICS_PORT: String(metricsPort) } });
    try {
      const measured: Level[] = [];
      const idleAt = (pendingWaits: number, newWaits: number, createSec: number, firstAt: number) =>
        measureIdle(bench, worker, metricsPort, { pendingWaits, newWaits, createSec, firstAt });
      await sleep(PARAMETERS.settleSec * 1000, undefined, { signal: bench.signal });
      measured.push(await idleAt(0, 0, 0, performance.now()));
      console.log(`  0 pending waits: worker ${measured[0].workerCpuPct}% CPU, RSS ${measured[0].rssMb} MB`);
      let created = 0;
      let firstAt = 0;
      for (const level of levels) {
        const started = performance.now();
        firstAt ||= started;
        await mapWithConcurrency(range(level - created), PARAMETERS.createConcurrency, () => park(bench));
        const createSec = (performance.now() - started) / 1000;
        const newWaits = level - created;
        created = level;
        await sleep(PARAMETERS.settleSec * 1000, undefined, { signal: bench.signal });
        const l = await idleAt(level, newWaits, createSec, firstAt);
        measured.push(l);
        console.log(`  ${level} pending waits (created in ${round(createSec, 1)} s): worker ${l.workerCpuPct}% CPU, RSS ${l.rssMb} MB`);
      }
      return report({ measured });
    } finally {
      await stopProcess(worker);
    }
  });
}

function levelsFromEnv(): number[] {
  const raw = process.env.BENCH_PARKED_LEVELS;
  if (!raw) return DEFAULT_LEVELS;
  const levels = raw.split(',').map((x) => Number(x.trim()));
  if (levels.some((x) => !Number.isInteger(x) || x <= 0) || levels.some((x, i) => i > 0 && x <= levels[i - 1])) {
    throw new Error(`BENCH_PARKED_LEVELS must be ascending positive integers separated by commas, got "${raw}"`);
  }
  return levels;
}

/** One pending wait: `connect`, then a waitForConnection Update the workflow has accepted. */
async function park({ stack, user, signal }: BenchRun): Promise<void> {
  const connect = await callTool(stack.baseUrl, user.apiKey, 'connect', { integration: 'github' }, AbortSignal.any([signal]));
  if (connect.status !== 200) throw new Error(`connect answered ${connect.status}: ${JSON.stringify(connect.body)}`);
  const handle = stack.services.temporal.workflow.getHandle(connectionWorkflowId(connect.body.connectionId));
  await handle.startUpdate(waitForConnectionUpdate, {
    args: [{ timeoutSec: PARAMETERS.waitTimeoutSec }],
    waitForStage: WorkflowUpdateStage.ACCEPTED,
  });
}

async function measureIdle(
  { stack, signal, temporalPid }: BenchRun,
  worker: ChildProcess,
  metricsPort: number,
  at: { pendingWaits: number; newWaits: number; createSec: number; firstAt: number },
): Promise<Level> {
  const start = cpuSnapshot();
  const workerPct: number[] = [];
  for (let i = 0; i < PARAMETERS.idleWindows; i++) {
    const workerStart = processCpuMs(worker.pid!);
    await sleep(PARAMETERS.idleSec * 1000, undefined, { signal });
    workerPct.push(((processCpuMs(worker.pid!) - workerStart) / (PARAMETERS.idleSec * 1000)) * 100);
  }
  const used = cpuSince(start);
  const spanMs = PARAMETERS.idleWindows * PARAMETERS.idleSec * 1000;
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { signal: AbortSignal.any([signal]) })).text();
  const metric = (key: string) => Number(new RegExp(`^switchboard_${key} (\\S+)`, 'm').exec(metrics)?.[1] ?? Number.NaN);
  const mb = (bytes: number) => round(bytes / 2 ** 20, 1);
  const { config, temporal } = stack.services;
  const runningWorkflows = await temporal.workflow
    .count(`TaskQueue = '${config.TEMPORAL_TASK_QUEUE}' AND ExecutionStatus = 'Running'`)
    .then((c) => c.count)
    .catch(() => undefined);
  return {
    pendingWaits: at.pendingWaits,
    createSec: round(at.createSec, 1),
    createdPerSec: at.createSec ? round(at.newWaits / at.createSec, 1) : 0,
    sinceFirstWaitSec: round((performance.now() - at.firstAt) / 1000, 0),
    workerCpuPct: round(summary(workerPct).p50, 2),
    workerCpuMaxPct: round(Math.max(...workerPct), 2),
    temporalCpuPct: round((temporalCpuMs(used) / spanMs) * 100, 2),
    temporalRssMb: mb(processRssBytes(temporalPid)),
    postgresCpuPct: round((used.postgresMs / spanMs) * 100, 2),
    machineBusyPct: used.machineBusy === undefined ? undefined : round(used.machineBusy * 100, 1),
    rssMb: mb(metric('process_resident_memory_bytes')),
    heapUsedMb: mb(metric('nodejs_heap_size_used_bytes')),
    heapTotalMb: mb(metric('nodejs_heap_size_total_bytes')),
    runningWorkflows,
  };
}

/** utime + stime of one process in ms, from /proc (Linux). */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * USER_HZ_MS;
}

/** A process's resident memory in bytes, from /proc (Linux). */
function processRssBytes(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return kb ? Number(kb) * 1024 : Number.NaN;
}

/** SIGTERM (the worker drains), then SIGKILL if it has not exited within 15 s. */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

function report(input: { measured: Level[] }) {
  const { measured } = input;
  console.log(
    `\nworker process at rest, ${PARAMETERS.idleWindows} windows of ${PARAMETERS.idleSec} s after each level (CPU as % of one core; worker: median and busiest window)`,
  );
  console.log(
    formatTable(
      measured.map((l) => ({
        'pending waits': l.pendingWaits,
        'created in s': l.createSec,
        'worker CPU %': l.workerCpuPct,
        'busiest window %': l.workerCpuMaxPct,
        'temporal CPU %': l.temporalCpuPct,
        'temporal RSS MB': l.temporalRssMb,
        'postgres CPU %': l.postgresCpuPct,
        'machine busy %': l.machineBusyPct ?? '-',
        'RSS MB': l.rssMb,
        'heap used MB': l.heapUsedMb,
        'heap total MB': l.heapTotalMb,
        'running workflows': l.runningWorkflows ?? '-',
      })),
    ),
  );
  const idle = measured[0];
  const top = measured[measured.length - 1];
  const rssGrowth = top.rssMb - idle.rssMb;
  const perWaitKb = top.pendingWaits ? round(((top.rssMb - idle.rssMb) * 1024) / top.pendingWaits, 2) : 0;
  const cpuNearZero = measured.every((l) => l.workerCpuPct < 2);
  console.log(
    `\nRSS ${idle.rssMb} MB with none → ${top.rssMb} MB with ${top.pendingWaits} (${round(rssGrowth, 1)} MB, ${perWaitKb} KB per wait)`,
  );
  console.log(`goal idle worker CPU near zero (median window < 2% of a core at every level): ${cpuNearZero ? 'met' : 'NOT met'}`);
  return {
    levels: measured,
    rssGrowthMb: rssGrowth,
    rssPerWaitKb: perWaitKb,
    goal: { idleWorkerCpuBelowPct: 2, met: cpuNearZero },
  };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
