import { randomUUID } from 'node:crypto';
import { toolBatchWorkflow } from '../../features/execution/workflow.js';
import type { BenchRun } from './bench-stack.js';

/**
 * The floor Temporal itself sets on this machine: a tool batch of no calls, started the way
 * Switchboard starts one (eager start, this process's client) and awaited — one workflow start,
 * one workflow task, one result, and no Switchboard code between them.
 */
export function emptyBatchRunner({ stack, user }: Pick<BenchRun, 'stack' | 'user'>): () => Promise<void> {
  const { temporal, config, eagerStart } = stack.services;
  return async () => {
    await temporal.workflow.execute(toolBatchWorkflow, {
      workflowId: `bench-empty-batch-${randomUUID()}`,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      requestEagerStart: eagerStart,
      args: [{ tenantId: user.user.tenantId, userId: user.user.id, calls: [], timeoutMs: 1_000, maxResultBytes: 1_024 }],
    });
  };
}
