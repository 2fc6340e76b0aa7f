import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../../core/config.js';
import type { PruneInput } from '../../features/retention/prune.js';
import { pruneWorkflow } from '../../features/retention/workflow.js';
import { SCHEDULED_WORKFLOW_PREFIX } from '../../platform/temporal/payload-codec.js';

const DAY_SEC = 24 * 60 * 60;

/** One schedule per task queue (a deployment's Switchboard), named so operators find it in the UI. */
export const pruneScheduleId = (config: Pick<Config, 'TEMPORAL_TASK_QUEUE'>) => `switchboard-prune-${config.TEMPORAL_TASK_QUEUE}`;

/**
 * Creates the daily retention schedule, or brings an existing one up to date with this process's
 * settings (RETENTION_DAYS may have changed): idempotent, so every worker runs it at start. The
 * idempotency records are kept at least as long as the namespace keeps workflows, whatever
 * RETENTION_DAYS says: pruning them sooner would let a reused requestId with other calls join
 * the old batch.
 */
export async function ensurePruneSchedule(client: Client, config: Config, logger: Logger): Promise<void> {
  const namespace = await client.workflowService.describeNamespace({ namespace: config.TEMPORAL_NAMESPACE });
  const workflowRetentionDays = Math.ceil(Number(namespace.config?.workflowExecutionRetentionTtl?.seconds ?? 0) / DAY_SEC);
  const input: PruneInput = {
    retentionDays: config.RETENTION_DAYS,
    idempotencyDays: Math.max(config.RETENTION_DAYS, workflowRetentionDays + 1),
  };
  if (config.RETENTION_DAYS <= workflowRetentionDays) {
    logger.warn(
      { retentionDays: config.RETENTION_DAYS, workflowRetentionDays },
      'RETENTION_DAYS is not above the namespace workflow retention; idempotency records are kept longer',
    );
  }
  const resultDays = config.RESULT_RETENTION_DAYS ?? config.RETENTION_DAYS;
  if (resultDays < workflowRetentionDays) {
    // A batch collected later by its requestId (or read in Temporal UI) would find its results gone.
    logger.warn(
      { resultRetentionDays: resultDays, workflowRetentionDays },
      'RESULT_RETENTION_DAYS is below the namespace workflow retention; stored results expire before their batches',
    );
  }
  const scheduleId = pruneScheduleId(config);
  const action = {
    type: 'startWorkflow' as const,
    workflowType: pruneWorkflow,
    workflowId: `${SCHEDULED_WORKFLOW_PREFIX}${config.TEMPORAL_TASK_QUEUE}`,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    args: [input] as [PruneInput],
  };
  const spec = { intervals: [{ every: '1 day' as const }] };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' as const };
  try {
    await client.schedule.create({ scheduleId, spec, action, policies });
    logger.info({ scheduleId, ...input }, 'created the retention schedule');
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec, action, policies }));
  }
}
