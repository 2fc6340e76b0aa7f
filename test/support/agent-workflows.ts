// An agent's own workflows for the tests of `switchboard/workflow` (run by startAgentWorker).
import { type ExecuteOptions, switchboard, type ToolCallRequest, type ToolOutcome } from '../../workflows/sdk/index.js';

export interface AgentInput {
  tenantId: string;
  userId: string;
  switchboardTaskQueue: string;
}

export interface ExecuteOnceInput extends AgentInput {
  call: ToolCallRequest;
  options?: ExecuteOptions;
}

/** One `execute`. */
export async function executeOnce(input: ExecuteOnceInput): Promise<ToolOutcome> {
  const sb = switchboard({ tenantId: input.tenantId, userId: input.userId, taskQueue: input.switchboardTaskQueue });
  return sb.execute(input.call, input.options);
}

/** One `execute`; when its result was cut, `readResult` slice by slice until the end: the whole text. */
export async function executeAndReadAll(
  input: ExecuteOnceInput & { sliceBytes: number },
): Promise<{ outcome: ToolOutcome; text?: string; slices: number }> {
  const sb = switchboard({ tenantId: input.tenantId, userId: input.userId, taskQueue: input.switchboardTaskQueue });
  const outcome = await sb.execute(input.call, input.options);
  if (!outcome.ok || !outcome.truncated || !outcome.resultRef) return { outcome, slices: 0 };
  let text = '';
  let slices = 0;
  for (let offset: number | null = 0; offset !== null; slices++) {
    const slice = await sb.readResult(outcome.resultRef, { offset, maxBytes: input.sliceBytes });
    text += slice.result as string;
    offset = slice.nextOffset;
  }
  return { outcome, text, slices };
}
