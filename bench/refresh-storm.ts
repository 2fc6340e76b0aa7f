import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { spawnWorkerProcess } from '../test/support/stack.js';
import { round } from './lib/alternate.js';
import { type BenchRun, withBenchStack } from './lib/bench-stack.js';
import { beginRun, resultHeader } from './lib/benchmark.js';
import { callTool } from './lib/http.js';
import { positiveIntFromEnv } from './lib/settings.js';
import { formatTable, summary } from './lib/stats.js';

/**
 * A refresh storm: STORM concurrent `connections_execute` calls on one GitHub account whose access
 * token has just expired and whose refresh token rotates (a second use of a spent one revokes the
 * grant, as Atlassian does), served by two worker processes (bin/worker.ts). Counts the refresh
 * requests that reach the authorization server, and the calls' latency and errors. Each of
 * BENCH_STORM_ROUNDS storms uses a fresh user and account.
 * Goal (issue): exactly one refresh per storm, no errors.
 */
export const name = 'refresh-storm';

const STORM = 100;
const WORKERS = 2;
const CLIENT = { clientId: 'storm', clientSecret: 'storm-secret-0123456789', rotateRefreshTokens: true };

interface Storm {
  ok: number;
  errors: number;
  errorKinds: Record<string, number>;
  /** Successful refresh_token grants at the authorization server during the storm. */
  refreshes: number;
  latencies: number[];
  /** Worker processes that logged at least one of this storm's tool calls. */
  workersServing: number;
}

export async function run(): Promise<object> {
  const rounds = positiveIntFromEnv('BENCH_STORM_ROUNDS', 5);
  const what = `${rounds} storms of ${STORM} concurrent calls on an expired rotating token, ${WORKERS} worker processes`;
  const { timeoutSec, startedAt } = beginRun(name, what);
  const world = { clients: { github: CLIENT }, apis: true };
  // All STORM calls race for the refresh at once: lift the per-account queue (default 8 in flight).
  const env = { CONNECTIONS_ACCOUNT_MAX_CONCURRENCY: String(STORM) };
  return withBenchStack({ name, timeoutSec, github: false, worker: false, world, env }, async (bench) => {
    const workers: ChildProcess[] = [];
    try {
      for (let i = 0; i < WORKERS; i++) workers.push(await spawnWorkerProcess(bench.stack));
      // Warm-up storm, left out: first workflow tasks, connection pools, JIT in both workers.
      await storm(bench, workers);
      const storms: Storm[] = [];
      for (let i = 0; i < rounds; i++) {
        const s = await storm(bench, workers);
        storms.push(s);
        console.log(`  storm ${i + 1}: ${s.ok} ok, ${s.errors} errors, ${s.refreshes} refresh request(s) at the auth server`);
      }
      return report({ startedAt, rounds, storms });
    } finally {
      for (const w of workers) w.kill('SIGKILL');
    }
  });
}

async function storm({ world, stack, signal }: BenchRun, workers: ChildProcess[]): Promise<Storm> {
  const { auth } = world;
  const user = await world.user();
  await world.connectGithub(user, `storm-${user.user.id}`, { label: 'storm', expired: true });
  const logFrom = stack.logs.lines.length;
  const refreshesBefore = auth.grants.refresh_token;
  const result: Storm = { ok: 0, errors: 0, errorKinds: {}, refreshes: 0, latencies: [], workersServing: 0 };
  const args = { name: 'github__get_authenticated_user', arguments: {} };
  await Promise.all(
    Array.from({ length: STORM }, async () => {
      const started = performance.now();
      const { status, body } = await callTool(stack.baseUrl, user.apiKey, 'connections_execute', args, AbortSignal.any([signal]));
      if (status === 200 && body.ok === true) {
        result.ok++;
        result.latencies.push(performance.now() - started);
      } else {
        result.errors++;
        const kind = `HTTP ${status} ${body.error?.code ?? ''} ${body.error?.message ?? JSON.stringify(body.error ?? body)}`.slice(0, 160);
        result.errorKinds[kind] = (result.errorKinds[kind] ?? 0) + 1;
      }
    }),
  );
  result.refreshes = auth.grants.refresh_token - refreshesBefore;
  const pids = new Set(
    stack.logs.lines
      .slice(logFrom)
      .filter((line) => line.includes('"msg":"tool call"'))
      .map((line) => JSON.parse(line).pid),
  );
  result.workersServing = workers.filter((w) => pids.has(w.pid)).length;
  return result;
}

function report(input: { startedAt: Date; rounds: number; storms: Storm[] }) {
  const { storms } = input;
  const all = storms.flatMap((s) => s.latencies);
  const overall = all.length ? summary(all) : undefined;
  const rows = storms.map((s, i) => {
    const l = s.latencies.length ? summary(s.latencies) : undefined;
    return {
      storm: i + 1,
      calls: STORM,
      ok: s.ok,
      errors: s.errors,
      'refreshes at auth server': s.refreshes,
      'p50 ms': l ? round(l.p50, 1) : '-',
      'p99 ms': l ? round(l.p99, 1) : '-',
      'max ms': l ? round(l.max, 1) : '-',
      'workers serving': s.workersServing,
    };
  });
  console.log(`\n${STORM} concurrent calls on an expired rotating refresh token, ${WORKERS} worker processes`);
  console.log(formatTable(rows));
  if (overall) console.log(`all storms: p50 ${round(overall.p50, 1)} ms, p99 ${round(overall.p99, 1)} ms (${overall.n} calls)`);
  for (const [i, s] of storms.entries()) {
    for (const [kind, count] of Object.entries(s.errorKinds)) console.log(`  storm ${i + 1}, ${count}× ${kind}`);
  }
  const goalMet = storms.every((s) => s.refreshes === 1 && s.errors === 0);
  console.log(`goal exactly 1 refresh per storm and no errors: ${goalMet ? 'met' : 'NOT met'}`);
  return {
    ...resultHeader(name, input.startedAt, {
      rounds: input.rounds,
      concurrentCalls: STORM,
      workerProcesses: WORKERS,
      rotatingRefreshTokens: true,
    }),
    storms: storms.map(({ latencies, ...rest }) => ({ ...rest, latency: latencies.length ? summary(latencies) : undefined })),
    overall,
    goal: { exactlyOneRefreshPerStorm: true, met: goalMet },
  };
}
