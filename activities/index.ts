import { createConnectionActivities } from '../connections/expire-activity.js';
import type { ActivityDeps } from './deps.js';
import { createExecuteActivities } from './execute-tool.js';
import { createPruneActivities } from './prune.js';
import { createWorkflowHelperActivities } from './workflow-helpers.js';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createConnectionActivities(deps),
    ...createExecuteActivities(deps),
    ...createWorkflowHelperActivities(deps),
    ...createPruneActivities(deps),
  };
}

export type SwitchboardActivities = ReturnType<typeof createActivities>;
export type { ActivityDeps } from './deps.js';
