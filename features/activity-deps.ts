import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../core/config.js';
import type { TokenSigner } from '../core/signed-tokens.js';
import type { Pool } from '../platform/database/database.js';
import type { Keyring } from '../platform/database/keyring.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { ToolServices } from '../providers/sdk/index.js';

/** What activities need from the process that hosts them. */
export interface ActivityDeps {
  pool: Pool;
  keyring: Keyring;
  registry: ProviderRegistry;
  config: Config;
  logger: Logger;
  /** Starts approval workflows (a gated call) and signals them. */
  temporal: Client;
  /** Signs connect links (the workflow helpers' connect). */
  signer: TokenSigner;
  /** What built-in tools use (notes storage, the browser); without it they answer that they are unavailable. */
  toolServices?: ToolServices;
}
