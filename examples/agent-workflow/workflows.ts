// An agent workflow that needs a service the user has to connect. In your project, import from 'switchboard/workflow'.
import { switchboard, type ToolOutcome } from '../../surfaces/workflow-sdk/index.js';

/** The services this example knows, and the one call it makes at each. */
export const DIGEST_CALLS = {
  /** The demo integration `npm start` serves: no account anywhere needed. */
  demo: { tool: 'demo__list_tasks', args: { status: 'open' } },
  github: { tool: 'github__list_repos', args: { perPage: 5 } },
} as const;

export type DigestIntegration = keyof typeof DIGEST_CALLS;

export interface DigestInput {
  tenantId: string;
  userId: string;
  /** Which service (default `demo`); start.ts picks GitHub when this Switchboard has a GitHub client. */
  integration?: DigestIntegration;
  /** Switchboard's task queue. */
  switchboardTaskQueue?: string;
}

/**
 * Reads what the user has at a service: their open demo tasks, or their GitHub repositories. If the
 * user has not connected it yet, it sends them a connect link through `sendConnectLink` (an activity
 * of this app) and waits — for days if need be, across restarts — then runs the tool.
 */
export async function digest(input: DigestInput): Promise<ToolOutcome> {
  const sb = switchboard({ tenantId: input.tenantId, userId: input.userId, taskQueue: input.switchboardTaskQueue });
  return sb.executeWithConnect(DIGEST_CALLS[input.integration ?? 'demo'], { onConnectUrl: 'sendConnectLink', retryable: true });
}
