// An agent workflow that needs GitHub. In your project, import from 'switchboard/workflow'.
import { switchboard, type ToolOutcome } from '../../workflows/sdk/index.js';

export interface RepoDigestInput {
  tenantId: string;
  userId: string;
  /** Switchboard's task queue. */
  switchboardTaskQueue?: string;
}

/**
 * Lists the user's repositories. If the user has not connected GitHub yet, it sends them a
 * connect link through `sendConnectLink` (an activity of this app) and waits — for days if need
 * be, across restarts — then runs the tool.
 */
export async function repoDigest(input: RepoDigestInput): Promise<ToolOutcome> {
  const sb = switchboard({ tenantId: input.tenantId, userId: input.userId, taskQueue: input.switchboardTaskQueue });
  return sb.executeWithConnect({ tool: 'github__list_repos', args: { perPage: 5 } }, { onConnectUrl: 'sendConnectLink', retryable: true });
}
