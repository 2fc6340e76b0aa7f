import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type express from 'express';
import type { Logger } from 'pino';
import type { Caller } from './core/caller.js';
import { type Config, loadConfig } from './core/config.js';
import { inputJsonSchema } from './core/json-schema.js';
import { TokenSigner } from './core/signed-tokens.js';
import type { ServiceContext } from './features/context.js';
import { CONNECTION_TOOL_NAMES } from './features/execution/tools/connections-execute.js';
import { runMetaTool } from './features/meta-tool.js';
import { AGENT_TOOLS } from './features/meta-tools.js';
import { createPool, migrate, type Pool } from './platform/database/database.js';
import { Keyring } from './platform/database/keyring.js';
import { createLogger } from './platform/telemetry/logger.js';
import { builtinProviders } from './providers/builtin/index.js';
import { openapiEnvSpecs } from './providers/openapi/index.js';
import { type Provider, providerEnvSpec } from './providers/sdk/index.js';
import { composeServices } from './surfaces/compose-services.js';
import { createApp } from './surfaces/http/app.js';

/** One of the two agent tools, ready to register in an agent runtime. */
export interface AgentTool {
  name: (typeof CONNECTION_TOOL_NAMES)[number];
  description: string;
  /** JSON Schema of the arguments. */
  inputSchema: Record<string, unknown>;
  /** Runs as `caller`: identity comes from the run's context, never from the model's arguments. */
  execute(args: unknown, caller: Caller): Promise<unknown>;
}

export interface SwitchboardOptions {
  /** Default: the built-in providers and the upstream MCP servers of `env.UPSTREAM_MCP_SERVERS`. */
  providers?: readonly Provider[];
  /** Postgres: a URL (migrations are applied) or your own pool (migrate it with `npm run admin`). */
  storage?: { databaseUrl: string; schema?: string } | { pool: Pool };
  /** `id:base64key[,id:base64key]` (32-byte keys); the first is active unless `activeKeyId` says otherwise. */
  encryptionKeys?: string;
  activeKeyId?: string;
  temporal: { client: Client; taskQueue?: string };
  publicBaseUrl?: string;
  /** Signs connect links and portal sessions (32+ random characters). Omitted: one per process (production: required). */
  signingSecret?: string;
  /** Register the two agent tools (opt-in). */
  tools?: boolean;
  /** Any other setting of the environment schema (docs/reference/configuration.md), e.g. CONNECTIONS_TOOL_TIMEOUT_MS. */
  env?: Record<string, string>;
  logger?: Logger;
}

export interface Switchboard {
  /** The HTTP service (JSON API, MCP, OAuth callback, portal) to mount or serve. */
  app: express.Express;
  /** connections_search and connections_execute when `tools: true` and storage and a key exist; else empty. */
  agentTools: AgentTool[];
  context?: ServiceContext;
  close(): Promise<void>;
}

export { CONNECTION_TOOL_NAMES };

/**
 * Builds Switchboard in code. Without storage or an encryption key nothing that needs them
 * is set up: the agent tools are not registered, and a log line says why.
 */
export async function createSwitchboard(options: SwitchboardOptions): Promise<Switchboard> {
  const providers = options.providers ?? builtinProviders;
  const config: Config = loadConfig(
    {
      ...options.env,
      ...(options.publicBaseUrl && { PUBLIC_BASE_URL: options.publicBaseUrl }),
      ...(options.encryptionKeys && { ENCRYPTION_KEYS: options.encryptionKeys }),
      ...(options.activeKeyId && { ENCRYPTION_ACTIVE_KEY_ID: options.activeKeyId }),
      ...(options.signingSecret !== undefined && { PORTAL_SIGNING_SECRET: options.signingSecret }),
      ...(options.temporal.taskQueue && { TEMPORAL_TASK_QUEUE: options.temporal.taskQueue }),
      ...(options.storage && 'databaseUrl' in options.storage && { DATABASE_URL: options.storage.databaseUrl }),
      ...(options.storage && 'schema' in options.storage && options.storage.schema && { DATABASE_SCHEMA: options.storage.schema }),
    },
    [
      ...providers.map((p) => providerEnvSpec(p.manifest)),
      // The operator's OpenAPI integrations join the built-ins (compose-services.ts): their OAuth clients too.
      ...(options.providers ? [] : openapiEnvSpecs(options.env?.OPENAPI_INTEGRATIONS)),
    ],
  );
  const logger = options.logger ?? createLogger({ level: config.LOG_LEVEL });
  const missing = !options.storage ? 'no storage' : !config.ENCRYPTION_KEYS ? 'no encryption key' : undefined;
  if (missing) {
    if (options.tools) logger.warn(`Switchboard agent tools not registered: ${missing} was configured`);
    return { app: (await import('express')).default(), agentTools: [], close: async () => {} };
  }

  const ownPool = 'databaseUrl' in options.storage!;
  let pool: Pool;
  if ('databaseUrl' in options.storage!) {
    await migrate({ url: options.storage.databaseUrl, schema: config.DATABASE_SCHEMA });
    pool = createPool({
      url: options.storage.databaseUrl,
      schema: config.DATABASE_SCHEMA,
      onError: (err) => logger.warn({ err: err.message }, 'idle Postgres client error'),
    });
  } else {
    pool = options.storage!.pool;
  }
  // Without a provider list of its own, the operator's upstream MCP servers join the built-ins,
  // and each tenant's own servers its view (ProviderRegistry.forTenant). The client is the
  // caller's, on a connection no worker of this process shares: starts are not eager.
  const context = composeServices({
    config,
    pool,
    keyring: new Keyring(config.ENCRYPTION_KEYS!, config.ENCRYPTION_ACTIVE_KEY_ID),
    signer: new TokenSigner(signingSecret(config, logger)),
    temporal: options.temporal.client,
    logger,
    providers: options.providers,
  });
  const agentTools: AgentTool[] = options.tools
    ? AGENT_TOOLS.map((tool) => ({
        name: tool.name as AgentTool['name'],
        description: tool.description,
        inputSchema: inputJsonSchema(tool),
        execute: (args, caller) => runMetaTool(tool, context, caller, args).catch((err) => (err.body ? err.body : Promise.reject(err))),
      }))
    : [];
  return {
    app: createApp(context),
    agentTools,
    context,
    close: async () => {
      await context.registry.close();
      if (ownPool) await pool.end();
    },
  };
}

/**
 * The secret for connect links and portal sessions: the configured one (validated by the config
 * schema; production refuses to start without it), else one made for this process, so nothing is
 * ever signed with an empty or fixed key. Links and sessions then end when the process does.
 */
function signingSecret(config: Config, logger: Logger): string {
  if (config.PORTAL_SIGNING_SECRET) return config.PORTAL_SIGNING_SECRET;
  logger.warn('no signingSecret given: generated one for this process; connect links and portal sessions end when it stops');
  return randomBytes(32).toString('base64url');
}
