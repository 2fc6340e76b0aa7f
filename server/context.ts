import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../core/config.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { Pool } from '../store/database.js';
import type { Keyring } from '../store/keyring.js';
import type { ConnectionWaiter } from './connection-waiter.js';
import type { TokenSigner } from './signed-tokens.js';

/** Everything a request handler may use; built once per process. */
export interface ServiceContext {
  config: Config;
  pool: Pool;
  keyring: Keyring;
  registry: ProviderRegistry;
  temporal: Client;
  logger: Logger;
  signer: TokenSigner;
  waiter: ConnectionWaiter;
}
