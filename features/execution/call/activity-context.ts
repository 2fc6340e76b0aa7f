import { Context } from '@temporalio/activity';
import type { CallInput } from './call.js';

/** The activity's context, or undefined when the function runs outside an activity (tests, tools). */
export function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

export const activitySignal = (): AbortSignal | undefined => activityContext()?.cancellationSignal;

/** The agent workflow a gated call's approval signals once settled (switchboard/workflow asks for it). */
export const notifyWorkflowId = (input: CallInput): string | undefined =>
  input.notifyApproval ? activityContext()?.info.workflowExecution?.workflowId : undefined;
