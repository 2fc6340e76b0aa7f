import { createConnectionActivities } from '../connections/expire-activity.js';
import { createApprovalActivities } from './approval.js';
import type { ActivityDeps } from './deps.js';
import { createExecuteActivities, createToolCallRunner } from './execute-tool.js';
import { createPruneActivities } from './prune.js';
import { createWorkflowHelperActivities } from './workflow-helpers.js';

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

export type { ActivityDeps } from './deps.js';
