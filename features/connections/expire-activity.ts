import type { AttemptStatus } from '../../core/connection.js';
import type { ConnectionServices } from './services.js';
import { finishAttempt } from './store/connection-attempts.js';

/** Activities the connection workflow runs. Ids in, statuses out: nothing secret crosses. */
export function createConnectionActivities(deps: Pick<ConnectionServices, 'pool'>) {
  return {
    /**
     * Expires the attempt if it is still PENDING and answers the status it has afterwards:
     * the database decides the race between a callback and a timeout.
     */
    async expireConnectionAttempt(input: { attemptId: string }): Promise<AttemptStatus> {
      const status = await finishAttempt(deps.pool, input.attemptId, { status: 'EXPIRED' });
      return status ?? 'EXPIRED';
    },
  };
}

export type ConnectionActivities = ReturnType<typeof createConnectionActivities>;
