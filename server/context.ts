import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { ConnectionWaiter } from '../connections/waiter.js';
import type { Config } from '../core/config.js';
import type { TokenSigner } from '../core/signed-tokens.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { Pool } from '../store/database.js';
import type { Keyring } from '../store/keyring.js';

/** Everything a request handler may use; built once per process. */
export interface ServiceContext {
  config: Config;
  pool: Pool;
  keyring: Keyring;
  registry: ProviderRegistry;
  temporal: Client;
  /**
   * The client is on a NativeConnection, so starts may ask for eager execution: when a worker
   * for the task queue runs in this process, the first workflow task comes back in the start
   * response instead of through a poll (Temporal drops the request when none does).
   */
  eagerStart?: boolean;
  logger: Logger;
  signer: TokenSigner;
  waiter: ConnectionWaiter;
}
