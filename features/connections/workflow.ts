import {
  allHandlersFinished,
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { type AttemptStatus, WAIT_TIMEOUT_MAX_SEC, type WaitStatus } from '../../core/connection.js';
import { SA } from '../../core/search-attributes.js';
import { waitAnswer } from '../../core/wait-answer.js';
import type { ConnectionActivities } from './expire-activity.js';

/**
 * One connection attempt, from `connect` until it is final. The OAuth callback (or the portal)
 * signals the outcome; waiters use an Update whose handler waits on a condition, so a waiter
 * learns of the outcome the moment the signal lands — no polling. The workflow carries ids and
 * statuses only.
 */

export interface ConnectionWorkflowInput {
  attemptId: string;
  tenantId: string;
  userId: string;
  integration: string;
  /** After this long with no outcome, the attempt expires on its own. */
  ttlSec: number;
}

export interface ConnectionWorkflowResult {
  status: AttemptStatus;
  accountId?: string;
}

export interface ConnectionOutcome {
  status: 'CONNECTED' | 'FAILED' | 'EXPIRED';
  accountId?: string;
}

export const connectionResolvedSignal = defineSignal<[ConnectionOutcome]>('connectionResolved');
export const waitForConnectionUpdate = defineUpdate<{ status: WaitStatus }, [{ timeoutSec: number }]>('waitForConnection');
export const connectionStatusQuery = defineQuery<ConnectionWorkflowResult>('connectionStatus');

const { expireConnectionAttempt } = proxyActivities<ConnectionActivities>({
  startToCloseTimeout: '30 seconds',
  // Expiring is idempotent, so it may retry until the database answers.
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export async function connectionWorkflow(input: ConnectionWorkflowInput): Promise<ConnectionWorkflowResult> {
  let status: AttemptStatus = 'PENDING';
  let accountId: string | undefined;
  // Read through a function: TypeScript would otherwise narrow `status` across the awaits.
  const current = (): AttemptStatus => status;

  const settle = (outcome: ConnectionOutcome) => {
    if (status !== 'PENDING') return;
    status = outcome.status;
    accountId = outcome.accountId;
  };

  /** Expires the attempt in the database, which decides a race with a callback. */
  const reap = async () => {
    const decided = await expireConnectionAttempt({ attemptId: input.attemptId });
    // A callback may have connected it a moment before; its signal brings the account id.
    if (decided === 'CONNECTED') await condition(() => status !== 'PENDING', '1 minute');
    settle({ status: decided === 'PENDING' ? 'EXPIRED' : decided });
  };

  setHandler(connectionResolvedSignal, settle);
  setHandler(connectionStatusQuery, () => ({ status, accountId }));
  setHandler(
    waitForConnectionUpdate,
    async ({ timeoutSec }): Promise<{ status: WaitStatus }> => {
      let reapedIt = false;
      if (status === 'PENDING' && !(await condition(() => status !== 'PENDING', timeoutSec * 1000))) {
        await reap();
        reapedIt = true;
      }
      return { status: waitAnswer(current(), { reapedIt }) };
    },
    {
      validator: ({ timeoutSec }) => {
        if (!Number.isInteger(timeoutSec) || timeoutSec < 0 || timeoutSec > WAIT_TIMEOUT_MAX_SEC) {
          throw new Error(`timeoutSec must be an integer from 0 to ${WAIT_TIMEOUT_MAX_SEC}`);
        }
      },
    },
  );

  const settled = await condition(() => status !== 'PENDING', input.ttlSec * 1000);
  if (!settled) await reap();
  upsertSearchAttributes([{ key: SA.outcome, value: status }]);
  await condition(allHandlersFinished);
  return { status, accountId };
}
