import type { AttemptStatus, WaitStatus } from './connection.js';

/**
 * What one `wait_for_connection` answers, from the attempt's status when the wait ends (undefined:
 * no such attempt). The wait whose own timeout expired ("reaped") the attempt answers TIMEOUT;
 * every other wait sees EXPIRED, as does any attempt that is not CONNECTED once waiting is over.
 * Pure: the connection workflow, the waiter and the meta-tool all answer through it.
 */
export function waitAnswer(status: AttemptStatus | undefined, wait: { reapedIt: boolean }): WaitStatus {
  if (status === 'CONNECTED') return 'CONNECTED';
  return status === 'EXPIRED' && wait.reapedIt ? 'TIMEOUT' : 'EXPIRED';
}

/**
 * The answer of a wait that shared another wait's answer (one Update for several waiters): the
 * same, except that the reaper's TIMEOUT is EXPIRED for a wait that is not the same wait.
 */
export function sharedWaitAnswer(shared: WaitStatus, wait: { sameWait: boolean }): WaitStatus {
  return shared === 'TIMEOUT' ? waitAnswer('EXPIRED', { reapedIt: wait.sameWait }) : shared;
}
