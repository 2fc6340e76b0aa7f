/**
 * `switchboard/workflow`: what an agent's own Temporal workflow may import. Workflow-safe only:
 * `@temporalio/workflow`, pure code from `core/`, and types — never pg, express or fetch.
 *
 * Switchboard's connection workflow runs on Switchboard's task queue; an agent workflow reaches
 * it as a child workflow by name, waits on its result (minutes or days, durably) and reads the
 * outcome. The definitions below name its signal, update and query.
 */

export type { AttemptStatus, WaitStatus } from '../../core/connection.js';
export { connectionWorkflowId, toolBatchWorkflowId } from '../../core/ids.js';
export {
  type ConnectionOutcome,
  type ConnectionWorkflowInput,
  type ConnectionWorkflowResult,
  connectionResolvedSignal,
  connectionStatusQuery,
  waitForConnectionUpdate,
} from '../connection.js';
