import { cpus } from 'node:os';
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { createJot } from '../platform/database/jots.js';
import { createTestUser, type TestUser } from '../test/support/stack.js';
import { alternate, compare, comparisonTable, latencyTable, round } from './lib/alternate.js';
import { withBenchStack } from './lib/bench-stack.js';
import { callTool } from './lib/http.js';
import { positiveIntFromEnv } from './lib/settings.js';
import { formatTable, summary } from './lib/stats.js';

const { temporal } = proto;

/**
 * Results by reference (claim check) against results carried inline: `execute_tools` ×8 of one
 * 20 KB result each, both ways alternating round by round in one process. "inline" is the path
 * before stored results, forced by the threshold setting (RESULT_INLINE_MAX_BYTES at its 1 MiB
 * ceiling); "stored" is the default (2048). Prints latency and the bytes of each batch's
 * Temporal history side by side.
 */
export const name = 'stored-results';

const BATCH = 8;
const RESULT_BYTES = 20_000;
const WARMUP_ROUNDS = 5;
/** The highest setting (1 MiB): 8 results of 20 KB are all carried inline, as before stored results. */
const INLINE_EVERYTHING = 1024 * 1024;

export async function run(): Promise<object> {
  const rounds = positiveIntFromEnv('BENCH_ITERATIONS', 40);
  const timeoutSec = positiveIntFromEnv('BENCH_TIMEOUT_SEC', 600);
  const startedAt = new Date();
  console.log(
    `${name}: ${rounds} rounds (+${WARMUP_ROUNDS} warm-up), execute_tools ×${BATCH} of ${RESULT_BYTES}-byte results, inline vs stored`,
  );
  return withBenchStack({ name, timeoutSec, github: false }, async ({ stack, signal }) => {
    const { config, pool } = stack.services;
    const defaultLimit = config.RESULT_INLINE_MAX_BYTES;
    // One user per side, so each side's batches are found by the user search attribute afterwards.
    const users = { inline: await createTestUser(stack), stored: await createTestUser(stack) };
    const notes = {
      inline: await noteFor(pool, users.inline),
      stored: await noteFor(pool, users.stored),
    };
    const execute = (side: 'inline' | 'stored') => async () => {
      // The server reads the setting for each batch it starts; sides never overlap (alternate runs them in turn).
      config.RESULT_INLINE_MAX_BYTES = side === 'inline' ? INLINE_EVERYTHING : defaultLimit;
      try {
        const executions = Array.from({ length: BATCH }, () => ({ tool: 'jots_get_note', args: { id: notes[side] } }));
        const { status, body } = await callTool(stack.baseUrl, users[side].apiKey, 'execute_tools', { executions }, signal);
        if (status !== 200 || body.results?.length !== BATCH || body.results.some((r: any) => r.result?.id !== notes[side])) {
          throw new Error(`execute_tools answered ${status}: ${JSON.stringify(body).slice(0, 300)}`);
        }
      } finally {
        config.RESULT_INLINE_MAX_BYTES = defaultLimit;
      }
    };
    const samples = await alternate(
      { [`inline (before), ×${BATCH}`]: execute('inline'), [`stored (after), ×${BATCH}`]: execute('stored') },
      { rounds, warmup: WARMUP_ROUNDS, signal },
    );
    const history = {
      inline: await historyBytes(stack.services.temporal, config.TEMPORAL_TASK_QUEUE, users.inline),
      stored: await historyBytes(stack.services.temporal, config.TEMPORAL_TASK_QUEUE, users.stored),
    };
    const sides = Object.fromEntries(Object.entries(samples).map(([side, list]) => [side, summary(list as number[])]));
    const [inlineSide, storedSide] = Object.keys(samples);
    const comparison = compare(samples[inlineSide as keyof typeof samples], samples[storedSide as keyof typeof samples]);
    console.log(`\nlatency per side, ms (${rounds} rounds, sides alternating)`);
    console.log(latencyTable(sides));
    console.log('\nstored − inline, ms');
    console.log(comparisonTable({ 'stored vs inline': comparison }));
    console.log('\nhistory of one batch, bytes (as Temporal stores it)');
    console.log(
      formatTable([
        { side: inlineSide, ...sizeRow(history.inline) },
        { side: storedSide, ...sizeRow(history.stored) },
      ]),
    );
    return {
      benchmark: name,
      startedAt: startedAt.toISOString(),
      parameters: { rounds, warmupRounds: WARMUP_ROUNDS, batch: BATCH, resultBytes: RESULT_BYTES, storedThreshold: defaultLimit },
      host: { node: process.version, platform: process.platform, cpus: cpus().length },
      sides,
      comparison,
      historyBytes: { inline: summary(history.inline), stored: summary(history.stored) },
      samples,
    };
  });
}

/** A note whose get_note result is about RESULT_BYTES of JSON. */
async function noteFor(pool: Parameters<typeof createJot>[0], user: TestUser): Promise<string> {
  const note = await createJot(
    pool,
    { tenantId: user.user.tenantId, userId: user.user.id },
    { title: 'bench', body: 'b'.repeat(RESULT_BYTES - 200), tags: [] },
  );
  return note.id;
}

/** The encoded size of every batch history of `user` (raw, as stored: payloads still encrypted). */
async function historyBytes(client: Client, taskQueue: string, user: TestUser): Promise<number[]> {
  const sizes: number[] = [];
  for await (const wf of client.workflow.list({ query: `TaskQueue = '${taskQueue}' AND SwitchboardUser = '${user.user.id}'` })) {
    const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    sizes.push(temporal.api.history.v1.History.encode(history).finish().length);
  }
  if (!sizes.length) throw new Error(`no batch of ${user.user.id} found in Temporal's visibility`);
  return sizes;
}

const sizeRow = (sizes: number[]) => {
  const s = summary(sizes);
  return { batches: s.n, 'p50 bytes': round(s.p50, 0), 'max bytes': round(s.max, 0) };
};
