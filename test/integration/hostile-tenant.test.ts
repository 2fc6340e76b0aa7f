import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { percentile } from '../../bench/lib/stats.js';
import { SCHEMA_CHECK_LIMITS } from '../../providers/remote-mcp/schema-checker.js';
import { type Stack, startStack } from '../support/harness.js';
import {
  attack,
  type HonestOp,
  HonestTenant,
  type HostileTenantSizes,
  type HostileWorld,
  prepareHostileWorld,
  REFUSED_KEY_PREFIX,
  startHostileUpstreams,
} from '../support/hostile-tenant.js';

// One tenant's hostile upstream at its worst, another tenant's requests timed side by side, on
// real parts (test/support/hostile-tenant.ts): the hostile server in a process of its own, the
// whole stack (HTTP server and worker) in this one, as one Switchboard process serves every
// tenant. bench/hostile-tenant.ts is the same world at full size, with the figures.

/**
 * The most synchronous work one hostile listing, call or refused key may cost Switchboard's shared
 * event loop: the loop is never blocked longer than this.
 */
const HOSTILE_WORK_BUDGET_MS = 1000;
/**
 * The most another tenant's request may wait beyond its quiet p99: what hostile work may run off the
 * loop at once, a schema's compile and a check in checker threads at their deadlines, holding this
 * machine's two cores. (The benchmark measures the p99 ratio; this bounds the worst request.)
 */
const OTHER_TENANT_WAIT_BUDGET_MS = SCHEMA_CHECK_LIMITS.compileMs + SCHEMA_CHECK_LIMITS.checkMs;

/** Smaller than the benchmark's (300 tools, 64,000 colons): each part alone still costs seconds where it is unbounded. */
const SIZES: HostileTenantSizes = { tools: 6, schemaBytes: 60_000, colons: 32_000, refusedKeys: 250, slowCallMs: 1500 };
const WARM_UP_MS = 2000;
const QUIET_MS = 4000;
const ATTACK = { windowMs: 10_000, searches: 40, calls: 10, bursts: 2 };
const OPS: HonestOp[] = ['execute_tools', 'search_tools', 'slow_call'];

let upstreams: Awaited<ReturnType<typeof startHostileUpstreams>>;
let stack: Stack;
let world: HostileWorld;

beforeAll(async () => {
  upstreams = await startHostileUpstreams(SIZES);
  stack = await startStack({ env: upstreams.env });
  world = await prepareHostileWorld(stack, upstreams, SIZES);
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await upstreams?.close();
});

describe("a tenant's hostile upstream and another tenant", () => {
  it("the shared event loop is never blocked past the hostile work's budget, and no request of tenant B waits past the checker threads' deadlines, while tenant A's upstream does its worst, and B's answers are all right", async () => {
    const b = new HonestTenant(world);
    // Round 0 warms up (the first workflows, B's session at `shared`, opened before any refused key); round 1 is measured.
    b.start();
    await sleep(WARM_UP_MS);
    b.round = 1;
    await sleep(QUIET_MS);
    b.phase = 'attack';
    const report = await attack(world, ATTACK);
    await b.stop();
    if (process.env.HOSTILE_TENANT_SAMPLES)
      writeFileSync(process.env.HOSTILE_TENANT_SAMPLES, JSON.stringify({ report, samples: b.samples }));

    // The attack did what it says: listings of the hostile server, colon calls, refused keys.
    expect(report.searches).toBeGreaterThan(0);
    expect(report.calls).toBeGreaterThan(0);
    expect(report.refusedKeys).toBeGreaterThanOrEqual(SIZES.refusedKeys);
    // The portal tests at most KEY_TESTS_IN_FLIGHT.perUser (apikey-test-call.ts) of one user's keys at once and answers the rest 429
    // at once (portal-key-tests-in-flight.test.ts): some refused keys reached `shared`, a burst's worth did not.
    const refusedAtShared = new Set(world.shared.requests.filter((r) => r.apiKey?.startsWith(REFUSED_KEY_PREFIX)).map((r) => r.apiKey))
      .size;
    expect(refusedAtShared).toBeGreaterThan(0);
    // A burst's posts are not all sent at one instant (the client's connections), so a few more than
    // KEY_TESTS_IN_FLIGHT.perUser per burst may be admitted as earlier tests end; never most of them.
    expect(refusedAtShared).toBeLessThan(report.refusedKeys / 10);
    expect(report.keysNotRefused['429']).toBeGreaterThan(0);
    expect(report.upstream.listPages).toBeGreaterThan(0);

    const waits = OPS.map((op) => {
      const quiet = b.of(op, 'quiet').filter((s) => s.round === 1);
      const underAttack = b.of(op, 'attack');
      expect(quiet.length, op).toBeGreaterThan(0);
      expect(underAttack.length, op).toBeGreaterThan(0);
      const quietP99 = percentile(
        quiet.map((s) => s.ms),
        99,
      );
      const worst = Math.max(...underAttack.map((s) => s.ms));
      return { op, quietP99: Math.round(quietP99), worstUnderAttack: Math.round(worst), waited: Math.round(worst - quietP99) };
    });
    const context = JSON.stringify({ waits, attack: { ...report, maxLoopDelayMs: Math.round(report.maxLoopDelayMs) } });
    // Waited: the worst request under attack beyond what that request costs B when nobody attacks.
    expect
      .soft(
        waits.filter((w) => w.waited > OTHER_TENANT_WAIT_BUDGET_MS),
        context,
      )
      .toEqual([]);
    expect(report.maxLoopDelayMs, context).toBeLessThan(HOSTILE_WORK_BUDGET_MS);
    expect(
      b.samples.filter((s) => s.problem).map((s) => `${s.op} (${s.phase}): ${s.problem}`),
      context,
    ).toEqual([]);
  }, 120_000);
});
