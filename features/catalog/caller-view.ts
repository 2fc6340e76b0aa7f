import { needsApproval } from '../../core/approval-policy.js';
import type { Caller } from '../../core/caller.js';
import { hasConnectionRole, isProviderEnabled, policyAdmits, type TenantSettings } from '../../core/policy.js';
import { portalIntegrationUrl } from '../../core/urls.js';
import type { ToolEntry } from '../../providers/registry.js';
import { type Account, listUsableAccounts } from '../accounts/store/accounts.js';
import type { ServiceContext } from '../context.js';
import { tenantSettings } from './caller-tenant.js';
import { toolIndexFor } from './tool-search.js';

/**
 * What one caller may see of the catalog: the tenant's policy and the caller's usable accounts
 * (own first, then the organisation's shared with one of the caller's roles). Loaded once per
 * request and shared by every search result.
 */
interface CallerView {
  settings: TenantSettings;
  roles: string[];
  accounts: Map<string, Account[]>;
}

export async function loadCallerView(ctx: ServiceContext, caller: Caller): Promise<CallerView> {
  // Upstream MCP servers' shared tool lists, listed on first need and refreshed behind when stale.
  const [settings, accounts] = await Promise.all([
    tenantSettings(ctx, caller),
    listUsableAccounts(ctx.pool, caller),
    ctx.registry.forTenant(caller.tenantId).then((registry) => registry.warmDynamicTools()),
  ]);
  const byIntegration = new Map<string, Account[]>();
  for (const account of accounts) byIntegration.set(account.integration, [...(byIntegration.get(account.integration) ?? []), account]);
  return { settings, roles: caller.roles, accounts: byIntegration };
}

/** Only tools the caller may use: a connection role, the provider enabled, the tool allowed. */
export function mayUse(view: CallerView, entry: ToolEntry): boolean {
  return policyAdmits(view.settings, view.roles, entry.provider.manifest.name, entry.tool.name);
}

/**
 * `{needsApproval: true}` when a call of this tool waits for a person's approval under the tenant's
 * settings (nothing otherwise), so an agent can tell the human before calling.
 */
export const approvalMark = (view: CallerView, entry: ToolEntry): { needsApproval?: true } =>
  needsApproval(view.settings, entry) ? { needsApproval: true } : {};

interface ConnectionState {
  connected: boolean;
  status?: 'active' | 'needs_reauth';
  accounts: { id: string; label: string; scope: 'user' | 'tenant'; default: boolean; status: 'active' | 'needs_reauth' }[];
  hint?: string;
}

/** Whether the caller can run this provider's tools now, and what to tell the model if not. */
export function connectionState(ctx: ServiceContext, view: CallerView, entry: ToolEntry): ConnectionState {
  const { manifest } = entry.provider;
  if (manifest.auth === 'none') return { connected: true, accounts: [] };
  const accounts = view.accounts.get(manifest.name) ?? [];
  const views = accounts.map((a) => ({ id: a.id, label: a.label, scope: a.scope, default: a.isDefault, status: a.status }));
  const usable = accounts.find((a) => a.status === 'active' && a.hasCredential);
  if (usable) return { connected: true, status: 'active', accounts: views };
  if (accounts.length) {
    const orgOnly = accounts.every((a) => a.scope === 'tenant');
    return {
      connected: false,
      status: 'needs_reauth',
      accounts: views,
      hint: `The ${manifest.displayName} connection stopped working. Ask ${orgOnly ? 'an administrator' : 'the user'} to reconnect it${orgOnly ? '' : `: call connect with integration "${manifest.name}" and give them the url`}.`,
    };
  }
  const how =
    manifest.auth === 'apikey'
      ? `ask the user to add it in the portal: ${portalIntegrationUrl(ctx.config, manifest.name)}`
      : `ask the user to connect it: call connect with integration "${manifest.name}", give them the url, then wait_for_connection`;
  return {
    connected: false,
    accounts: views,
    hint: `Not connected to ${manifest.displayName}: ${how}. For an organisation account, ask an administrator.`,
  };
}

/** Whether the caller could run this tool now: ties in search go to these. */
function isConnected(view: CallerView, entry: ToolEntry): boolean {
  const { manifest } = entry.provider;
  return manifest.auth === 'none' || (view.accounts.get(manifest.name) ?? []).some((a) => a.status === 'active' && a.hasCredential);
}

/** The search both surfaces share: ranked tools this caller may use, optionally of one provider. */
export async function searchVisibleTools(
  ctx: ServiceContext,
  caller: Caller,
  query: { text: string; provider?: string; limit: number },
): Promise<{ view: CallerView; entries: ToolEntry[]; unavailable: string[] }> {
  const [view, registry] = await Promise.all([loadCallerView(ctx, caller), ctx.registry.forTenant(caller.tenantId)]);
  // The tenant's view has an index of its own; a tenant without servers shares the deployment's.
  const hits = toolIndexFor(registry).query(query.text, {
    limit: query.limit,
    filter: (entry) => (!query.provider || entry.provider.manifest.name === query.provider) && mayUse(view, entry),
    connected: (entry) => isConnected(view, entry),
  });
  if (ctx.config.SEARCH_DEBUG) {
    const results = hits.map((h) => ({ name: h.entry.qualifiedName, score: h.score, ...h.parts }));
    ctx.logger.info({ query: query.text, provider: query.provider, results }, 'search score parts');
  }
  // An upstream that is down is named, not shown as having no tools (the answer's `unavailable`, as for sources).
  const unavailable = registry
    .unavailableIntegrations()
    .filter(
      (name) =>
        (!query.provider || name === query.provider) &&
        hasConnectionRole(view.settings, view.roles) &&
        isProviderEnabled(view.settings, name),
    );
  return { view, entries: hits.map((h) => h.entry), unavailable };
}
