import { z } from 'zod';
import { WAIT_TIMEOUT_DEFAULT_SEC, WAIT_TIMEOUT_MAX_SEC } from '../../../core/connection.js';
import { MetaToolError } from '../../../core/errors.js';
import { waitAnswer } from '../../../core/wait-answer.js';
import { defineMetaTool } from '../../meta-tool.js';
import { inWaitSlot } from '../../wait-slots.js';
import { getAttemptForCaller } from '../store/connection-attempts.js';

export const waitForConnection = defineMetaTool({
  name: 'wait_for_connection',
  description:
    `Wait until the user finishes connecting. Answers {status}: CONNECTED (go on and use the tools), TIMEOUT (nobody ` +
    `finished in time; the attempt is now expired) or EXPIRED (this attempt can never connect: call connect again and ` +
    `give the user the new url). timeoutSec: positive integer, default ${WAIT_TIMEOUT_DEFAULT_SEC}, max ${WAIT_TIMEOUT_MAX_SEC}.`,
  input: z
    .object({
      connectionId: z.string().min(1).max(200),
      timeoutSec: z.number().int().positive().max(WAIT_TIMEOUT_MAX_SEC).default(WAIT_TIMEOUT_DEFAULT_SEC),
    })
    .strict(),
  async handler(ctx, caller, args) {
    const attempt = await getAttemptForCaller(ctx.pool, caller, args.connectionId);
    // Another user's id answers exactly like an unknown one, so ids cannot be probed.
    if (!attempt) throw new MetaToolError({ error: 'Unknown connectionId' }, 404);
    if (attempt.status !== 'PENDING') return { status: waitAnswer(attempt.status, { reapedIt: false }) };
    return { status: await inWaitSlot(ctx.config, caller, () => ctx.waiter.wait(attempt.id, args.timeoutSec)) };
  },
});
