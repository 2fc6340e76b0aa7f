import { z } from 'zod';
import { UPSTREAM_NAME_MAX_CHARS } from '../../core/upstream-entry.js';
import { ResponseTooLarge } from '../sdk/http.js';
import { capResponse } from '../sdk/response-cap.js';

/**
 * The official MCP Registry (`GET /v0.1/servers`, preview): search it for remote MCP servers and
 * turn one into an upstream entry. The registry is a directory anyone publishes to, so what it
 * answers is read as untrusted: the answer is bounded in bytes and count, each server checked for
 * shape, and the entry made from it goes through every check an administrator's own JSON entry
 * goes through (ProviderRegistry.tenantEntry: the URL's scheme and hosts, names that would shadow
 * the deployment's). Nothing here stores anything.
 */

export const MCP_REGISTRY_DEFAULT_URL = 'https://registry.modelcontextprotocol.io';
export const MCP_REGISTRY_LIMITS = {
  /** One answer of the registry, at most (a page of 100 servers is ~200 KB). */
  responseBytes: 1024 * 1024,
  /** Servers asked for per search. */
  results: 30,
  timeoutMs: 10_000,
  queryChars: 200,
} as const;

const text = (max: number) => z.string().max(max);

const remoteSchema = z.looseObject({
  type: z.string().max(40),
  url: text(2000),
  headers: z
    .array(
      z.looseObject({
        name: text(200),
        description: text(500).optional(),
        isRequired: z.boolean().optional(),
        isSecret: z.boolean().optional(),
      }),
    )
    .max(20)
    .optional(),
});

const serverSchema = z.looseObject({
  name: text(200),
  title: text(200).optional(),
  description: text(2000).optional(),
  version: text(100),
  remotes: z.array(remoteSchema).max(20).optional(),
});

const listSchema = z.looseObject({
  servers: z.array(z.looseObject({ server: serverSchema })).max(200),
  metadata: z.looseObject({ nextCursor: text(500).optional() }).optional(),
});

export type RegistryServer = z.infer<typeof serverSchema>;

export class McpRegistryError extends Error {
  readonly code = 'mcp_registry';
}

export interface RegistryOptions {
  /** The registry's base URL (MCP_REGISTRY_URL). */
  baseUrl: string;
  fetch?: typeof fetch;
}

/** Servers whose name matches `query` (the registry's substring search), latest versions only; at most MCP_REGISTRY_LIMITS.results. */
export async function searchMcpRegistry(options: RegistryOptions, query: string): Promise<RegistryServer[]> {
  const url = new URL('/v0.1/servers', options.baseUrl);
  url.searchParams.set('search', query.slice(0, MCP_REGISTRY_LIMITS.queryChars));
  url.searchParams.set('version', 'latest');
  url.searchParams.set('limit', String(MCP_REGISTRY_LIMITS.results));
  const body = await getJson(options, url);
  const parsed = listSchema.safeParse(body);
  if (!parsed.success)
    throw new McpRegistryError(`the registry's answer is not a server list (${parsed.error.issues[0]?.message ?? 'bad shape'})`);
  return parsed.data.servers.slice(0, MCP_REGISTRY_LIMITS.results).map((s) => s.server);
}

/** The server of exactly this registry name (latest version), or undefined. */
export async function findMcpRegistryServer(options: RegistryOptions, name: string): Promise<RegistryServer | undefined> {
  return (await searchMcpRegistry(options, name)).find((s) => s.name === name);
}

async function getJson(options: RegistryOptions, url: URL): Promise<unknown> {
  let res: Response;
  try {
    res = await (options.fetch ?? fetch)(url, {
      headers: { accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(MCP_REGISTRY_LIMITS.timeoutMs),
    });
  } catch (err) {
    throw new McpRegistryError(`the MCP Registry at ${url.origin} could not be reached (${(err as Error).name})`);
  }
  if (!res.ok) {
    void res.body?.cancel().catch(() => {});
    throw new McpRegistryError(`the MCP Registry at ${url.origin} answered HTTP ${res.status}`);
  }
  try {
    return await capResponse(res, MCP_REGISTRY_LIMITS.responseBytes).json();
  } catch (err) {
    if (err instanceof ResponseTooLarge)
      throw new McpRegistryError(`the MCP Registry's answer is larger than ${MCP_REGISTRY_LIMITS.responseBytes} bytes`);
    throw new McpRegistryError("the MCP Registry's answer is not JSON");
  }
}

/**
 * An integration name from a registry name (`io.github.acme/weather-mcp` → `weather-mcp`):
 * its last segment in lower case, other characters as single hyphens, within the name length.
 */
export function integrationNameOf(registryName: string): string {
  const last = registryName.split('/').pop() ?? registryName;
  const words = last
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, UPSTREAM_NAME_MAX_CHARS)
    .replace(/-+$/, '');
  return words || 'registry-server';
}

/**
 * The upstream entry (unvalidated: the caller checks it as any administrator's entry) of a
 * registry server's remote endpoint: streamable HTTP preferred, then SSE. A remote that asks for a
 * secret header becomes an API-key entry on that header; otherwise no credential (a server that
 * answers 401 with OAuth metadata is connected as such; `auth` overrides). Undefined when the
 * server has no remote endpoint (it is published as a package to run locally).
 */
export function registryUpstreamEntry(
  server: RegistryServer,
  options: { as?: string; auth?: 'none' | 'oauth2' } = {},
): Record<string, unknown> | undefined {
  const remotes = server.remotes ?? [];
  const remote = remotes.find((r) => r.type === 'streamable-http') ?? remotes.find((r) => r.type === 'sse');
  if (!remote) return undefined;
  const secret = remote.headers?.find((h) => h.isSecret || h.isRequired);
  const auth = options.auth
    ? { type: options.auth }
    : secret
      ? { type: 'apikey', header: secret.name, label: (secret.description || secret.name).slice(0, 80) }
      : { type: 'none' };
  return {
    name: options.as ?? integrationNameOf(server.name),
    displayName: (server.title || server.name.split('/').pop() || server.name).slice(0, 80),
    url: remote.url,
    ...(server.description && { description: server.description.slice(0, 500) }),
    auth,
  };
}
