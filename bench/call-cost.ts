import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import { GITHUB_LOGIN, getUserDirectly, withBenchStack } from './lib/bench-stack.js';
import { beginRun, resultHeader } from './lib/benchmark.js';
import { emptyBatchRunner } from './lib/empty-batch.js';
import { callTool } from './lib/http.js';
import { positiveIntFromEnv } from './lib/settings.js';
import { formatTable } from './lib/stats.js';

/**
 * What one `execute_tools` call costs Switchboard's Node process, in measures that survive a
 * loaded machine: CPU time (the process's, and by thread: the main thread, the workflow sandbox's
 * worker threads, Temporal Core's native threads) and database round trips, per call. Sides run
 * in blocks of sequential calls, alternating block by block, all in one process:
 * - direct GET /user: the benchmark's client and the fake API alone (what every execute side
 *   also spends outside Switchboard);
 * - empty tool-batch workflow: Temporal's floor in this process (client, Core, one activation);
 * - execute_tools ×1 and ×8 over the JSON API.
 * "Switchboard's Node CPU per call" is execute_tools ×1's CPU minus the direct side's (its client
 * and fake API): the server's and worker's work, Temporal's included. The issue's goal: ≤ 5 ms.
 */
export const name = 'call-cost';

const PARAMETERS = { block: 25, warmupBlocks: 1, batch: 8 } as const;
const TOOL = 'github_get_authenticated_user';
const GOAL_SWITCHBOARD_CPU_MS = 5;

/** Linux's USER_HZ: /proc times are in hundredths of a second. */
const TICK_MS = 10;

/** CPU ms of this process's threads, summed by thread name (main thread: its own name, "node" or "MainThread"). */
function threadCpu(): Map<string, number> {
  const byName = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return byName;
  }
  for (const tid of tids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    const name = comm.replace(/[-_ ]?\d+$/, '');
    // Node's own threads are all "node": kept apart by id, so the workflow thread can be told (report).
    const group = tid === String(process.pid) ? 'main thread' : name === 'node' ? `node:${tid}` : name;
    byName.set(group, (byName.get(group) ?? 0) + ms);
  }
  return byName;
}

/**
 * Counts every query Switchboard sends to Postgres in this process: every query, pool.query's
 * included, goes through a pg Client's query method.
 */
function countQueries(): { count: () => number; texts: Map<string, number> } {
  let n = 0;
  const texts = new Map<string, number>();
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    n++;
    const first = args[0] as string | { text?: string };
    const text = String(typeof first === 'string' ? first : first?.text)
      .replace(/\s+/g, ' ')
      .slice(0, 90);
    texts.set(text, (texts.get(text) ?? 0) + 1);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  return { count: () => n, texts };
}

interface Block {
  calls: number;
  cpuMs: number;
  threads: Map<string, number>;
  queries: number;
  wallMs: number;
}

export async function run(): Promise<object> {
  const rounds = positiveIntFromEnv('BENCH_ITERATIONS', 8);
  const { timeoutSec, startedAt } = beginRun(name, `${rounds} rounds of ${PARAMETERS.block}-call blocks, 4 sides`);
  return withBenchStack({ name, timeoutSec, github: true }, async ({ stack, user, github, signal }) => {
    const queries = countQueries();
    const execute = async (n: number) => {
      const executions = Array.from({ length: n }, () => ({ tool: TOOL }));
      const { status, body } = await callTool(stack.baseUrl, user.apiKey, 'execute_tools', { executions }, AbortSignal.any([signal]));
      if (status !== 200 || body.results?.length !== n || body.results.some((r: any) => r.result?.login !== GITHUB_LOGIN)) {
        throw new Error(`execute_tools answered ${status}: ${JSON.stringify(body)}`);
      }
    };
    const empty = emptyBatchRunner({ stack, user });
    const sides: Record<string, () => Promise<unknown>> = {
      'direct GET /user': () => getUserDirectly(github!, signal),
      'empty batch workflow': empty,
      'execute_tools ×1': () => execute(1),
      [`execute_tools ×${PARAMETERS.batch}`]: () => execute(PARAMETERS.batch),
    };
    // BENCH_SIDES=a,b keeps the sides whose names contain one of them (a profile of one side, say).
    const only = process.env.BENCH_SIDES?.split(',');
    if (only) for (const side of Object.keys(sides)) if (!only.some((o) => side.includes(o))) delete sides[side];
    const totals = new Map<string, Block>();
    // For `node --cpu-prof`: the measured blocks' span on the profiler's clock (µs, CLOCK_MONOTONIC).
    const window: bigint[] = [];
    for (let round = 0; round < PARAMETERS.warmupBlocks + rounds; round++) {
      for (const [side, call] of Object.entries(sides)) {
        signal.throwIfAborted();
        const cpu0 = process.cpuUsage();
        const threads0 = threadCpu();
        const q0 = queries.count();
        const t0 = performance.now();
        for (let i = 0; i < PARAMETERS.block; i++) await call();
        const wallMs = performance.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        const threads1 = threadCpu();
        if (round < PARAMETERS.warmupBlocks) continue;
        if (window.length === 0) window.push(process.hrtime.bigint() / 1000n - BigInt(Math.round(wallMs * 1000)));
        const total = totals.get(side) ?? { calls: 0, cpuMs: 0, threads: new Map(), queries: 0, wallMs: 0 };
        total.calls += PARAMETERS.block;
        total.cpuMs += (cpu.user + cpu.system) / 1000;
        total.queries += queries.count() - q0;
        total.wallMs += wallMs;
        for (const [t, ms] of threads1) total.threads.set(t, (total.threads.get(t) ?? 0) + ms - (threads0.get(t) ?? 0));
        totals.set(side, total);
      }
    }
    if (process.env.BENCH_PROFILE_WINDOW)
      writeFileSync(process.env.BENCH_PROFILE_WINDOW, `${window[0]} ${process.hrtime.bigint() / 1000n}\n`);
    if (process.env.BENCH_QUERY_TEXTS) {
      for (const [text, count] of [...queries.texts].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(count, text);
    }
    return report(startedAt, rounds, totals);
  });
}

function report(startedAt: Date, rounds: number, totals: Map<string, Block>) {
  const per = (b: Block, x: number) => Math.round((x / b.calls) * 100) / 100;
  // The busiest of Node's unnamed threads is the workflow sandbox's (SDK's workflowThreadPoolSize is 1
  // with reuseV8Context); the rest (V8's and libuv's helpers, the loader's thread) are summed.
  const byNodeThread = new Map<string, number>();
  for (const b of totals.values())
    for (const [t, ms] of b.threads) if (t.startsWith('node:')) byNodeThread.set(t, (byNodeThread.get(t) ?? 0) + ms);
  const workflowThread = [...byNodeThread].sort((a, b) => b[1] - a[1])[0]?.[0];
  for (const b of totals.values()) {
    for (const [t, ms] of [...b.threads]) {
      if (!t.startsWith('node:')) continue;
      b.threads.delete(t);
      const group = t === workflowThread ? 'workflow thread' : 'node (other)';
      b.threads.set(group, (b.threads.get(group) ?? 0) + ms);
    }
  }
  const threadNames = [...new Set([...totals.values()].flatMap((b) => [...b.threads.keys()]))].sort();
  const rows = [...totals].map(([side, b]) => ({
    side,
    calls: b.calls,
    'wall ms/call': per(b, b.wallMs),
    'CPU ms/call': per(b, b.cpuMs),
    'DB queries/call': per(b, b.queries),
    ...Object.fromEntries(threadNames.map((t) => [`${t} ms`, per(b, b.threads.get(t) ?? 0)])),
  }));
  console.log(`\nper call, ${rounds} rounds of ${PARAMETERS.block} sequential calls per side`);
  console.log(formatTable(rows));
  const cpu = (side: string) => {
    const b = totals.get(side);
    return b ? b.cpuMs / b.calls : Number.NaN;
  };
  const switchboardCpu = cpu('execute_tools ×1') - cpu('direct GET /user');
  const floorCpu = cpu('empty batch workflow');
  const batchCpu = cpu(`execute_tools ×${PARAMETERS.batch}`) - PARAMETERS.batch * cpu('direct GET /user');
  console.log(
    `\nSwitchboard's Node CPU per call (execute_tools ×1 − direct): ${switchboardCpu.toFixed(2)} ms ` +
      `(empty batch workflow, Temporal's floor in this process incl. its client: ${floorCpu.toFixed(2)} ms; ` +
      `×${PARAMETERS.batch} batch − ${PARAMETERS.batch} direct: ${batchCpu.toFixed(2)} ms, ${(batchCpu / PARAMETERS.batch).toFixed(2)} ms per call)`,
  );
  const met = switchboardCpu <= GOAL_SWITCHBOARD_CPU_MS;
  console.log(`goal Node CPU per call ≤ ${GOAL_SWITCHBOARD_CPU_MS} ms: ${met ? 'met' : 'NOT met'}`);
  return {
    ...resultHeader(name, startedAt, { ...PARAMETERS, rounds, tool: TOOL }),
    sides: Object.fromEntries([...totals].map(([side, b]) => [side, { ...b, threads: Object.fromEntries(b.threads) }])),
    switchboardCpuMsPerCall: switchboardCpu,
    floorCpuMsPerCall: floorCpu,
    batchCpuMs: batchCpu,
    goal: { cpuMsPerCallAtMost: GOAL_SWITCHBOARD_CPU_MS, met },
  };
}
