import type { Caller } from '../../core/caller.js';
import type { TenantSettings } from '../../core/policy.js';
import { isProviderEnabled } from '../../core/policy.js';
import type { Provider } from '../../providers/sdk/index.js';
import { getTenant } from '../accounts/store/tenants.js';
import type { ServiceContext } from '../context.js';

export async function tenantSettings(ctx: ServiceContext, caller: Caller): Promise<TenantSettings> {
  return (await getTenant(ctx.pool, caller.tenantId))?.settings ?? {};
}

/** The providers this caller's tenant enabled, in registration order. */
export async function enabledProviders(ctx: ServiceContext, caller: Caller): Promise<Provider[]> {
  const settings = await tenantSettings(ctx, caller);
  return (await ctx.registry.forTenant(caller.tenantId)).list().filter((p) => isProviderEnabled(settings, p.manifest.name));
}
