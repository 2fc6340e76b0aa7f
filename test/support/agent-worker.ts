import { randomUUID } from 'node:crypto';
import { SwitchboardPlugin } from '../../surfaces/temporal-plugin/index.js';
import type { AgentInput } from './agent-workflows.js';
import type { Stack } from './stack.js';

export interface AgentWorker {
  /** Runs one of test/support/agent-workflows.ts for `who` against `stack`'s Switchboard; its result and history. */
  run<T>(
    workflowType: string,
    who: Omit<AgentInput, 'switchboardTaskQueue'>,
    input: Record<string, unknown>,
  ): Promise<{ result: T; timers: number; elapsedMs: number; workflowId: string }>;
  stop(): Promise<void>;
}

/**
 * A worker for an agent's own workflows (test/support/agent-workflows.ts) on a task queue of its
 * own, with the SwitchboardPlugin as an agent's deployment would have it.
 */
export async function startAgentWorker(stack: Stack): Promise<AgentWorker> {
  const { Worker } = await import('@temporalio/worker');
  const taskQueue = `agent-${randomUUID()}`;
  const worker = await Worker.create({
    connection: stack.services.connection,
    namespace: stack.services.config.TEMPORAL_NAMESPACE,
    taskQueue,
    workflowsPath: new URL('./agent-workflows.ts', import.meta.url).pathname,
    plugins: [new SwitchboardPlugin({ keyring: stack.services.keyring })],
  });
  const running = worker.run();
  return {
    async run(workflowType, who, input) {
      const handle = await stack.services.temporal.workflow.start(workflowType, {
        taskQueue,
        workflowId: `${workflowType}-${randomUUID()}`,
        args: [{ ...who, switchboardTaskQueue: stack.env.TEMPORAL_TASK_QUEUE, ...input }],
      });
      const started = Date.now();
      const result = await handle.result();
      const history = await handle.fetchHistory();
      const timers = (history.events ?? []).filter((e) => e.timerStartedEventAttributes).length;
      return { result, timers, elapsedMs: Date.now() - started, workflowId: handle.workflowId };
    },
    async stop() {
      worker.shutdown();
      await running;
    },
  };
}
