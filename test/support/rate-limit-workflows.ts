// An agent's own workflow for the rate-limit tests: one `execute` through `switchboard/workflow`.
import { type ExecuteOptions, switchboard, type ToolCallRequest, type ToolOutcome } from '../../workflows/sdk/index.js';

export interface ExecuteOnceInput {
  tenantId: string;
  userId: string;
  switchboardTaskQueue: string;
  call: ToolCallRequest;
  options?: ExecuteOptions;
}

export async function executeOnce(input: ExecuteOnceInput): Promise<ToolOutcome> {
  const sb = switchboard({ tenantId: input.tenantId, userId: input.userId, taskQueue: input.switchboardTaskQueue });
  return sb.execute(input.call, input.options);
}
