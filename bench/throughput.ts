import { cpus } from 'node:os';
import { round } from './lib/alternate.js';
import { type BenchRun, GITHUB_LOGIN, getUserDirectly, withBenchStack } from './lib/bench-stack.js';
import { beginRun, resultHeader } from './lib/benchmark.js';
import { type CpuUsed, cpuSince, cpuSnapshot, temporalCpuMs } from './lib/cpu.js';
import { emptyBatchRunner } from './lib/empty-batch.js';
import { callTool } from './lib/http.js';
import { positiveIntFromEnv } from './lib/settings.js';
import { formatTable, summary } from './lib/stats.js';
import { type SustainedRun, sustain } from './lib/sustain.js';
import { onEachServer, SERVER_LABEL, type TemporalServerKind, temporalServersFromEnv } from './lib/temporal-servers.js';

/**
 * Sustained `connections_execute` calls per second (one GitHub call each, fake API, loopback) at
 * 8, 64 and 256 concurrent callers, each for BENCH_DURATION_SEC (default 15; the figure is
 * 60), with errors and latency. Each level is followed by two ceilings with the same callers:
 * empty tool-batch workflows (what Temporal itself sustains here, no Switchboard code) and
 * GET /user straight to the fake API (the machine's HTTP ceiling). It runs on each Temporal server of
 * BENCH_TEMPORAL (default the dev server, then the Temporal server on PostgreSQL), side by side.
 */
export const name = 'throughput';

/** Fixed for every run, and reported with its results. */
const PARAMETERS = {
  levels: [8, 64, 256],
  /** At each level before measuring, left out: connections, JIT, worker caches. */
  warmupSec: 3,
  /** The direct baseline only shows the machine's ceiling; a few seconds are enough. */
  baselineSec: 5,
} as const;

interface Level {
  switchboard: SustainedRun;
  /** CPU spent during the Switchboard run: this process (everything but Temporal and Postgres), the Temporal server, Postgres, the machine. */
  cpu: CpuUsed;
  /** The most requests in flight at once at the fake API during the Switchboard run. */
  maxInFlightAtApi: number;
  temporalOnly: SustainedRun;
  direct: SustainedRun;
}

const SIDES = {
  switchboard: 'connections_execute',
  temporalOnly: 'empty batch workflow (Temporal only)',
  direct: 'direct GET /user',
} as const;

export async function run(): Promise<object> {
  const durationSec = positiveIntFromEnv('BENCH_DURATION_SEC', 15);
  const servers = temporalServersFromEnv(['dev', 'postgres']);
  const what = `${PARAMETERS.levels.join(' and ')} callers, ${durationSec} s each (+${PARAMETERS.warmupSec} s warm-up), on ${servers.map((s) => SERVER_LABEL[s]).join(', then ')}`;
  const deadline = 300 + PARAMETERS.levels.length * (durationSec + PARAMETERS.warmupSec + PARAMETERS.baselineSec) * 2;
  const { timeoutSec, startedAt } = beginRun(name, what, deadline * servers.length);
  const byServer = await onEachServer(servers, (temporal) =>
    withBenchStack(
      {
        name,
        timeoutSec,
        github: true,
        temporal,
        // Every caller uses the one bench account: measure Switchboard's own overhead, not the per-account
        // queue (CONNECTIONS_ACCOUNT_MAX_CONCURRENCY, default 8) that protects a real service from it.
        env: { CONNECTIONS_ACCOUNT_MAX_CONCURRENCY: '1000' },
      },
      async (bench) => {
        const levels: Level[] = [];
        for (const concurrency of PARAMETERS.levels) levels.push(await measureLevel(bench, concurrency, durationSec));
        return report({ durationSec, levels });
      },
    ),
  );
  const sideBySide = sideBySideOf(byServer);
  return { ...resultHeader(name, startedAt, { ...PARAMETERS, durationSec, servers }), sideBySide, servers: byServer };
}

/** Per level of callers and server: Switchboard's calls/s, Temporal's own ceiling, their ratio, and CPU per call. */
function sideBySideOf(byServer: Partial<Record<TemporalServerKind, ReturnType<typeof report>>>) {
  const rows = (Object.keys(byServer) as TemporalServerKind[]).flatMap((server) =>
    byServer[server]!.map((l) => ({
      server: SERVER_LABEL[server],
      callers: l.concurrency,
      'calls/s': round(l.switchboard.callsPerSec, 1),
      'empty workflows/s': round(l.temporalOnly.callsPerSec, 1),
      'of the ceiling': round(l.switchboard.callsPerSec / l.temporalOnly.callsPerSec, 2),
      'p50 ms': l.switchboard.latency ? round(l.switchboard.latency.p50, 1) : '-',
      errors: l.switchboard.errors,
      'CPU ms/call: node': round(l.cpu.selfMs / l.switchboard.ok, 1),
      temporal: round(temporalCpuMs(l.cpu) / l.switchboard.ok, 1),
      postgres: round(l.cpu.postgresMs / l.switchboard.ok, 1),
    })),
  );
  console.log('\nside by side');
  console.log(formatTable(rows));
  return rows;
}

async function measureLevel(bench: BenchRun, concurrency: number, durationSec: number): Promise<Level> {
  const { stack, user, github, signal } = bench;
  const gh = github!;
  const execute = async () => {
    const args = { name: 'github__get_authenticated_user', arguments: {} };
    const { status, body } = await callTool(stack.baseUrl, user.apiKey, 'connections_execute', args, AbortSignal.any([signal]));
    if (status !== 200 || body.ok !== true || body.result?.login !== GITHUB_LOGIN) {
      throw new Error(`HTTP ${status} ${body.error?.code ?? ''} ${body.error?.message ?? JSON.stringify(body.error ?? body)}`);
    }
  };
  await sustain(concurrency, PARAMETERS.warmupSec * 1000, execute, signal);
  gh.apis.maxInFlight = 0;
  const cpuStart = cpuSnapshot();
  const switchboard = await sustain(concurrency, durationSec * 1000, execute, signal);
  const cpu = cpuSince(cpuStart);
  const maxInFlightAtApi = gh.apis.maxInFlight;
  process.stdout.write(`  ${concurrency} callers: ${switchboard.ok} calls, ${switchboard.errors} errors\n`);
  const temporalOnly = await sustain(concurrency, PARAMETERS.baselineSec * 1000, emptyBatchRunner(bench), signal);
  const direct = await sustain(concurrency, PARAMETERS.baselineSec * 1000, () => getUserDirectly(gh, signal), signal);
  return { switchboard, cpu, maxInFlightAtApi, temporalOnly, direct };
}

function describe(run: SustainedRun) {
  const latency = run.latencies.length ? summary(run.latencies) : undefined;
  const total = run.ok + run.errors;
  return {
    callsPerSec: run.ok / (run.elapsedMs / 1000),
    ok: run.ok,
    errors: run.errors,
    errorRate: total ? run.errors / total : 0,
    elapsedSec: run.elapsedMs / 1000,
    latency,
    errorKinds: run.errorKinds,
  };
}

function report(input: { durationSec: number; levels: Level[] }) {
  const described = input.levels.map((l) => ({
    concurrency: l.switchboard.concurrency,
    switchboard: describe(l.switchboard),
    temporalOnly: describe(l.temporalOnly),
    direct: describe(l.direct),
    maxInFlightAtApi: l.maxInFlightAtApi,
    cpu: l.cpu,
  }));
  const rows = described.flatMap((l) =>
    (Object.keys(SIDES) as (keyof typeof SIDES)[]).map((side) => {
      const d = l[side];
      return {
        callers: l.concurrency,
        what: SIDES[side],
        'calls/s': round(d.callsPerSec, 1),
        ok: d.ok,
        errors: d.errors,
        'error %': round(d.errorRate * 100, 2),
        'p50 ms': d.latency ? round(d.latency.p50, 1) : '-',
        'p99 ms': d.latency ? round(d.latency.p99, 1) : '-',
        'max ms': d.latency ? round(d.latency.max, 1) : '-',
        'API in flight': side === 'switchboard' ? l.maxInFlightAtApi : '-',
      };
    }),
  );
  console.log(`\nsustained calls per second (${input.durationSec} s per level; ceilings ${PARAMETERS.baselineSec} s each)`);
  console.log(formatTable(rows));
  console.log('\nCPU per connections_execute call during the run, ms (this process holds client, server, worker and fake APIs)');
  console.log(
    formatTable(
      described.map((l) => ({
        callers: l.concurrency,
        'this process': round(l.cpu.selfMs / l.switchboard.ok, 1),
        'temporal server': round(temporalCpuMs(l.cpu) / l.switchboard.ok, 1),
        postgres: round(l.cpu.postgresMs / l.switchboard.ok, 1),
        'machine busy %': l.cpu.machineBusy === undefined ? '-' : round(l.cpu.machineBusy * 100, 0),
        cores: cpus().length,
      })),
    ),
  );
  for (const l of described) {
    for (const [kind, count] of Object.entries(l.switchboard.errorKinds)) console.log(`  ${l.concurrency} callers, ${count}× ${kind}`);
  }
  return described;
}
