import { WorkflowNotFoundError } from '@temporalio/client';
import type { CallerOwner } from '../../core/caller.js';
import { MetaToolError } from '../../core/errors.js';
import { connectionWorkflowId } from '../../core/ids.js';
import { portalIntegrationUrl } from '../../core/urls.js';
import { assertMayConnect } from './connect-rule.js';
import { type ConnectionServices, forTenant } from './services.js';
import { createAttempt, getAttempt } from './store/connection-attempts.js';
import { connectionResolvedSignal } from './workflow.js';

export interface PreparedConnection {
  connectionId: string;
  type: 'oauth2' | 'cookie';
  /** The portal link for the human: signed, bound to the caller, valid as long as the attempt. */
  url: string;
  ttlSec: number;
}

type PrepareDeps = Pick<ConnectionServices, 'pool' | 'registry' | 'config' | 'signer' | 'temporal' | 'logger'>;

/**
 * Checks that `integration` can be connected by this caller (the spec's error strings, then the
 * tenant's connect rule with the caller's roles read fresh), creates a PENDING attempt owned by the
 * caller and signs its portal link. The caller then starts the attempt's workflow: the HTTP
 * handler as a top-level workflow, an agent's workflow as a child. `accountScope: 'tenant'` makes
 * the resulting account the organisation's: only an administrator may start one. A user holds at
 * most CONNECT_PENDING_MAX_PER_USER open attempts (features/connections/store/connection-attempts.ts, createAttempt).
 */
export async function prepareConnection(
  deps: PrepareDeps,
  caller: CallerOwner,
  integration: string,
  options: { ttlSec?: number; accountScope?: 'user' | 'tenant' } = {},
): Promise<PreparedConnection> {
  const { registry } = await forTenant(deps, caller.tenantId);
  const provider = registry.get(integration);
  if (!provider) throw new MetaToolError({ error: 'Integration not found' }, 404);
  const { auth } = provider.manifest;
  if (auth === 'none') throw new MetaToolError({ error: `${integration} is built-in and always connected — no connect needed.` }, 400);
  if (auth === 'apikey') {
    throw new MetaToolError(
      {
        error: `${integration} is connected with an API key in the portal, not through connect(). Send the user to ${portalIntegrationUrl(deps.config, integration)}`,
      },
      400,
    );
  }
  if (auth === 'oauth2' && !registry.isConfigured(integration)) {
    const vars = registry.envVarNames(integration);
    throw new MetaToolError({ error: `${integration}: ${vars.clientId} / ${vars.clientSecret} not configured` }, 503);
  }
  await assertMayConnect(deps.pool, caller, integration, options.accountScope);
  const ttlSec = options.ttlSec ?? deps.config.CONNECTION_TTL_SEC;
  const created = await createAttempt(
    deps.pool,
    { ...caller, integration, authMode: auth, ttlSec, accountScope: options.accountScope },
    deps.config.CONNECT_PENDING_MAX_PER_USER,
  );
  if ('full' in created) throw pendingAttemptsFull(created.full);
  await endDisplacedWorkflows(deps, created.displaced);
  const { attempt } = created;
  const token = await deps.signer.sign('connect-link', { a: attempt.id, u: caller.userId, t: caller.tenantId }, ttlSec);
  return {
    connectionId: attempt.id,
    type: auth,
    url: `${deps.config.PUBLIC_BASE_URL}/connect/${encodeURIComponent(integration)}?t=${token}`,
    ttlSec,
  };
}

/** 429: every open attempt of the user is being completed in a browser; none is taken from them. */
function pendingAttemptsFull({ max, nextExpiresAt }: { max: number; nextExpiresAt: Date }): MetaToolError {
  const retryAfterSec = Math.max(1, Math.ceil((nextExpiresAt.getTime() - Date.now()) / 1000));
  return new MetaToolError(
    {
      error:
        `Too many connection attempts open: a user has at most ${max} (CONNECT_PENDING_MAX_PER_USER), and all ${max} were opened ` +
        `in a browser to be completed. Finish one there, or call connect again after ${nextExpiresAt.toISOString()} ` +
        `(in ${Math.ceil(retryAfterSec / 60)} min), when the first of them expires.`,
      retryAfterSec,
    },
    429,
    { 'Retry-After': String(retryAfterSec) },
  );
}

/** When to try again to end a displaced attempt's workflow that did not exist yet. */
const NOT_STARTED_RETRIES_MS = [2_000, 10_000, 60_000];

/**
 * Ends the workflows of attempts a new one displaced, as their timers would have (EXPIRED), so
 * their waits answer at once and Temporal stops holding them. The database already says EXPIRED:
 * a signal that does not arrive leaves the workflow to its own timer, which finds the same.
 */
async function endDisplacedWorkflows(deps: PrepareDeps, attemptIds: readonly string[]): Promise<void> {
  await Promise.all(attemptIds.map((id) => endDisplacedWorkflow(deps, id, NOT_STARTED_RETRIES_MS)));
}

async function endDisplacedWorkflow(deps: PrepareDeps, attemptId: string, retriesMs: readonly number[]): Promise<void> {
  try {
    await deps.temporal.workflow.getHandle(connectionWorkflowId(attemptId)).signal(connectionResolvedSignal, { status: 'EXPIRED' });
  } catch (err) {
    // Displaced the moment it was made, its starter may not have started it yet (or it has ended).
    if (err instanceof WorkflowNotFoundError && retriesMs.length) {
      setTimeout(() => void endDisplacedWorkflow(deps, attemptId, retriesMs.slice(1)), retriesMs[0]).unref();
      return;
    }
    deps.logger.warn({ attemptId, err: (err as Error).message }, 'could not end a displaced connection workflow');
  }
}

/**
 * For the starter of an attempt's workflow, once started: ends it at once if a newer attempt
 * displaced the attempt before the workflow existed (that displacer's signal found nothing).
 */
export async function endIfDisplaced(deps: PrepareDeps, attemptId: string): Promise<void> {
  const attempt = await getAttempt(deps.pool, attemptId);
  if (attempt?.status === 'EXPIRED') await endDisplacedWorkflow(deps, attemptId, []);
}
