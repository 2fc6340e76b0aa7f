import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { completeConnection } from '../features/connections/complete.js';
import { getAttempt } from '../features/connections/store/connection-attempts.js';
import { createPool, type Pool } from '../platform/database/database.js';
import type { Stack } from '../test/support/stack.js';
import { withBenchStack } from './lib/bench-stack.js';
import { beginRun, resultHeader } from './lib/benchmark.js';
import { mapWithConcurrency } from './lib/concurrency.js';
import { callTool } from './lib/http.js';
import { positiveIntFromEnv } from './lib/settings.js';
import { formatTable, type Summary, summary } from './lib/stats.js';

/**
 * How long after the OAuth callback's response a waiting agent learns CONNECTED: through
 * `wait_for_connection` (a workflow Update woken by the callback's signal), and — on the very same
 * completions — through a waiter that polls the attempt's status once a second, the baseline.
 * Goal (issue): event-driven p50 under 50 ms.
 */
export const name = 'connection-wait';

const GOAL_P50_MS = 50;
/** Fixed for every run, and reported with its results. */
const PARAMETERS = {
  pollIntervalMs: 1_000,
  /** The agent's wait_for_connection timeout: far longer than a completion takes here. */
  waitTimeoutSec: 120,
  /**
   * Pause between starting the waiters and completing, so the Update is in the workflow before the
   * signal (otherwise the wait would answer from the database and measure nothing). Loopback needs
   * a few milliseconds; this is generous.
   */
  settleMs: 250,
  /** Connections run first and left out of the statistics: cold caches, JIT, first worker tasks. */
  warmupConnections: 5,
} as const;

interface Sample {
  attemptId: string;
  /** Callback's response → wait_for_connection's HTTP response. */
  eventDrivenMs: number;
  /** Callback's response → the one-second poller's read that shows CONNECTED. */
  pollingMs: number;
  /** How long completeConnection itself took (the callback's own cost after the code exchange). */
  completeMs: number;
}

export async function run(): Promise<object> {
  const connections = positiveIntFromEnv('BENCH_CONNECTIONS', 200);
  const concurrency = positiveIntFromEnv('BENCH_CONCURRENCY', 10);
  const what = `${connections} connections, ${concurrency} at a time (+${PARAMETERS.warmupConnections} warm-up)`;
  const { timeoutSec, startedAt } = beginRun(name, what);

  // Any client id makes GitHub connectable; no code is ever exchanged.
  const env = { GITHUB_CLIENT_ID: 'bench-client', GITHUB_CLIENT_SECRET: 'bench-secret' };
  return withBenchStack({ name, timeoutSec, github: false, env }, async ({ stack, user, signal }) => {
    const pollPool = createPool({ url: stack.env.DATABASE_URL, schema: stack.schema, poolMax: concurrency + 1 });
    try {
      const context: Run = { stack, apiKey: user.apiKey, pollPool, signal };
      await mapWithConcurrency(range(PARAMETERS.warmupConnections), concurrency, () => measureOne(context));
      const samples = await mapWithConcurrency(range(connections), concurrency, () => measureOne(context));
      return report({ startedAt, connections, concurrency, samples });
    } finally {
      await pollPool.end();
    }
  });
}

interface Run {
  stack: Stack;
  apiKey: string;
  /** The poller's own pool, so its reads never queue behind the server's. */
  pollPool: Pool;
  signal: AbortSignal;
}

/** One connection: connect, both waiters, a completion at a random poll phase, both arrivals. */
async function measureOne({ stack, apiKey, pollPool, signal }: Run): Promise<Sample> {
  const connect = await callTool(stack.baseUrl, apiKey, 'connect', { integration: 'github' }, signal);
  if (connect.status !== 200) throw new Error(`connect answered ${connect.status}: ${JSON.stringify(connect.body)}`);
  const attemptId: string = connect.body.connectionId;
  const attempt = await getAttempt(stack.services.pool, attemptId);
  if (!attempt) throw new Error(`attempt ${attemptId} is not in the database`);

  const eventDriven = callTool(
    stack.baseUrl,
    apiKey,
    'wait_for_connection',
    { connectionId: attemptId, timeoutSec: PARAMETERS.waitTimeoutSec },
    signal,
  ).then((answer) => ({ answer, at: performance.now() }));
  const polled = pollUntilConnected(pollPool, attemptId, signal);
  // Unhandled until awaited below; a failure before then must not crash the process.
  eventDriven.catch(() => {});
  polled.catch(() => {});

  // Uniform over one poll interval, so the poller's phase at completion is uniform too.
  await sleep(PARAMETERS.settleMs + Math.random() * PARAMETERS.pollIntervalMs, undefined, { signal });
  const completeStarted = performance.now();
  const account = await completeConnection(stack.services, attempt, {
    label: 'bench',
    credential: { type: 'oauth2', accessToken: 'bench-token' },
  });
  // The callback sends its response right after completeConnection resolves.
  const callbackResponded = performance.now();
  if (!account) throw new Error(`attempt ${attemptId} was no longer PENDING at completion`);

  const [{ answer, at: waiterAnswered }, pollerSaw] = await Promise.all([eventDriven, polled]);
  if (answer.status !== 200 || answer.body.status !== 'CONNECTED') {
    throw new Error(`wait_for_connection answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  }
  return {
    attemptId,
    eventDrivenMs: waiterAnswered - callbackResponded,
    pollingMs: pollerSaw - callbackResponded,
    completeMs: callbackResponded - completeStarted,
  };
}

/**
 * The baseline: reads the attempt every PARAMETERS.pollIntervalMs at a fixed rate (a slow read does not
 * shift later ticks) and answers the moment a read shows CONNECTED.
 */
async function pollUntilConnected(pool: Pool, attemptId: string, signal: AbortSignal): Promise<number> {
  const start = performance.now();
  for (let tick = 1; ; tick++) {
    const attempt = await getAttempt(pool, attemptId);
    if (attempt?.status === 'CONNECTED') return performance.now();
    if (attempt?.status !== 'PENDING') throw new Error(`poller found attempt ${attemptId} ${attempt?.status ?? 'missing'}`);
    const nextTick = start + tick * PARAMETERS.pollIntervalMs;
    await sleep(Math.max(0, nextTick - performance.now()), undefined, { signal });
  }
}

function report(input: { startedAt: Date; connections: number; concurrency: number; samples: Sample[] }): object {
  const eventDriven = summary(input.samples.map((s) => s.eventDrivenMs));
  const polling = summary(input.samples.map((s) => s.pollingMs));
  const complete = summary(input.samples.map((s) => s.completeMs));
  const ratio = { p50: polling.p50 / eventDriven.p50, p99: polling.p99 / eventDriven.p99 };
  const goalMet = eventDriven.p50 < GOAL_P50_MS;

  const row = (kind: string, s: Summary) => ({
    'waiter kind': kind,
    n: s.n,
    'p50 ms': ms(s.p50),
    'p99 ms': ms(s.p99),
    'max ms': ms(s.max),
  });
  console.log('\ncallback response → waiter sees CONNECTED');
  console.log(
    formatTable([row('event-driven (wait_for_connection)', eventDriven), row(`polling every ${PARAMETERS.pollIntervalMs} ms`, polling)]),
  );
  console.log(`\nratio polling / event-driven: p50 ${ratio.p50.toFixed(1)}×, p99 ${ratio.p99.toFixed(1)}×`);
  console.log(`completeConnection itself (before the response): p50 ${ms(complete.p50)} ms, p99 ${ms(complete.p99)} ms`);
  console.log(`goal event-driven p50 < ${GOAL_P50_MS} ms: ${goalMet ? 'met' : 'NOT met'} (${ms(eventDriven.p50)} ms)`);

  return {
    ...resultHeader(name, input.startedAt, { ...PARAMETERS, connections: input.connections, concurrency: input.concurrency }),
    eventDriven,
    polling,
    completeConnection: complete,
    ratio,
    goal: { eventDrivenP50BelowMs: GOAL_P50_MS, met: goalMet },
    samples: input.samples,
  };
}

const ms = (value: number) => Math.round(value * 10) / 10;
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
