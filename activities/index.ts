import { createConnectionActivities } from './connection.js';
import type { ActivityDeps } from './deps.js';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createConnectionActivities(deps),
  };
}

export type SwitchboardActivities = ReturnType<typeof createActivities>;
export type { ActivityDeps } from './deps.js';
