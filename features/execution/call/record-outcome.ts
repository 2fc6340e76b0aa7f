import type { CallOutcome } from '../../../core/stored-results.js';
import { toolCallDuration, toolCalls } from '../../../platform/telemetry/metrics.js';
import { recordToolCall } from '../store/audit.js';
import type { CallAudit, ExecuteDeps, ExecuteToolInput } from './call.js';
import { auditIdentity } from './call.js';

/** The metric label of every tenant's own upstream servers (metricProvider). */
const TENANT_UPSTREAM = 'tenant-upstream';

/**
 * The call's audit row, written with the account slot it held given back in the same statement
 * (the slot is released on its own when the row cannot be written); then its metrics and log line.
 */
export async function recordCallOutcome(
  deps: ExecuteDeps,
  input: ExecuteToolInput,
  audit: CallAudit,
  outcome: CallOutcome,
  durationMs: number,
): Promise<void> {
  const { slot } = audit;
  try {
    await recordToolCall(
      deps.pool,
      {
        ...auditIdentity(input),
        ownerUserId: audit.account?.scope === 'user' ? (audit.account.ownerUserId ?? null) : null,
        accountId: audit.account?.id ?? null,
        outcome: outcome.ok ? 'ok' : 'error',
        errorCode: outcome.ok ? null : outcome.error.code,
        durationMs,
      },
      slot?.ticket,
    );
  } catch (err) {
    await slot?.().catch((releaseErr: Error) =>
      deps.logger.warn({ err: releaseErr.message }, 'could not give an account slot back; it lapses with its lease'),
    );
    throw err;
  }
  slot?.releasedElsewhere();
  const label = outcome.ok ? 'ok' : outcome.error.code;
  const provider = await metricProvider(deps, input);
  toolCalls.inc({
    provider,
    tool: provider === 'unknown' || provider === TENANT_UPSTREAM ? provider : input.call.tool,
    outcome: label,
  });
  toolCallDuration.observe({ provider, outcome: label }, durationMs / 1000);
  deps.logger.info({ tool: input.call.tool, outcome: label, durationMs: Math.round(durationMs) }, 'tool call');
}

/**
 * The metric label of a call's provider. Tenants' own servers share one label: their names and
 * tools are chosen by each tenant, and metric labels must stay few.
 */
async function metricProvider(deps: ExecuteDeps, input: ExecuteToolInput): Promise<string> {
  const known = deps.registry.toolByQualifiedName(input.call.tool);
  if (known) return known.provider.manifest.name;
  const view = await deps.registry.forTenant(input.tenantId).catch(() => deps.registry);
  return view !== deps.registry && view.toolByQualifiedName(input.call.tool) ? TENANT_UPSTREAM : 'unknown';
}
