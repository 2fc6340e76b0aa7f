import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { NativeConnection, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import type { Logger } from 'pino';
import { type Config, ConfigError, loadConfig } from '../../core/config.js';
import { TokenSigner } from '../../core/signed-tokens.js';
import type { DemoIntegration } from '../../demo/integration.js';
import type { ServiceContext } from '../../features/context.js';
import { type BuiltinServices, createBuiltinServices } from '../../features/execution/tool-services.js';
import { createPool, ensureDatabase, migrate, type Pool } from '../../platform/database/database.js';
import { Keyring } from '../../platform/database/keyring.js';
import { createLogger } from '../../platform/telemetry/logger.js';
import { trackWorker } from '../../platform/telemetry/metrics.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { openapiEnvSpecs } from '../../providers/openapi/index.js';
import { providerEnvSpec } from '../../providers/sdk/index.js';
import { allProviders, composeServices } from '../../surfaces/compose-services.js';
import { SwitchboardPlugin } from '../../surfaces/temporal-plugin/index.js';
import { ensurePruneSchedule } from './prune-schedule.js';
import { ensureSearchAttributes } from './search-attributes.js';

/** Reads and validates the environment; throws a ConfigError naming every bad variable. */
export function readConfig(env: Record<string, string | undefined>): Config {
  const config = loadConfig(env, [
    ...builtinProviders.map((p) => providerEnvSpec(p.manifest)),
    ...openapiEnvSpecs(env.OPENAPI_INTEGRATIONS),
  ]);
  // Upstream MCP servers and OpenAPI documents are checked here too, so a bad entry stops the start like a bad variable.
  void allProviders(config);
  return config;
}

/** What an entry point adds to its services beyond the configuration. */
export interface ServiceOptions {
  /** The demo integration `npm start` serves (demo/); only that process registers it. */
  demo?: DemoIntegration;
  /** Interceptors of the Temporal client's workflow calls (`npm start` notices the first connect). */
  workflowInterceptors?: WorkflowClientInterceptor[];
}

/** Reads and validates the environment; prints every bad variable and exits on error. */
export function configFromEnv(env: Record<string, string | undefined> = process.env): Config {
  try {
    return readConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\nSee docs/reference/configuration.md.\n`);
      process.exit(2);
    }
    throw err;
  }
}

export function requireSecrets(config: Config): { keyring: Keyring; signer: TokenSigner } {
  const missing = [
    !config.ENCRYPTION_KEYS && 'ENCRYPTION_KEYS (id:base64 of 32 random bytes, e.g. k1:$(openssl rand -base64 32))',
    !config.PORTAL_SIGNING_SECRET && 'PORTAL_SIGNING_SECRET (at least 32 random characters)',
  ].filter(Boolean);
  if (missing.length) {
    process.stderr.write(`Invalid configuration:\n${missing.map((m) => `  ${m}: required`).join('\n')}\n`);
    process.exit(2);
  }
  return {
    keyring: new Keyring(config.ENCRYPTION_KEYS!, config.ENCRYPTION_ACTIVE_KEY_ID),
    signer: new TokenSigner(config.PORTAL_SIGNING_SECRET!),
  };
}

export async function prepareDatabase(config: Config, logger: Logger): Promise<Pool> {
  if (await ensureDatabase(config.DATABASE_URL)) logger.info('created the database');
  const applied = await migrate({ url: config.DATABASE_URL, schema: config.DATABASE_SCHEMA });
  if (applied.length) logger.info({ applied }, 'applied migrations');
  return createPool({
    url: config.DATABASE_URL,
    schema: config.DATABASE_SCHEMA,
    poolMax: config.DATABASE_POOL_MAX,
    onError: (err) => logger.warn({ err: err.message }, 'idle Postgres client error'),
  });
}

export const temporalAddress = (config: Config) => config.TEMPORAL_ADDRESS ?? `127.0.0.1:${config.TEMPORAL_PORT}`;

export interface Services extends ServiceContext {
  /**
   * One native connection for the client and, in a process that runs one, the worker: Temporal
   * then hands a new batch's first workflow task straight back to this process (eager start).
   */
  connection: NativeConnection;
  /** Built-in tools' notes store and browser (chromium starts on first use, stops in close). */
  toolServices: BuiltinServices;
  close(): Promise<void>;
}

export async function openServices(
  config: Config,
  logger = createLogger({ level: config.LOG_LEVEL }),
  options: ServiceOptions = {},
): Promise<Services> {
  const { keyring, signer } = requireSecrets(config);
  if (config.DEMO_INTEGRATION && !options.demo) {
    logger.warn('DEMO_INTEGRATION=on is served by `npm start` alone: this process does not register the demo integration');
  }
  const pool = await prepareDatabase(config, logger);
  await installTemporalRuntime(logger);
  const connection = await NativeConnection.connect({ address: temporalAddress(config) });
  await ensureSearchAttributes(connection, config.TEMPORAL_NAMESPACE, { pool, logger });
  const temporal = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    plugins: [new SwitchboardPlugin({ keyring })],
    ...(options.workflowInterceptors && { interceptors: { workflow: options.workflowInterceptors } }),
  });
  const context = composeServices({ config, pool, keyring, signer, temporal, logger, demo: options.demo, eagerStart: true });
  const toolServices = createBuiltinServices({ pool, config, logger });
  return {
    ...context,
    connection,
    toolServices,
    async close() {
      await context.registry.close();
      await toolServices.close();
      await connection.close();
      await pool.end();
    },
  };
}

/**
 * Creates Switchboard's worker on its own task queue, on the services' connection (shared with
 * their client, for eager workflow start). Shut it down before closing the services.
 */
export async function createWorker(services: Services, options: { workflowBundle?: WorkflowBundleOption } = {}): Promise<Worker> {
  const worker = await Worker.create({
    connection: services.connection,
    maxCachedWorkflows: services.config.WORKER_MAX_CACHED_WORKFLOWS,
    namespace: services.config.TEMPORAL_NAMESPACE,
    taskQueue: services.config.TEMPORAL_TASK_QUEUE,
    plugins: [new SwitchboardPlugin({ activityDeps: services, keyring: services.keyring, workflowBundle: options.workflowBundle })],
  });
  trackWorker(worker);
  // The daily retention job (RETENTION_DAYS). Another worker starting at the same moment may win
  // the race to create it: then it exists, which is all this wants.
  await ensurePruneSchedule(services.temporal, services.config, services.logger).catch((err: Error) =>
    services.logger.warn({ err: err.message }, 'could not create or update the retention schedule'),
  );
  return worker;
}

let runtimeInstalled = false;
/**
 * Routes the Temporal SDK's logs, the native Core's included (its client retries, say), through
 * pino (warnings and up), instead of Core printing them to the console itself. Once per process,
 * before the first NativeConnection.
 */
export async function installTemporalRuntime(logger: Logger): Promise<void> {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const { Runtime, DefaultLogger } = await import('@temporalio/worker');
  Runtime.install({
    logger: new DefaultLogger('WARN', (entry) => {
      const level = entry.level === 'ERROR' ? 'error' : 'warn';
      logger[level]({ temporal: entry.meta }, entry.message);
    }),
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
  });
}
