import { z } from 'zod';
import type { Caller } from '../../../core/caller.js';
import { MetaToolError } from '../../../core/errors.js';
import { connectionWorkflowId } from '../../../core/ids.js';
import { connectionSearchAttributes } from '../../../core/search-attributes.js';
import type { ServiceContext } from '../../context.js';
import { START_TIMEOUT_MS } from '../../execution/batch/run-batch.js';
import { defineMetaTool } from '../../meta-tool.js';
import { endIfDisplaced, prepareConnection } from '../prepare.js';
import { deleteAttempt } from '../store/connection-attempts.js';
import { connectionWorkflow } from '../workflow.js';

export const connectInput = z
  .object({
    integration: z.string().min(1).max(100).describe('Integration name from list_integrations, e.g. "github".'),
  })
  .strict();

export interface ConnectResult {
  connectionId: string;
  type: 'oauth2' | 'cookie';
  url: string;
}

/**
 * Starts a connection attempt: a PENDING record owned by the caller, its workflow, and a portal
 * link bound to the caller. Shared by `connect` and `get_auth_url`.
 */
export async function startConnection(
  ctx: ServiceContext,
  caller: Caller,
  integration: string,
  options: { ttlSec?: number; accountScope?: 'user' | 'tenant' } = {},
): Promise<ConnectResult> {
  const prepared = await prepareConnection(ctx, caller, integration, options);
  try {
    // Bounded, so an unreachable Temporal answers 503 promptly instead of after the client's retries.
    await ctx.temporal.withDeadline(Date.now() + START_TIMEOUT_MS, () =>
      ctx.temporal.workflow.start(connectionWorkflow, {
        workflowId: connectionWorkflowId(prepared.connectionId),
        taskQueue: ctx.config.TEMPORAL_TASK_QUEUE,
        requestEagerStart: ctx.eagerStart,
        args: [
          { attemptId: prepared.connectionId, tenantId: caller.tenantId, userId: caller.userId, integration, ttlSec: prepared.ttlSec },
        ],
        typedSearchAttributes: connectionSearchAttributes(caller, integration),
      }),
    );
  } catch (err) {
    await deleteAttempt(ctx.pool, prepared.connectionId);
    ctx.logger.error({ err: (err as Error).message, integration }, 'could not start the connection workflow');
    throw new MetaToolError({ error: 'Temporal is unavailable; try connect again shortly' }, 503);
  }
  await endIfDisplaced(ctx, prepared.connectionId);
  return { connectionId: prepared.connectionId, type: prepared.type, url: prepared.url };
}

const description =
  'Start connecting an integration for this user. Returns {connectionId, type, url}. Give the url to the user to open in ' +
  'their browser (do not fetch it yourself), then call wait_for_connection with the connectionId.';

export const connect = defineMetaTool({
  name: 'connect',
  description,
  input: connectInput,
  handler: (ctx, caller, args) => startConnection(ctx, caller, args.integration),
});

/** Deprecated alias of `connect`, with the identical handler. */
export const getAuthUrl = defineMetaTool({
  name: 'get_auth_url',
  description: `Deprecated alias of connect; use connect. ${description}`,
  input: connectInput,
  handler: (ctx, caller, args) => startConnection(ctx, caller, args.integration),
});
