import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../core/config.js';
import type { AllowedHost } from '../core/network-policy.js';
import type { TokenSigner } from '../core/signed-tokens.js';
import type { UpstreamEntry } from '../core/upstream-entry.js';
import { ApprovalWaiter } from '../features/approvals/waiter.js';
import { upstreamServices } from '../features/connections/upstream-services.js';
import { ConnectionWaiter } from '../features/connections/waiter.js';
import type { ServiceContext } from '../features/context.js';
import pkg from '../package.json' with { type: 'json' };
import type { Pool } from '../platform/database/database.js';
import type { Keyring } from '../platform/database/keyring.js';
import { tenantUpstreamSource } from '../platform/database/tenant-upstream-servers.js';
import { builtinProviders } from '../providers/builtin/index.js';
import { openapiProviders } from '../providers/openapi/index.js';
import { tenantOpenApiFactory } from '../providers/openapi/tenant.js';
import { ProviderRegistry } from '../providers/registry.js';
import { tenantUpstreamFactory, upstreamFactory, upstreamProviders } from '../providers/remote-mcp/index.js';
import type { Provider } from '../providers/sdk/index.js';

/**
 * An upstream built with its own network exception (its loopback origin) in place of
 * UPSTREAM_MCP_ALLOWED_HOSTS: the demo integration `npm start` serves (demo/integration.ts).
 */
interface ExceptedUpstream {
  entry: UpstreamEntry;
  allowedHosts: AllowedHost[];
}

/**
 * The built-in providers, the demo integration when `npm start` serves it, and the operator's
 * upstream MCP servers (UPSTREAM_MCP_SERVERS) and OpenAPI integrations (OPENAPI_INTEGRATIONS); with `services` (features/connections/upstream-services.ts)
 * `auth: oauth2` upstreams connect and tool listings are shared through the database (without, the
 * configuration is only checked). The demo's network exception reaches no other provider, and no
 * tenant's server.
 */
export function allProviders(
  config: Config,
  logger?: Logger,
  services?: ReturnType<typeof upstreamServices>,
  demo?: ExceptedUpstream,
): Provider[] {
  const options = { version: pkg.version, logger, ...services };
  const demoProviders = demo ? [upstreamFactory({ ...config, UPSTREAM_MCP_ALLOWED_HOSTS: demo.allowedHosts }, options)(demo.entry)] : [];
  const fixed = [...builtinProviders, ...demoProviders];
  const withUpstreams = [...fixed, ...upstreamProviders(config, fixed, options)];
  return [...withUpstreams, ...openapiProviders(config, withUpstreams, { logger })];
}

/**
 * What the entry points open before the services are composed, and how they differ. The pool, the
 * Temporal client and the secrets are the caller's: the server and worker bins open their own
 * (bin/support/services.ts), the library is given or makes them (library.ts).
 */
interface ServiceParts {
  config: Config;
  pool: Pool;
  keyring: Keyring;
  signer: TokenSigner;
  temporal: Client;
  logger: Logger;
  /**
   * Exactly these providers, in place of the deployment's (the library's `providers` option):
   * without the operator's upstream MCP servers, the demo or tenants' own servers.
   */
  providers?: readonly Provider[];
  /** The demo integration, served by `npm start` alone; joins the deployment's providers. */
  demo?: ExceptedUpstream;
  /** The client is on a NativeConnection this process's worker shares (the bins): starts may be eager. */
  eagerStart?: boolean;
}

/**
 * The one place the services are composed: the provider registry (the deployment's providers,
 * upstream servers and tenants' own servers, or the caller's list) and the waiters, around the
 * parts the entry point opened. Used by `npm start`, the server and worker bins, the library and
 * the tests (through bin/support/services.ts).
 */
export function composeServices(parts: ServiceParts): ServiceContext {
  const { config, pool, keyring, temporal, logger } = parts;
  const upstream = upstreamServices(config, pool, keyring);
  const registry = parts.providers
    ? ProviderRegistry.fromConfig(parts.providers, config)
    : ProviderRegistry.fromConfig(allProviders(config, logger, upstream, parts.demo), config).withTenantServers(
        tenantUpstreamSource(
          pool,
          keyring,
          tenantUpstreamFactory(config, { version: pkg.version, logger, ...upstream }),
          logger,
          tenantOpenApiFactory({
            allowedHosts: config.UPSTREAM_MCP_ALLOWED_HOSTS,
            maxResponseBytes: config.CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES,
          }),
        ),
      );
  return {
    config,
    pool,
    keyring,
    registry,
    temporal,
    ...(parts.eagerStart && { eagerStart: true }),
    logger,
    signer: parts.signer,
    waiter: new ConnectionWaiter(temporal, pool, logger),
    approvalWaiter: new ApprovalWaiter(temporal, pool, logger),
  };
}
