// Every workflow the Switchboard worker runs. The worker bundles this file.
export { approvalWorkflow } from './approvals/workflow.js';
export { connectionWorkflow } from './connections/workflow.js';
export { toolBatchWorkflow } from './execution/workflow.js';
export { pruneWorkflow } from './retention/workflow.js';
