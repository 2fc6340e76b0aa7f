// Every workflow the Switchboard worker runs. The worker bundles this file.
export { connectionWorkflow } from './connection.js';
export { pruneWorkflow } from './prune.js';
export { toolBatchWorkflow } from './tool-batch.js';
