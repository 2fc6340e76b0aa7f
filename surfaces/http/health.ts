import type { Request, Response } from 'express';
import { RecentResult } from '../../core/recent-result.js';
import type { ServiceContext } from '../../features/context.js';
import { pingDatabase } from '../../platform/database/ping.js';

const CHECK_TIMEOUT_MS = 2_000;
/**
 * How long one probe's answer stands for every /readyz request. A probe costs a Temporal call and
 * a Postgres query; without this, /readyz in a loop (or a crowd of load-balancer checks) would
 * cost one of each per hit. Two seconds is well below any load balancer's check interval.
 */
export const READINESS_CACHE_MS = 2_000;

interface Readiness {
  ok: boolean;
  temporal: 'up' | 'down';
  postgres: 'up' | 'down';
}

async function check(fn: () => Promise<unknown>): Promise<'up' | 'down'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
      }),
    ]);
    return 'up';
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}

async function probe(ctx: ServiceContext): Promise<Readiness> {
  const [temporal, postgres] = await Promise.all([
    check(() => ctx.temporal.withDeadline(Date.now() + CHECK_TIMEOUT_MS, () => ctx.temporal.workflowService.getSystemInfo({}))),
    check(() => pingDatabase(ctx.pool)),
  ]);
  return { ok: temporal === 'up' && postgres === 'up', temporal, postgres };
}

/**
 * One probe in flight at a time per process, its answer reused for READINESS_CACHE_MS; shared by
 * the service port and the operator port of one process.
 */
const cache = new WeakMap<ServiceContext, RecentResult<Readiness>>();

/** /readyz: 200 when Temporal and Postgres both answer, else 503 naming the one that is down (at most READINESS_CACHE_MS old). */
export async function readiness(ctx: ServiceContext, _req: Request, res: Response): Promise<void> {
  let cached = cache.get(ctx);
  if (!cached) {
    cached = new RecentResult(READINESS_CACHE_MS, () => probe(ctx));
    cache.set(ctx, cached);
  }
  const value = await cached.current();
  res.status(value.ok ? 200 : 503).json(value);
}
