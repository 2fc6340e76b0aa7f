import { type Client, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Logger } from 'pino';
import type { ApprovalStatus } from '../../core/approvals.js';
import { MetaToolError } from '../../core/errors.js';
import { approvalWorkflowId } from '../../core/ids.js';
import { SharedWaits } from '../../core/shared-waits.js';
import type { Pool } from '../../platform/database/database.js';
import { getApproval } from './store/approvals.js';
import { waitForApprovalUpdate } from './workflow.js';

/** How long past a wait's own deadline the client keeps listening before it reads the database. */
const GRACE_MS = 15_000;

/**
 * `wait_for_approval`: an Update on the approval's workflow, which returns the moment the approval
 * is settled (decided and, when approved, its call ran) or the wait's time is up. Temporal admits
 * ten in-flight updates per workflow, so concurrent waiters in this process share one when it
 * ends no later than theirs would. When no worker answers, the database says where it stands.
 * A wait never changes the approval: only a decision or the approval's own TTL does.
 */
export class ApprovalWaiter {
  private readonly waits = new SharedWaits<ApprovalStatus>();

  constructor(
    private readonly temporal: Client,
    private readonly pool: Pool,
    private readonly logger: Logger,
  ) {}

  wait(approvalId: string, timeoutSec: number): Promise<ApprovalStatus> {
    const deadline = Date.now() + timeoutSec * 1000;
    return this.waits.wait(approvalId, deadline, () => this.runUpdate(approvalId, timeoutSec, deadline));
  }

  private async runUpdate(approvalId: string, timeoutSec: number, deadline: number): Promise<ApprovalStatus> {
    const handle = this.temporal.workflow.getHandle(approvalWorkflowId(approvalId));
    try {
      const result = await this.temporal.withDeadline(deadline + GRACE_MS, () =>
        handle.executeUpdate(waitForApprovalUpdate, { args: [{ timeoutSec }] }),
      );
      return result.status;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError || err instanceof WorkflowUpdateFailedError) && Date.now() < deadline) {
        this.logger.error({ approvalId, err: (err as Error).message }, 'approval wait failed');
        throw new MetaToolError({ error: 'Temporal is unavailable; try wait_for_approval again shortly' }, 503);
      }
      // The workflow finished, or no worker answered in time: the database holds where it stands.
      return (await getApproval(this.pool, approvalId))?.status ?? 'CANCELLED';
    }
  }
}
