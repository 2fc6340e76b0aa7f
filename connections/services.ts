import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../core/config.js';
import type { TokenSigner } from '../core/signed-tokens.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { Pool } from '../store/database.js';
import type { Keyring } from '../store/keyring.js';

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
