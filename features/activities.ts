import type { ActivityDeps } from './activity-deps.js';
import { createApprovalActivities } from './approvals/approval-activities.js';
import { createConnectionActivities } from './connections/expire-activity.js';
import { createExecuteActivities, createToolCallRunner } from './execution/execute-tool.js';
import { createWorkflowHelperActivities } from './execution/workflow-helpers.js';
import { createPruneActivities } from './retention/prune.js';

export function createActivities(deps: ActivityDeps) {
  const runner = createToolCallRunner(deps);
  return {
    ...createConnectionActivities(deps),
    ...createExecuteActivities(deps, runner),
    ...createApprovalActivities(deps, runner),
    ...createWorkflowHelperActivities(deps),
    ...createPruneActivities(deps),
  };
}

export type { ActivityDeps } from './activity-deps.js';
