import type { ApprovalWaiter } from './approvals/waiter.js';
import type { ConnectionServices } from './connections/services.js';
import type { ConnectionWaiter } from './connections/waiter.js';

/**
 * Everything a request handler may use; built once per process. It is the connection
 * lifecycle's services (config, pool, keyring, registry, Temporal client, logger, signer) and
 * what only the server has, so the two lists cannot drift apart.
 */
export interface ServiceContext extends ConnectionServices {
  /**
   * The client is on a NativeConnection, so starts may ask for eager execution: when a worker
   * for the task queue runs in this process, the first workflow task comes back in the start
   * response instead of through a poll (Temporal drops the request when none does).
   */
  eagerStart?: boolean;
  waiter: ConnectionWaiter;
  approvalWaiter: ApprovalWaiter;
}
