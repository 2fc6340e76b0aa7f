import { createConnectionActivities } from './connection.js';
import type { ActivityDeps } from './deps.js';
import { createExecuteActivities } from './execute-tool.js';
import { createWorkflowHelperActivities } from './workflow-helpers.js';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createConnectionActivities(deps),
    ...createExecuteActivities(deps),
    ...createWorkflowHelperActivities(deps),
  };
}

export type SwitchboardActivities = ReturnType<typeof createActivities>;
export type { ActivityDeps } from './deps.js';
