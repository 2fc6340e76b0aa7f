import { proxyActivities } from '@temporalio/workflow';
import type { PruneActivities, PruneInput } from './prune.js';

/**
 * The retention job: started daily by the `prune` schedule (bin/support/prune-schedule.ts). One
 * activity does the deleting, in batches; it may retry, since deleting by age twice is harmless.
 */
export async function pruneWorkflow(input: PruneInput): Promise<Record<string, number>> {
  const { pruneOldRows } = proxyActivities<PruneActivities>({
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '2 minutes',
    retry: { maximumAttempts: 5 },
  });
  return pruneOldRows(input);
}
