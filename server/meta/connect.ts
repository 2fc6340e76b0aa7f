import { z } from 'zod';
import { ToolError } from '../../core/errors.js';
import { connectionWorkflowId } from '../../core/ids.js';
import { SA } from '../../core/search-attributes.js';
import type { Caller } from '../../store/api-keys.js';
import { createAttempt } from '../../store/connection-attempts.js';
import { connectionWorkflow } from '../../workflows/connection.js';
import type { ServiceContext } from '../context.js';
import { portalIntegrationUrl } from '../portal/urls.js';
import { enabledProviders } from './caller-tenant.js';
import { defineMetaTool } from './meta-tool.js';

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
 * link bound to the caller. Shared by `connect`, `get_auth_url` and the workflow helpers.
 */
export async function startConnection(
  ctx: ServiceContext,
  caller: Caller,
  integration: string,
  options: { ttlSec?: number } = {},
): Promise<ConnectResult> {
  const provider = ctx.registry.get(integration);
  if (!provider) throw new ToolError({ error: 'Integration not found' }, 404);
  if (!(await enabledProviders(ctx, caller)).includes(provider)) {
    throw new ToolError({ error: `${integration} is not enabled for this organisation` }, 403);
  }
  const { auth } = provider.manifest;
  if (auth === 'none') {
    throw new ToolError({ error: `${integration} is built-in and always connected — no connect needed.` }, 400);
  }
  if (auth === 'apikey') {
    throw new ToolError(
      {
        error: `${integration} is connected with an API key in the portal, not through connect(). Send the user to ${portalIntegrationUrl(ctx.config, integration)}`,
      },
      400,
    );
  }
  if (auth === 'oauth2' && !ctx.registry.isConfigured(integration)) {
    const vars = ctx.registry.envVarNames(integration);
    throw new ToolError({ error: `${integration}: ${vars.clientId} / ${vars.clientSecret} not configured` }, 503);
  }

  const ttlSec = options.ttlSec ?? ctx.config.CONNECTION_TTL_SEC;
  const attempt = await createAttempt(ctx.pool, { ...caller, integration, authMode: auth, ttlSec });
  try {
    await ctx.temporal.workflow.start(connectionWorkflow, {
      workflowId: connectionWorkflowId(attempt.id),
      taskQueue: ctx.config.TEMPORAL_TASK_QUEUE,
      args: [{ attemptId: attempt.id, tenantId: caller.tenantId, userId: caller.userId, integration, ttlSec }],
      typedSearchAttributes: [
        { key: SA.tenant, value: caller.tenantId },
        { key: SA.user, value: caller.userId },
        { key: SA.integration, value: integration },
        { key: SA.outcome, value: 'PENDING' },
      ],
    });
  } catch (err) {
    await ctx.pool.query('DELETE FROM connection_attempts WHERE id = $1', [attempt.id]);
    ctx.logger.error({ err: (err as Error).message, integration }, 'could not start the connection workflow');
    throw new ToolError({ error: 'Temporal is unavailable; try connect again shortly' }, 503);
  }

  const token = await ctx.signer.sign('connect-link', { a: attempt.id, u: caller.userId, t: caller.tenantId }, ttlSec);
  const url = `${ctx.config.PUBLIC_BASE_URL}/connect/${encodeURIComponent(integration)}?t=${token}`;
  return { connectionId: attempt.id, type: auth, url };
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
