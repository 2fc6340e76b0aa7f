import {
  ActivityFailure,
  allHandlersFinished,
  CancellationScope,
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  TimeoutFailure,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { APPROVAL_WAIT_MAX_SEC, type ApprovalStatus, isSettled } from '../../core/approvals.js';
import { SA } from '../../core/search-attributes.js';
import type { ApprovalActivities } from './activity-types.js';

/**
 * One approval, from the gated call until its call ran or never will. A person's decision arrives
 * as a signal (the portal records it in Postgres first, under the row's lock); the TTL timer
 * expires it. On approval the workflow runs the call itself, once, through the same code as a
 * tool batch (claim, audit, deadline). Waiters use an Update that returns when the approval is
 * settled or their time is up. The workflow carries ids and statuses only: the call's arguments
 * and its outcome are sealed in the approval's row.
 */

export interface ApprovalWorkflowInput {
  approvalId: string;
  tenantId: string;
  userId: string;
  tool: string;
  /** After this long with no decision, the approval expires. */
  ttlSec: number;
  /** Bounds the approved call's activity: the tool's deadline plus room for the credential and the audit. */
  runTimeoutMs: number;
  /** A workflow to signal (approvalSettledSignal) once the approval is settled: the agent workflow that asked. */
  notifyWorkflowId?: string;
}

interface ApprovalDecisionSignal {
  status: 'APPROVED' | 'DENIED';
}

export interface ApprovalSettled {
  approvalId: string;
  status: ApprovalStatus;
}

export const approvalDecidedSignal = defineSignal<[ApprovalDecisionSignal]>('approvalDecided');
export const waitForApprovalUpdate = defineUpdate<{ status: ApprovalStatus }, [{ timeoutSec: number }]>('waitForApproval');
const approvalStatusQuery = defineQuery<{ status: ApprovalStatus }>('approvalStatus');
/** Sent to `notifyWorkflowId` when the approval is settled (switchboard/workflow waits on it). */
export const approvalSettledSignal = defineSignal<[ApprovalSettled]>('switchboardApprovalSettled');

const HOURLY_CHECK_PATCH = 'approval-hourly-check';
const DB_CHECK_MS = 60 * 60 * 1000;

/** The approved call's activity heartbeats every second. */
const HEARTBEAT_TIMEOUT = '5 seconds';

export async function approvalWorkflow(input: ApprovalWorkflowInput): Promise<{ status: ApprovalStatus }> {
  const db = proxyActivities<ApprovalActivities>({
    startToCloseTimeout: '30 seconds',
    // Closing and recording are idempotent, so they may retry until the database answers.
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });
  // The call itself is never retried: it may have reached the service.
  const once = proxyActivities<ApprovalActivities>({
    startToCloseTimeout: input.runTimeoutMs,
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    retry: { maximumAttempts: 1 },
  });

  let status: ApprovalStatus = 'PENDING';
  const current = (): ApprovalStatus => status;

  setHandler(approvalDecidedSignal, ({ status: decided }) => {
    if (status === 'PENDING') status = decided;
  });
  setHandler(approvalStatusQuery, () => ({ status }));
  setHandler(
    waitForApprovalUpdate,
    async ({ timeoutSec }) => {
      await condition(() => isSettled(current()), timeoutSec * 1000);
      return { status: current() };
    },
    {
      validator: ({ timeoutSec }) => {
        if (!Number.isInteger(timeoutSec) || timeoutSec < 0 || timeoutSec > APPROVAL_WAIT_MAX_SEC) {
          throw new Error(`timeoutSec must be an integer from 0 to ${APPROVAL_WAIT_MAX_SEC}`);
        }
      },
    },
  );

  // Workflow time is deterministic: the TTL is measured from the start, however often a wait resumes.
  const expiresAt = Date.now() + input.ttlSec * 1000;
  // Approvals begun after this change look at the database hourly: a decision whose signal was
  // lost (Temporal unreachable when it was made) runs within the hour, not at the TTL's end.
  const hourly = patched(HOURLY_CHECK_PATCH);
  try {
    for (;;) {
      const left = Math.max(1, expiresAt - Date.now());
      const decided = await condition(() => current() !== 'PENDING', hourly ? Math.min(left, DB_CHECK_MS) : left);
      if (!decided && hourly && Date.now() < expiresAt) {
        const recorded = await db.approvalStatus({ approvalId: input.approvalId });
        if (recorded === 'PENDING') continue;
        status = recorded;
        break;
      }
      if (!decided) {
        // The database decides a race between the timer and a decision (whose signal may still be on its way).
        status = await db.closeUndecidedApproval({ approvalId: input.approvalId, status: 'EXPIRED' });
        break;
      }
      // A decision is the one recorded in the database (the portal records it, under the row's lock,
      // before it signals): a signal no recorded decision backs — sent by anyone else who can reach
      // the namespace — changes nothing, and the approval keeps waiting.
      const recorded = await db.approvalStatus({ approvalId: input.approvalId });
      if (recorded !== 'PENDING') {
        status = recorded;
        break;
      }
      status = 'PENDING';
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // An operator cancelled the approval: its call never runs, unless a decision was recorded first.
    status = await CancellationScope.nonCancellable(() => db.closeUndecidedApproval({ approvalId: input.approvalId, status: 'CANCELLED' }));
  }

  // What follows finishes even when the approval was cancelled: a call approved before the
  // cancellation still runs once and is recorded, and the outcome is always set.
  await CancellationScope.nonCancellable(async () => {
    if (current() === 'APPROVED') {
      status = 'RUNNING';
      try {
        status = (await once.runApprovedCall({ approvalId: input.approvalId })).status;
      } catch (err) {
        // The activity never reported (its worker was lost, or its time ran out): the call may or
        // may not have reached the service, so it is recorded as unknown and never run again.
        const cause = err instanceof ActivityFailure ? err.cause : undefined;
        const timedOut = cause instanceof TimeoutFailure;
        status = (await db.recordLostApprovedCall({ approvalId: input.approvalId, timedOut })).status;
      }
    }

    upsertSearchAttributes([{ key: SA.outcome, value: outcomeValue(current()) }]);
    if (input.notifyWorkflowId) {
      await getExternalWorkflowHandle(input.notifyWorkflowId)
        .signal(approvalSettledSignal, { approvalId: input.approvalId, status: current() })
        // The asking workflow may have ended meanwhile; nothing waits for this signal then.
        .catch(() => undefined);
    }
    await condition(allHandlersFinished);
  });
  return { status };
}

/** The `SwitchboardOutcome` an operator filters on: APPROVED (the call ran), DENIED, EXPIRED or CANCELLED. */
const outcomeValue = (status: ApprovalStatus): string => (status === 'DONE' || status === 'RUNNING' ? 'APPROVED' : status);
