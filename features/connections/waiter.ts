import { type Client, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Logger } from 'pino';
import type { WaitStatus } from '../../core/connection.js';
import { MetaToolError } from '../../core/errors.js';
import { connectionWorkflowId } from '../../core/ids.js';
import { SharedWaits } from '../../core/shared-waits.js';
import { sharedWaitAnswer, waitAnswer } from '../../core/wait-answer.js';
import type { Pool } from '../../platform/database/database.js';
import { pendingConnectionWaits } from '../../platform/telemetry/metrics.js';
import { finishAttempt, getAttempt } from './store/connection-attempts.js';
import { connectionResolvedSignal, waitForConnectionUpdate } from './workflow.js';

/** How long past a wait's own deadline the client keeps listening before it decides itself. */
const GRACE_MS = 15_000;

/**
 * Waits on a connection workflow's Update. Temporal admits only ten in-flight updates per
 * workflow, so concurrent waiters in this process share one update when it ends no later than
 * they would. A waiter is woken by the callback's signal, not by polling.
 */
export class ConnectionWaiter {
  private readonly waits = new SharedWaits<WaitStatus>();

  constructor(
    private readonly temporal: Client,
    private readonly pool: Pool,
    private readonly logger: Logger,
  ) {}

  async wait(attemptId: string, timeoutSec: number): Promise<WaitStatus> {
    pendingConnectionWaits.inc();
    try {
      return await this.waitShared(attemptId, timeoutSec);
    } finally {
      pendingConnectionWaits.dec();
    }
  }

  private waitShared(attemptId: string, timeoutSec: number): Promise<WaitStatus> {
    const deadline = Date.now() + timeoutSec * 1000;
    return this.waits.wait(
      attemptId,
      deadline,
      () => this.runUpdate(attemptId, timeoutSec, deadline),
      // A wait ending more than a moment earlier is another wait: its TIMEOUT is EXPIRED here.
      (shared, sameWait) => sharedWaitAnswer(shared, { sameWait }),
    );
  }

  private async runUpdate(attemptId: string, timeoutSec: number, deadline: number): Promise<WaitStatus> {
    const handle = this.temporal.workflow.getHandle(connectionWorkflowId(attemptId));
    try {
      const result = await this.temporal.withDeadline(deadline + GRACE_MS, () =>
        handle.executeUpdate(waitForConnectionUpdate, { args: [{ timeoutSec }] }),
      );
      return result.status;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError || err instanceof WorkflowUpdateFailedError) {
        // The workflow already finished: the database holds the final status.
        return this.statusFromDatabase(attemptId);
      }
      if (Date.now() >= deadline) {
        // No worker answered in time. The database decides, exactly as the workflow would.
        this.logger.warn({ attemptId, err: (err as Error).message }, 'connection wait reaped without the worker');
        return waitAnswer(await this.abandon(attemptId), { reapedIt: true });
      }
      this.logger.error({ attemptId, err: (err as Error).message }, 'connection wait failed');
      throw new MetaToolError({ error: 'Temporal is unavailable; try wait_for_connection again shortly' }, 503);
    }
  }

  /**
   * Ends a pending attempt as EXPIRED (its link stops working), as a wait that runs out of time
   * does; answers the attempt's status after (CONNECTED when consent finished first).
   */
  async abandon(attemptId: string) {
    const status = await finishAttempt(this.pool, attemptId, { status: 'EXPIRED' });
    const handle = this.temporal.workflow.getHandle(connectionWorkflowId(attemptId));
    await handle.signal(connectionResolvedSignal, { status: 'EXPIRED' }).catch(() => {});
    return status;
  }

  private async statusFromDatabase(attemptId: string): Promise<WaitStatus> {
    const attempt = await getAttempt(this.pool, attemptId);
    return waitAnswer(attempt?.status, { reapedIt: false });
  }
}
