import { failure, type ToolOutcome } from '../../../core/execution.js';
import { policyRefusal } from '../../../core/policy.js';
import { policyRefusalAnswer } from '../../../core/policy-refusal-text.js';
import { getUserAndTenant } from '../../accounts/store/user-and-tenant.js';
import type { CallAudit, CallInput, ExecuteDeps, RunOptions, ToolCall } from './call.js';
import { isOutcome } from './call.js';
import { chooseCallAccount } from './choose-account.js';

/**
 * Step 1, policy: the tool exists in the caller's tenant's view, the tenant's policy lets the
 * caller's roles use it, and (a provider with auth) an account the caller may use has the scopes
 * a declared tool needs. The spec's order: policy, then the arguments, then the credential.
 */
export async function checkPolicy(
  deps: ExecuteDeps,
  input: CallInput,
  audit: CallAudit,
  options: RunOptions,
): Promise<ToolCall | ToolOutcome> {
  const { call } = input;
  const registry = await deps.registry.forTenant(input.tenantId);
  const listed = registry.dynamicProviderOf(call.tool);
  const entry = listed ? undefined : registry.toolByQualifiedName(call.tool);
  const provider = listed ?? entry?.provider;
  if (!provider) return failure('not_found', `No tool is named ${call.tool}.`);
  const integration = provider.manifest.name;
  const toolName = entry?.tool.name ?? call.tool.slice(integration.length + 2);

  const { user, tenant } = audit.caller ?? (await getUserAndTenant(deps.pool, input.userId, input.tenantId));
  const settings = tenant?.settings ?? {};
  // A user of another tenant (or none) has no role here at all; otherwise the one tenant policy decides.
  const refusal = !user || user.tenantId !== input.tenantId ? 'role' : policyRefusal(settings, user.roles, integration, toolName);
  if (!user || refusal) {
    const { code, message } = policyRefusalAnswer(refusal ?? 'role', integration, call.tool);
    return failure(code, message);
  }
  const admitted: ToolCall = { input, options, registry, provider, integration, settings, listed, entry, secrets: [] };
  if (provider.manifest.auth === 'none') return admitted;

  const chosen = await chooseCallAccount(
    deps,
    { tenantId: input.tenantId, userId: input.userId, roles: user.roles },
    integration,
    call.account,
  );
  if (isOutcome(chosen)) return chosen;
  const { account, sealed } = chosen;
  audit.account = account;
  const missing = (entry?.tool.scopes ?? []).filter((s) => !account.grantedScopes.includes(s));
  if (missing.length) return failure('forbidden', `Your ${integration} connection lacks the scope ${missing.join(', ')}.`);
  return { ...admitted, account, sealed };
}
