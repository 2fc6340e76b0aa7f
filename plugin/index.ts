import { fileURLToPath } from 'node:url';
import { SimplePlugin } from '@temporalio/plugin';
import type { WorkflowBundleOption } from '@temporalio/worker';
import { type ActivityDeps, createActivities } from '../activities/index.js';

/** The file the worker bundles: every Switchboard workflow, and nothing with I/O. */
export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface SwitchboardPluginOptions {
  /** Worker side: what the activities need. Omit for a client-only plugin. */
  activityDeps?: ActivityDeps;
  /** A prebuilt bundle (`bundleWorkflowCode`), reused across workers to skip re-bundling. */
  workflowBundle?: WorkflowBundleOption;
}

/**
 * Adds Switchboard's activities, workflows and data converter to a Worker and Client.
 * Its workflows replace a worker's own `workflowsPath`, so run it on Switchboard's task queue
 * and reach its workflows from yours as child workflows (see `switchboard/workflow`).
 */
export class SwitchboardPlugin extends SimplePlugin {
  constructor(options: SwitchboardPluginOptions = {}) {
    super({
      name: 'switchboard',
      ...(options.activityDeps && {
        activities: createActivities(options.activityDeps),
        ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
      }),
    });
  }
}
