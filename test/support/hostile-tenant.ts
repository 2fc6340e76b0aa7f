import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { upstreamEntrySchema } from '../../core/upstream-entry.js';
import { insertAccount } from '../../features/accounts/store/accounts.js';
import { createJot } from '../../platform/database/jots.js';
import { addTenantUpstream } from '../../platform/database/tenant-upstream-servers.js';
import type { AttackerCounts, AttackerPlan } from './hostile-attacker-thread.js';
import {
  HOSTILE_URL_FIELD,
  type HostileUpstream,
  type HostileUpstreamCounts,
  hostileToolName,
  remoteNice,
  startHostileUpstream,
} from './hostile-upstream.js';
import { startTestUpstream, type TestUpstream } from './mcp-upstream-server.js';
import { openKeyForm, type PortalSession, signInToPortal } from './portal-session.js';
import { createTestUser, type Stack, type TestUser } from './stack.js';

/**
 * One Switchboard, two tenants (for the hostile-tenant benchmark and integration test). Tenant A's
 * administrator adds a hostile upstream MCP server of its own and attacks with everything a
 * tenant and its upstream can do at once: a listing of many tools with ~60 KB schemas of
 * `format: "url"` fields, forced again and again by notifications/tools/list_changed and A's
 * searches; calls whose URL argument is "http://" and tens of thousands of colons; hundreds of
 * refused API keys posted at once through the portal's API-key form of the operator's keyed
 * server `shared`. Tenant B, honest, meanwhile runs `execute_tools` on a built-in (jots_get_note),
 * `search_tools`, and a slow call on `shared` with its own key; every request is timed and checked.
 */

export interface HostileTenantSizes {
  /** Tools the hostile upstream lists, and the JSON size of each one's input schema. */
  tools: number;
  schemaBytes: number;
  /** Colons after "http://" in the attacker's URL argument. */
  colons: number;
  /** Refused API keys posted at once, per burst. */
  refusedKeys: number;
  /** B's call on `shared` (its `wait` tool) takes this long at the server. */
  slowCallMs: number;
}

/** Every refused key the attacker posts begins with this (as `shared` sees them in its requests). */
export const REFUSED_KEY_PREFIX = 'refused-';
const SHARED_KEY = `shared-key-${randomBytes(8).toString('hex')}`;
/** The hostile upstream's answers to calls take this long (holding the call's slot the while). */
const HOSTILE_CALL_MS = 2000;
/**
 * `shared` answers a wrong key after this long, as services that slow down key guessing do: the
 * refused keys' sessions are then all opening at once, as on a server far away or under load.
 */
const SHARED_REFUSAL_DELAY_MS = 3000;
const HOSTILE_ANNOUNCE_MS = 250;
/** Tools per tools/list page: 25 × 60 KB is well under one response's limit (CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES). */
const HOSTILE_PAGE_SIZE = 25;
/** Most requests one of B's loops sends, however long a phase lasts. */
const HONEST_MAX_REQUESTS = 100_000;
/** Settling after an attack: probes of the event loop, each PROBE_MS, until two in a row are late by less than SETTLED_LAG_MS. */
const PROBE_MS = 250;
const SETTLED_LAG_MS = 100;
const MAX_SETTLE_PROBES = 200;

export interface HostileWorld {
  stack: Stack;
  hostile: HostileUpstream;
  shared: TestUpstream;
  attacker: TestUser;
  honest: TestUser;
  /** B's note, which its execute_tools reads. */
  noteId: string;
  attackerPortal: PortalSession;
  sizes: HostileTenantSizes;
}

/** The upstream servers, and what Switchboard's environment must say of them; started before the stack. */
export async function startHostileUpstreams(sizes: HostileTenantSizes) {
  const [hostile, shared] = await Promise.all([
    startHostileUpstream({
      tools: sizes.tools,
      schemaBytes: sizes.schemaBytes,
      pageSize: HOSTILE_PAGE_SIZE,
      callMs: HOSTILE_CALL_MS,
      announceMs: HOSTILE_ANNOUNCE_MS,
    }),
    startTestUpstream({ apiKey: SHARED_KEY, refusalDelayMs: SHARED_REFUSAL_DELAY_MS }),
  ]);
  const env = {
    UPSTREAM_MCP_ALLOWED_HOSTS: '127.0.0.1',
    UPSTREAM_MCP_SERVERS: JSON.stringify([
      {
        name: 'shared',
        displayName: 'Shared keyed server',
        url: shared.url,
        auth: { type: 'apikey', header: 'X-Api-Key', label: 'Shared key' },
      },
    ]),
    // Rate limits would stop the attacker before it costs anything; the harm measured is the work itself.
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_CALLS_PER_MINUTE: '100000000',
    TENANT_RATE_LIMIT_CALLS_PER_MINUTE: '100000000',
  };
  return { hostile, shared, env, close: () => Promise.all([hostile.close(), shared.close()]).then(() => {}) };
}

/** Tenant A (its administrator, its hostile server added as the tenant's own `hostile`) and tenant B (a member with a note and a key for `shared`). */
export async function prepareHostileWorld(
  stack: Stack,
  upstreams: { hostile: HostileUpstream; shared: TestUpstream },
  sizes: HostileTenantSizes,
): Promise<HostileWorld> {
  const { pool, keyring } = stack.services;
  const attacker = await createTestUser(stack, { roles: ['admin'] });
  const entry = upstreamEntrySchema.parse({ name: 'hostile', displayName: 'Hostile', url: upstreams.hostile.url });
  await addTenantUpstream(pool, keyring, { tenantId: attacker.user.tenantId, entry, createdBy: attacker.user.id });
  const honest = await createTestUser(stack);
  await insertAccount(pool, keyring, {
    tenantId: honest.user.tenantId,
    ownerUserId: honest.user.id,
    integration: 'shared',
    label: 'Shared key',
    credential: { type: 'apikey', fields: { apiKey: SHARED_KEY }, boundTo: `mcp:${upstreams.shared.url}` },
  });
  const note = await createJot(pool, { tenantId: honest.user.tenantId, userId: honest.user.id }, { title: 'B', body: 'honest', tags: [] });
  // A first call with B's key lists `shared` (a keyed server's tools are known from a listing with a key).
  const first = await honest.call('connections_execute', { name: 'shared__echo', arguments: { message: 'hello' } });
  if (first.body?.ok !== true) throw new Error(`B's first call on shared answered ${first.status} ${JSON.stringify(first.body)}`);
  const attackerPortal = await signInToPortal(stack, attacker);
  return { stack, ...upstreams, attacker, honest, noteId: note.id, attackerPortal, sizes };
}

export type HonestOp = 'execute_tools' | 'search_tools' | 'slow_call';
export type Phase = 'quiet' | 'attack';

export interface HonestSample {
  op: HonestOp;
  /** `attack` if an attack was on when it started or when it ended. */
  phase: Phase;
  /** Round of the run it started in. */
  round: number;
  ms: number;
  /** What was wrong with the answer, if anything. */
  problem?: string;
}

/** Tenant B's three loops, each one request at a time, tagging every request with the phase it started in. */
export class HonestTenant {
  readonly samples: HonestSample[] = [];
  phase: Phase = 'quiet';
  round = 0;
  private readonly stopped = new AbortController();
  private loops: Promise<void>[] = [];

  constructor(private readonly world: HostileWorld) {}

  start(): void {
    const { honest, noteId, sizes } = this.world;
    const first = (body: any) => body?.results?.[0];
    this.loops = [
      this.loop('execute_tools', async () => {
        const { status, body } = await honest.call('execute_tools', { executions: [{ tool: 'jots_get_note', args: { id: noteId } }] });
        return status === 200 && first(body)?.result?.id === noteId ? undefined : `${status} ${JSON.stringify(body).slice(0, 300)}`;
      }),
      this.loop('search_tools', async () => {
        const { status, body } = await honest.call('search_tools', { query: 'get a note', limit: 5 });
        const names = (body?.tools ?? []).map((t: { name: string }) => t.name);
        return status === 200 && names.includes('jots_get_note') ? undefined : `${status} ${JSON.stringify(body).slice(0, 300)}`;
      }),
      this.loop('slow_call', async () => {
        const { status, body } = await honest.call('execute_tools', {
          executions: [{ tool: 'shared_wait', args: { ms: sizes.slowCallMs } }],
        });
        return status === 200 && first(body)?.result === `waited ${sizes.slowCallMs}`
          ? undefined
          : `${status} ${JSON.stringify(body).slice(0, 300)}`;
      }),
    ];
  }

  async stop(): Promise<void> {
    this.stopped.abort();
    await Promise.all(this.loops);
  }

  /** B's samples of one op, optionally one phase. */
  of(op: HonestOp, phase?: Phase): HonestSample[] {
    return this.samples.filter((s) => s.op === op && (!phase || s.phase === phase));
  }

  private async loop(op: HonestOp, request: () => Promise<string | undefined>): Promise<void> {
    for (let i = 0; i < HONEST_MAX_REQUESTS && !this.stopped.signal.aborted; i++) {
      const { phase: startedIn, round } = this;
      const started = performance.now();
      let problem: string | undefined;
      try {
        problem = await request();
      } catch (err) {
        problem = (err as Error).message;
      }
      // A request that saw any part of an attack counts as under attack.
      const phase = startedIn === 'attack' || this.phase === 'attack' ? 'attack' : 'quiet';
      this.samples.push({ op, phase, round, ms: performance.now() - started, ...(problem && { problem }) });
    }
  }
}

export interface AttackLimits {
  /** No attack action starts after this long; those running are waited for. */
  windowMs: number;
  searches: number;
  calls: number;
  bursts: number;
}

/** What the attacker's thread counted (hostile-attacker-thread.ts), and what its attack cost here. */
export interface AttackReport extends AttackerCounts {
  /** From the attack's start until its work was over (the actions ended and the event loop settled). */
  ms: number;
  upstream: HostileUpstreamCounts;
  /** The longest the event loop of this process was blocked, from the attack's start until settled. */
  maxLoopDelayMs: number;
}

/**
 * One attack: the hostile upstream announces tool-list changes while the attacker searches its
 * tenant (each search lists the server again), calls a tool with the colon URL, and posts bursts
 * of refused keys, each loop bounded by count and by `windowMs`. Resolves once every action ended
 * and the event loop is on time again (work a search left running behind its answer included).
 */
export async function attack(world: HostileWorld, limits: AttackLimits): Promise<AttackReport> {
  const { attacker, hostile, sizes } = world;
  const form = await openKeyForm(world.attackerPortal, 'shared');
  const plan: AttackerPlan = {
    baseUrl: world.stack.baseUrl,
    apiKey: attacker.apiKey,
    form: form.parts,
    call: { tool: `hostile_${hostileToolName(0)}`, args: { [HOSTILE_URL_FIELD]: `http://${':'.repeat(sizes.colons)}` } },
    searchIntegration: 'hostile',
    refusedKeyPrefix: REFUSED_KEY_PREFIX,
    keysPerBurst: sizes.refusedKeys,
    nice: remoteNice(),
    ...limits,
  };
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const started = performance.now();
  hostile.attack();
  const counts = await inAttackerThread(plan);
  const upstream = await hostile.quiet();
  await settle();
  loopDelay.disable();
  return { ms: performance.now() - started, ...counts, upstream, maxLoopDelayMs: loopDelay.max / 1e6 };
}

/** Runs the attacker's requests in a thread of their own (why: hostile-attacker-thread.ts); resolves with its counts. */
function inAttackerThread(plan: AttackerPlan): Promise<AttackerCounts> {
  return new Promise((resolve, reject) => {
    const thread = new Worker(new URL('./hostile-attacker-thread.ts', import.meta.url), { workerData: plan });
    thread.once('message', (message: { counts?: AttackerCounts; error?: string }) => {
      if (message.counts) resolve(message.counts);
      else reject(new Error(`the attacker's thread failed: ${message.error}`));
      void thread.terminate();
    });
    thread.once('error', reject);
    thread.once('exit', (code) => reject(new Error(`the attacker's thread exited (${code}) before its counts`)));
  });
}

/** Waits until the event loop is on time again: two probes in a row late by less than SETTLED_LAG_MS (bounded in count). */
async function settle(): Promise<void> {
  let onTime = 0;
  for (let probe = 0; probe < MAX_SETTLE_PROBES && onTime < 2; probe++) {
    const before = performance.now();
    await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
    onTime = performance.now() - before - PROBE_MS < SETTLED_LAG_MS ? onTime + 1 : 0;
  }
}
