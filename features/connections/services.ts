import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../../core/config.js';
import type { TokenSigner } from '../../core/signed-tokens.js';
import type { Pool } from '../../platform/database/database.js';
import type { Keyring } from '../../platform/database/keyring.js';
import type { ProviderRegistry } from '../../providers/registry.js';

/**
 * What the connection lifecycle uses from the process that hosts it. Each step takes only the
 * fields it needs (a `Pick` of this); the server's context and the activities' deps have them.
 */
export interface ConnectionServices {
  config: Config;
  pool: Pool;
  keyring: Keyring;
  registry: ProviderRegistry;
  /** Signals and updates the connection workflow. */
  temporal: Client;
  logger: Logger;
  /** Signs and verifies connect links; keys the browser bindings' MACs. */
  signer: TokenSigner;
}

/**
 * The same services as `tenantId`'s people see them: the registry's view with that tenant's own
 * upstream servers (ProviderRegistry.forTenant), and no other tenant's. The same object back when
 * the tenant has none.
 */
export async function forTenant<T extends { registry: ProviderRegistry }>(services: T, tenantId: string): Promise<T> {
  const registry = await services.registry.forTenant(tenantId);
  return registry === services.registry ? services : { ...services, registry };
}
