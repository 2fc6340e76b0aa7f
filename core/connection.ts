/** States of a connection attempt. Pure: shared by workflows, activities and handlers. */
export type AttemptStatus = 'PENDING' | 'CONNECTED' | 'EXPIRED' | 'FAILED';

/** What `wait_for_connection` answers (spec): TIMEOUT is the answer of the wait that reaped it. */
export type WaitStatus = 'CONNECTED' | 'TIMEOUT' | 'EXPIRED' | 'FAILED';

export const WAIT_TIMEOUT_DEFAULT_SEC = 300;
export const WAIT_TIMEOUT_MAX_SEC = 900;
