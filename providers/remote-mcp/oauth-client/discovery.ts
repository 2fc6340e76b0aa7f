import { buildDiscoveryUrls } from '@modelcontextprotocol/sdk/client/auth.js';
import { checkResourceAllowed, resourceUrlFromServerUrl } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import { formatIp, normalizeHost, parseIp } from '../../../core/network-policy.js';
import type { EgressOptions, GuardedFetch } from '../../sdk/guarded-fetch.js';
import { checkAuthUrlShape, mcpAuthFetch } from './egress.js';
import {
  type AuthorizationServerMetadata,
  type ProtectedResourceMetadata,
  parseAuthorizationServerMetadata,
  parseProtectedResourceMetadata,
  readJsonObject,
} from './metadata.js';
import { McpAuthError } from './oauth-errors.js';
import { probeServer } from './probe.js';
import { type BearerChallenge, bearerChallenge } from './www-authenticate.js';

/** Everything the authorization of one MCP server needs, learned from the server and its AS. */
export interface DiscoveredAuthorization {
  /** The MCP endpoint as the operator registered it. */
  serverUrl: string;
  /** The canonical server URI sent as RFC 8707 `resource` on authorize, token and refresh requests. */
  resource: string;
  resourceMetadataUrl: string;
  resourceMetadata: ProtectedResourceMetadata;
  authorizationServer: AuthorizationServerMetadata;
  /** Scopes to ask for: the challenge's `scope`, else `scopes_supported`, else none (omit the parameter). */
  scopes: string[] | undefined;
}

interface DiscoveryOptions extends EgressOptions {
  /** A challenge already in hand (a 401 or 403 of a real call): no probe is sent. */
  challenge?: string | null;
  /** Only this authorization server may be used (a pre-registered client's issuer). */
  expectedIssuer?: string;
  /** The fetch to use; built from the egress options when absent. */
  fetch?: GuardedFetch;
  /**
   * Let the server's own host and port through even at a private address. Off by default, and the
   * product never sets it: an upstream's URL may come from a tenant administrator, and the tool
   * sessions reach a private address only through UPSTREAM_MCP_ALLOWED_HOSTS too.
   */
  trustServerHost?: boolean;
}

const ACCEPT_JSON = { accept: 'application/json' };

/**
 * From an MCP server URL to its authorization server, as the MCP authorization spec (2025-11-25)
 * says: an unauthenticated probe whose 401 carries `WWW-Authenticate: Bearer resource_metadata=…,
 * scope=…`; RFC 9728 protected resource metadata from that URL, else path-inserted then root
 * well-known; the authorization server it names; its RFC 8414 / OpenID metadata from the
 * well-known URLs the spec lists, in its order; the issuer checked, PKCE S256 required.
 *
 * The server's own origin is where its metadata must live (a `resource_metadata` elsewhere is
 * refused), and the metadata must name this server as its resource — so a hostile document cannot
 * have Switchboard ask the user for a token meant for another service.
 */
export async function discoverAuthorization(serverUrl: string, options: DiscoveryOptions = {}): Promise<DiscoveredAuthorization> {
  const own = options.trustServerHost ? serverEgress(serverUrl, options) : options;
  const fetch = options.fetch ?? mcpAuthFetch(own);
  const server = checkAuthUrlShape(serverUrl, own);
  const challenge: BearerChallenge | undefined =
    options.challenge !== undefined ? bearerChallenge(options.challenge) : await probeServer(server, fetch);
  const { metadata: resourceMetadata, url: resourceMetadataUrl } = await fetchProtectedResourceMetadata(
    server,
    challenge,
    fetch,
    challenge === undefined,
  );
  const resource = canonicalResource(server, resourceMetadata);
  const issuer = pickAuthorizationServer(resourceMetadata, options.expectedIssuer);
  // The authorization server is wherever the metadata says: only the operator's allow-list (not
  // the server's own) lets it be on a private address.
  const asFetch = options.fetch ?? mcpAuthFetch(options);
  const authorizationServer = await fetchAuthorizationServerMetadata(issuer, { ...options, fetch: asFetch });
  const scopes = challenge?.scope ?? resourceMetadata.scopes_supported;
  return {
    serverUrl: server.href,
    resource,
    resourceMetadataUrl,
    resourceMetadata,
    authorizationServer,
    scopes: scopes?.length ? scopes : undefined,
  };
}

/** The egress with the server's own host and port added (`trustServerHost`); nothing else is added. */
function serverEgress(serverUrl: string, options: EgressOptions): EgressOptions {
  const url = new URL(serverUrl);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const ip = parseIp(url.hostname);
  const host = ip ? formatIp(ip) : normalizeHost(url.hostname);
  return { ...options, allowedHosts: [...(options.allowedHosts ?? []), { host, port }] };
}

/** RFC 9728 metadata: the challenge's `resource_metadata` (same origin only), else the well-known URLs. */
async function fetchProtectedResourceMetadata(
  server: URL,
  challenge: BearerChallenge | undefined,
  fetch: GuardedFetch,
  unchallenged = false,
): Promise<{ metadata: ProtectedResourceMetadata; url: string }> {
  let candidates: URL[];
  if (challenge?.resourceMetadata) {
    const named = URL.canParse(challenge.resourceMetadata) ? new URL(challenge.resourceMetadata) : undefined;
    if (!named || named.origin !== server.origin) {
      throw new McpAuthError('resource_mismatch', `the server's resource_metadata is not on its own origin ${server.origin}`);
    }
    candidates = [named];
  } else {
    const path = server.pathname.replace(/\/$/, '');
    candidates = [
      ...(path ? [new URL(`/.well-known/oauth-protected-resource${path}`, server.origin)] : []),
      new URL('/.well-known/oauth-protected-resource', server.origin),
    ];
  }
  for (const url of candidates) {
    const res = await fetch(url, { headers: ACCEPT_JSON });
    if (res.status === 200) {
      const doc = await readJsonObject(res, `protected resource metadata at ${url.href}`);
      return { metadata: parseProtectedResourceMetadata(doc, `protected resource metadata at ${url.href}`), url: url.href };
    }
    await res.body?.cancel().catch(() => {});
    if (res.status >= 500) throw new McpAuthError('metadata_unavailable', `${url.href} answered HTTP ${res.status}`, res.status);
  }
  if (unchallenged)
    throw new McpAuthError('not_protected', `${server.href} did not ask for authorization and publishes no protected resource metadata`);
  throw new McpAuthError(
    'metadata_unavailable',
    `no protected resource metadata for ${server.href} (tried ${candidates.map((u) => u.pathname).join(', ')})`,
  );
}

/** The `resource` to send: the metadata's, which must name this server (same origin, a prefix of its path). */
export function canonicalResource(server: URL, metadata: ProtectedResourceMetadata): string {
  const requested = resourceUrlFromServerUrl(server);
  if (!checkResourceAllowed({ requestedResource: requested, configuredResource: metadata.resource })) {
    throw new McpAuthError(
      'resource_mismatch',
      `the protected resource metadata is for ${metadata.resource.slice(0, 200)}, not ${requested.href}`,
    );
  }
  // Sent as the metadata writes it: authorization servers compare it exactly.
  return metadata.resource;
}

function pickAuthorizationServer(metadata: ProtectedResourceMetadata, expected: string | undefined): string {
  const usable = metadata.authorization_servers.filter((s) => URL.canParse(s));
  if (expected) {
    const match = usable.find((s) => s === expected || new URL(s).href === new URL(expected).href);
    if (!match) throw new McpAuthError('issuer_mismatch', `the server does not name the configured authorization server ${expected}`);
    return match;
  }
  if (!usable.length) throw new McpAuthError('metadata_invalid', 'the protected resource metadata names no usable authorization server');
  return usable[0];
}

/**
 * RFC 8414 / OpenID Connect metadata for `issuer`, from the well-known URLs in the MCP spec's
 * order (the SDK's `buildDiscoveryUrls` lists them): a 4xx moves on to the next, a 5xx stops.
 */
export async function fetchAuthorizationServerMetadata(
  issuer: string,
  options: EgressOptions & { fetch?: GuardedFetch } = {},
): Promise<AuthorizationServerMetadata> {
  const fetch = options.fetch ?? mcpAuthFetch(options);
  checkAuthUrlShape(issuer, options);
  for (const { url } of buildDiscoveryUrls(issuer)) {
    const res = await fetch(url, { headers: ACCEPT_JSON });
    if (res.status === 200) {
      const what = `authorization server metadata at ${url.href}`;
      return parseAuthorizationServerMetadata(await readJsonObject(res, what), issuer, what);
    }
    await res.body?.cancel().catch(() => {});
    if (res.status >= 500) throw new McpAuthError('metadata_unavailable', `${url.href} answered HTTP ${res.status}`, res.status);
  }
  throw new McpAuthError('metadata_unavailable', `no authorization server metadata for ${issuer}`);
}
