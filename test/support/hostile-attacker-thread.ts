/**
 * The attacker's side of the hostile-tenant world (test/support/hostile-tenant.ts `attack`): its
 * searches, colon calls and bursts of made-up keys, sent from a thread of their own. An attacker
 * sends from its own machine; on the Switchboard process's event loop its client work (hundreds of
 * fetches at once, their answers read) would be counted as harm Switchboard did to tenant B.
 *
 * Self-contained on purpose (only Node's own modules): the thread loads this file alone, with
 * Node's type stripping, outside any bundler or loader.
 */
import { randomBytes } from 'node:crypto';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';

export interface AttackerPlan {
  baseUrl: string;
  apiKey: string;
  /** The opened API-key form of the keyed server (test/support/portal-session.ts openKeyForm). */
  form: { url: string; cookie: string; csrf: string; token: string };
  /** Tool and arguments of the colon call; the search's integration. */
  call: { tool: string; args: Record<string, unknown> };
  searchIntegration: string;
  refusedKeyPrefix: string;
  keysPerBurst: number;
  windowMs: number;
  searches: number;
  calls: number;
  bursts: number;
  /** This thread's niceness (hostile-upstream.ts remoteNice: why). */
  nice: number;
}

export interface AttackerCounts {
  searches: number;
  calls: number;
  refusedKeys: number;
  /** Refused-key posts the portal did not answer 400 "refused this key", by status (0: no answer). */
  keysNotRefused: Record<string, number>;
  /** Attack requests that failed outright (their answers are the attacker's business). */
  errors: number;
  /** The longest each kind of attack action took, ms (a search, a colon call, a burst of refused keys). */
  slowest: { search: number; call: number; burst: number };
}

async function run(plan: AttackerPlan): Promise<AttackerCounts> {
  const end = performance.now() + plan.windowMs;
  const counts: AttackerCounts = {
    searches: 0,
    calls: 0,
    refusedKeys: 0,
    keysNotRefused: {},
    errors: 0,
    slowest: { search: 0, call: 0, burst: 0 },
  };
  const repeat = async (kind: keyof AttackerCounts['slowest'], max: number, action: () => Promise<void>) => {
    for (let i = 0; i < max && performance.now() < end; i++) {
      const at = performance.now();
      await action().catch(() => void counts.errors++);
      counts.slowest[kind] = Math.max(counts.slowest[kind], Math.round(performance.now() - at));
    }
  };
  const tool = async (name: string, args: unknown) => {
    const res = await fetch(`${plan.baseUrl}/v1/tools/${name}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${plan.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(args),
    });
    await res.arrayBuffer();
  };
  const postKey = async (key: string) => {
    const res = await fetch(plan.form.url, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: plan.form.cookie, 'content-type': 'application/x-www-form-urlencoded', origin: new URL(plan.form.url).origin },
      body: new URLSearchParams({ _csrf: plan.form.csrf, _form: plan.form.token, field_apiKey: key }),
    });
    await res.arrayBuffer();
    return res.status;
  };
  await Promise.all([
    repeat('search', plan.searches, async () => {
      counts.searches++;
      await tool('search_tools', { query: 'hostile tool', integration: plan.searchIntegration, limit: 5 });
    }),
    repeat('call', plan.calls, async () => {
      counts.calls++;
      await tool('execute_tools', { executions: [plan.call] });
    }),
    repeat('burst', plan.bursts, async () => {
      const statuses = await Promise.all(
        Array.from({ length: plan.keysPerBurst }, () =>
          postKey(`${plan.refusedKeyPrefix}${randomBytes(12).toString('hex')}`).catch(() => 0),
        ),
      );
      counts.refusedKeys += statuses.length;
      for (const status of statuses.filter((s) => s !== 400)) counts.keysNotRefused[status] = (counts.keysNotRefused[status] ?? 0) + 1;
    }),
  ]);
  return counts;
}

if (parentPort && workerData) {
  const port = parentPort;
  // On Linux a thread's priority is its own: pid 0 here is this thread, not the process.
  setPriority(0, (workerData as AttackerPlan).nice);
  run(workerData as AttackerPlan).then(
    (counts) => port.postMessage({ counts }),
    (err: Error) => port.postMessage({ error: err.message }),
  );
}
