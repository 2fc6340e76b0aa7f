import type { Request, Response } from 'express';
import type { ServiceContext } from './context.js';

const CHECK_TIMEOUT_MS = 2_000;

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

/** /readyz: 200 when Temporal and Postgres both answer, else 503 naming the one that is down. */
export async function readiness(ctx: ServiceContext, _req: Request, res: Response): Promise<void> {
  const [temporal, postgres] = await Promise.all([
    check(() => ctx.temporal.withDeadline(Date.now() + CHECK_TIMEOUT_MS, () => ctx.temporal.workflowService.getSystemInfo({}))),
    check(() => ctx.pool.query('SELECT 1')),
  ]);
  const ok = temporal === 'up' && postgres === 'up';
  res.status(ok ? 200 : 503).json({ ok, temporal, postgres });
}
