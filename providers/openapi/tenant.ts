import { createHash } from 'node:crypto';
import type { Lookup } from '../../core/host-resolution.js';
import type { AllowedHost } from '../../core/network-policy.js';
import { unstorableTextPaths } from '../../core/storable-text.js';
import {
  isOpenApiItem,
  type TenantOpenApiEntry,
  type TenantOpenApiInput,
  tenantOpenApiInputSchema,
} from '../../core/tenant-openapi-entry.js';
import { describeIssues } from '../../core/upstream-entry.js';
import { resolveInsideApiBase } from '../sdk/api-base.js';
import { type EgressErrors, type GuardedFetch, guardedFetch } from '../sdk/guarded-fetch.js';
import { ResponseTooLarge } from '../sdk/http.js';
import type { Provider, ToolContext } from '../sdk/index.js';
import { DOCUMENT_LIMITS, type OpenApiDocument, OpenApiError, parseDocument } from './document.js';
import { openapiProvider } from './provider.js';

/**
 * Tenants' OpenAPI integrations: their documents are fetched once (on add) through the guarded
 * egress that tenants' upstream MCP servers use, and their tools' requests go through it too. So a
 * tenant reaches no loopback, private, link-local or metadata address (unless the operator's
 * UPSTREAM_MCP_ALLOWED_HOSTS lists it), whatever its document's `servers` name, and no redirect is
 * followed.
 */

export const TENANT_DOCUMENT_LIMITS = {
  /** Bytes of a tenant's document read at most (GitHub's whole REST API, 13 MB, fits). */
  bytes: Math.min(16 * 1024 * 1024, DOCUMENT_LIMITS.chars),
  /** Milliseconds the document's fetch may take, headers and body. */
  timeoutMs: 30_000,
} as const;

export interface TenantOpenApiOptions {
  allowedHosts?: readonly AllowedHost[];
  /** Bytes of one tool call's answer read at most (CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES). */
  maxResponseBytes: number;
  documentBytes?: number;
  documentTimeoutMs?: number;
  lookup?: Lookup;
}

/** The guarded egress refusing an address, as a problem with the entry's document or base URL. */
class TenantEgressRefused extends Error {
  readonly code = 'upstream_address_refused';
  constructor(why: string, url?: URL) {
    super(
      `Switchboard does not reach ${url ? url.origin : 'this address'} for a tenant's integration: ${why} (an operator may allow it in UPSTREAM_MCP_ALLOWED_HOSTS)`,
    );
    this.name = 'TenantEgressRefused';
  }
}

const callErrors: EgressErrors = {
  refused: (why, url) => new TenantEgressRefused(why, url),
  unreachable: (message) => new Error(message),
  tooLarge: (maxBytes) => new ResponseTooLarge(maxBytes),
};

const documentErrors: EgressErrors = {
  refused: (why, url) => new OpenApiError('', new TenantEgressRefused(why, url).message),
  unreachable: (message) => new OpenApiError('', `the document could not be fetched: ${message}`),
  tooLarge: (maxBytes) => new OpenApiError('', `the document is larger than ${maxBytes} bytes`),
};

/** The document's text, fetched once through the guarded egress; an OpenApiError says why not. */
export async function fetchTenantDocument(url: string, options: TenantOpenApiOptions): Promise<string> {
  const maxBytes = options.documentBytes ?? TENANT_DOCUMENT_LIMITS.bytes;
  const fetch = guardedFetch({
    allowedHosts: options.allowedHosts,
    maxResponseBytes: maxBytes,
    timeoutMs: options.documentTimeoutMs ?? TENANT_DOCUMENT_LIMITS.timeoutMs,
    lookup: options.lookup,
    errors: documentErrors,
  });
  const res = await fetch(url, { headers: { accept: 'application/json, application/yaml;q=0.9, */*;q=0.5' } });
  if (res.status >= 300) {
    await res.body?.cancel().catch(() => undefined);
    const moved = res.status < 400 ? `; it redirects${res.headers.get('location') ? ' elsewhere' : ''}, give the document's own URL` : '';
    throw new OpenApiError('', `fetching the document answered HTTP ${res.status}${moved}`);
  }
  let bytes: ArrayBuffer;
  try {
    bytes = await res.arrayBuffer();
  } catch (err) {
    if (err instanceof ResponseTooLarge) throw documentErrors.tooLarge(maxBytes, new URL(url));
    if (err instanceof OpenApiError) throw err;
    throw new OpenApiError('', `the document could not be read to its end (${(err as Error).message.slice(0, 160)})`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new OpenApiError('', 'the document is not UTF-8 text');
  }
  // Postgres text holds no NUL; JSON and YAML documents have none either.
  if (text.includes('\u0000')) throw new OpenApiError('', 'the document contains a NUL character');
  return text;
}

/**
 * A tool's request through the guarded egress: inside the API base (as ctx.fetch keeps it), the
 * credential put on as the provider puts it, a redirect answered as an error rather than followed.
 */
function egressSender(egress: GuardedFetch, authorize: Provider['authorize']) {
  return async (ctx: ToolContext, path: string, init: RequestInit): Promise<Response> => {
    const url = resolveInsideApiBase(path, ctx.apiBaseUrl);
    const headers = new Headers(init.headers);
    if (!headers.has('accept')) headers.set('accept', 'application/json');
    if (!headers.has('user-agent')) headers.set('user-agent', 'switchboard');
    if (authorize) authorize(ctx.credential, headers);
    else if (ctx.credential.type === 'oauth2') headers.set('authorization', `Bearer ${ctx.credential.accessToken}`);
    const res = await egress(url, { ...init, headers, signal: ctx.signal });
    if (res.status >= 300 && res.status < 400 && res.headers.has('location')) {
      await res.body?.cancel().catch(() => undefined);
      throw new Error(`The service redirected ${init.method ?? 'GET'} ${url.pathname}; a tenant's integration follows no redirect`);
    }
    return res;
  };
}

/** How the deployment fetches, parses and builds tenants' OpenAPI integrations (core/ports TenantOpenApiSource, less `text`). */
export function tenantOpenApiFactory(options: TenantOpenApiOptions) {
  const egress = guardedFetch({ allowedHosts: options.allowedHosts, maxResponseBytes: options.maxResponseBytes, errors: callErrors });
  return {
    async fetch(url: string): Promise<{ text: string; document: OpenApiDocument }> {
      const text = await fetchTenantDocument(url, options);
      return { text, document: parseDocument(text) };
    },
    parse: (text: string): OpenApiDocument => parseDocument(text),
    build(entry: TenantOpenApiEntry, document: OpenApiDocument, _tenantId: string): Provider {
      const { provider } = openapiProvider(entry, document, { send: (authorize) => egressSender(egress, authorize) });
      // A stored key belongs to the base URL it was entered for: an entry removed and added again
      // under the same name with another base URL never receives its people's keys.
      return { ...provider, credentialBinding: `openapi:${provider.manifest.apiBaseUrl}` };
    },
  };
}

/**
 * The administrator's text when it is an OpenAPI integration (a JSON object with `"kind":
 * "openapi"`), checked; undefined for anything else (an upstream MCP server's entry or a catalog
 * name). Throws an Error naming the field, e.g. `document: expected the https URL …`.
 */
export function parseTenantOpenApi(text: string): TenantOpenApiInput | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return undefined;
  let item: unknown;
  try {
    item = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (!isOpenApiItem(item)) return undefined;
  const unstorable = unstorableTextPaths(item);
  if (unstorable.length) throw new Error(`${unstorable.join(', ')}: U+0000 or an unpaired surrogate, which no entry can hold`);
  const parsed = tenantOpenApiInputSchema.safeParse(item);
  if (!parsed.success) throw new Error(describeIssues(parsed.error).join('; '));
  // The deployment's OAuth clients are the operator's: a tenant's entry does not borrow one for a base URL of its choosing.
  if (parsed.data.auth.type === 'oauth2')
    throw new Error('auth.type: "oauth2" is not offered for a tenant\'s OpenAPI integration; use "apikey", "bearer" or "none"');
  return parsed.data;
}

/** The stored entry of an input whose document text is `text`. */
export const withDocumentSha = (input: TenantOpenApiInput, text: string): TenantOpenApiEntry => ({
  ...input,
  documentSha256: createHash('sha256').update(text).digest('hex'),
});
