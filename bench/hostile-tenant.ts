import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type AttackReport,
  attack,
  type HonestOp,
  HonestTenant,
  type HostileTenantSizes,
  prepareHostileWorld,
  startHostileUpstreams,
} from '../test/support/hostile-tenant.js';
import { remoteNice } from '../test/support/hostile-upstream.js';
import { round } from './lib/alternate.js';
import { withBenchStack } from './lib/bench-stack.js';
import { beginRun, resultHeader } from './lib/benchmark.js';
import { countFromEnv, positiveIntFromEnv } from './lib/settings.js';
import { formatTable, type Summary, summary } from './lib/stats.js';

/**
 * One tenant's hostile upstream at its worst, another tenant measured beside it in one run
 * (test/support/hostile-tenant.ts is the world, shared with test/integration/hostile-tenant.test.ts):
 * quiet and attack phases alternate while tenant B runs execute_tools on a built-in, search_tools
 * and a slow call on an operator's keyed server, one request at a time each. Prints B's p50/p99
 * quiet against under attack and the ratio (target: execute_tools p99 within 2×), and how long
 * the attack kept this process's event loop blocked.
 */
export const name = 'hostile-tenant';

const WARMUP_SEC = 3;
/** What one attack phase may start at most, besides its time window (each 0-able, for an ablation: which part of the attack costs B what). */
const attackCounts = () => ({
  searches: countFromEnv('BENCH_HOSTILE_SEARCHES', 1000),
  calls: countFromEnv('BENCH_HOSTILE_CALLS', 1000),
  bursts: countFromEnv('BENCH_HOSTILE_BURSTS', 20),
});
const OPS: HonestOp[] = ['execute_tools', 'search_tools', 'slow_call'];
const TARGET_RATIO = 2;

export async function run(): Promise<object> {
  const rounds = positiveIntFromEnv('BENCH_HOSTILE_ROUNDS', 3);
  const phaseSec = positiveIntFromEnv('BENCH_PHASE_SEC', 10);
  const sizes: HostileTenantSizes = {
    tools: positiveIntFromEnv('BENCH_HOSTILE_TOOLS', 300),
    schemaBytes: 60_000,
    colons: positiveIntFromEnv('BENCH_HOSTILE_COLONS', 64_000),
    refusedKeys: positiveIntFromEnv('BENCH_REFUSED_KEYS', 250),
    slowCallMs: 1500,
  };
  // Unbounded work cannot be interrupted: on code that does it, one phase's listing can take minutes.
  const { timeoutSec, startedAt } = beginRun(
    name,
    `${rounds} rounds of ${phaseSec} s quiet then ${phaseSec} s attack (${sizes.tools} tools of ~${sizes.schemaBytes / 1000} KB schemas, ${sizes.colons} colons, ${sizes.refusedKeys} refused keys a burst; the hostile upstream and the attacker at nice ${remoteNice()})`,
    1800,
  );
  const counts = attackCounts();
  const upstreams = await startHostileUpstreams(sizes);
  try {
    return await withBenchStack({ name, timeoutSec, github: false, env: upstreams.env }, async ({ stack, signal }) => {
      const world = await prepareHostileWorld(stack, upstreams, sizes);
      const b = new HonestTenant(world);
      b.round = -1;
      b.start();
      const attacks: AttackReport[] = [];
      const quietLoopDelayMs: number[] = [];
      try {
        await sleep(WARMUP_SEC * 1000, undefined, { signal });
        for (let r = 0; r < rounds; r++) {
          b.round = r;
          b.phase = 'quiet';
          const loopDelay = monitorEventLoopDelay({ resolution: 10 });
          loopDelay.enable();
          await sleep(phaseSec * 1000, undefined, { signal });
          loopDelay.disable();
          quietLoopDelayMs.push(loopDelay.max / 1e6);
          b.phase = 'attack';
          const report = await attack(world, { windowMs: phaseSec * 1000, ...counts });
          attacks.push(report);
          console.log(
            `${name}: round ${r + 1}/${rounds}: attack over in ${(report.ms / 1000).toFixed(1)} s, event loop blocked up to ${Math.round(report.maxLoopDelayMs)} ms`,
          );
          signal.throwIfAborted();
        }
      } finally {
        b.phase = 'quiet';
        await b.stop();
      }
      const measured = b.samples.filter((s) => s.round >= 0);
      const sides: Record<string, { quiet: Summary; attack: Summary; ratio: { p50: number; p99: number } }> = {};
      for (const op of OPS) {
        const of = (phase: 'quiet' | 'attack') => summary(measured.filter((s) => s.op === op && s.phase === phase).map((s) => s.ms));
        const [quiet, underAttack] = [of('quiet'), of('attack')];
        sides[op] = { quiet, attack: underAttack, ratio: { p50: underAttack.p50 / quiet.p50, p99: underAttack.p99 / quiet.p99 } };
      }
      const wrong = measured.filter((s) => s.problem);

      console.log(`\ntenant B, ms (one request at a time per op; a request that saw any part of an attack counts as under attack)`);
      console.log(
        formatTable(
          OPS.map((op) => {
            const { quiet, attack: underAttack, ratio } = sides[op];
            return {
              op,
              'n quiet': quiet.n,
              'n attack': underAttack.n,
              'quiet p50': round(quiet.p50, 1),
              'attack p50': round(underAttack.p50, 1),
              'quiet p99': round(quiet.p99, 1),
              'attack p99': round(underAttack.p99, 1),
              'attack max': round(underAttack.max, 1),
              'ratio p50': `${ratio.p50.toFixed(2)}×`,
              'ratio p99': `${ratio.p99.toFixed(2)}×`,
              wrong: wrong.filter((s) => s.op === op).length,
            };
          }),
        ),
      );
      console.log('\nthe attacks');
      console.log(
        formatTable(
          attacks.map((a, i) => ({
            round: i + 1,
            's until over': round(a.ms / 1000, 1),
            searches: a.searches,
            'colon calls': a.calls,
            'keys posted': a.refusedKeys,
            'answered 429': a.keysNotRefused['429'] ?? 0,
            'list pages served': a.upstream.listPages,
            'list_changed sent': a.upstream.announced,
            'slowest search ms': a.slowest.search,
            'slowest call ms': a.slowest.call,
            'loop blocked max ms': round(a.maxLoopDelayMs, 0),
            'quiet loop max ms': round(quietLoopDelayMs[i], 0),
          })),
        ),
      );
      const ratio = sides.execute_tools.ratio.p99;
      console.log(
        `\nexecute_tools p99 under attack / quiet: ${ratio.toFixed(2)}× (target ≤ ${TARGET_RATIO}×): ${ratio <= TARGET_RATIO ? 'met' : 'NOT met'}; wrong answers to B: ${wrong.length}`,
      );
      for (const s of wrong.slice(0, 5)) console.log(`  ${s.op} (${s.phase}): ${s.problem?.slice(0, 200)}`);
      return {
        ...resultHeader(name, startedAt, {
          rounds,
          phaseSec,
          warmupSec: WARMUP_SEC,
          sizes,
          attackCounts: counts,
          remoteNice: remoteNice(),
        }),
        sides,
        executeToolsP99Ratio: ratio,
        targetRatio: TARGET_RATIO,
        wrongAnswers: wrong,
        attacks,
        quietLoopDelayMs,
        samples: measured,
      };
    });
  } finally {
    await upstreams.close();
  }
}
