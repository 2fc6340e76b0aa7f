import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { OpenApiEntry } from '../../core/openapi-entry.js';
import { github } from '../builtin/github/index.js';
import { type SchemaChecker, sharedSchemaChecker } from '../remote-mcp/schema-checker.js';
import { argumentsTooCostly, MAX_ANALYSIS_STEPS, schemaCost } from '../remote-mcp/schema-cost.js';
import { ProviderHttpError } from '../sdk/http.js';
import type { Credential, OAuth2Manifest, Provider, ProviderManifest, ToolContext, ToolDefinition } from '../sdk/index.js';
import { isObject, type JsonObject, type OpenApiDocument, OpenApiError, place } from './document.js';
import { oauthService } from './oauth-services.js';
import { convertOperations, markdownText, type OperationSpec } from './operations.js';
import { buildRequest } from './request.js';

/**
 * An OpenAPI integration as a provider: one declared tool per selected operation, run through the
 * same executor as every tool (policy, approvals, credential and refresh, deadline, the API-base
 * guard of the tool context, response cap, redaction, truncation, audit). Nothing here is
 * special-cased by the executor: a tool's `run` builds its request (request.ts) and sends it with
 * `ctx.fetch`, which adds the credential and refuses anything outside the base URL.
 */

export interface OpenApiProviderOptions {
  /** Where arguments are checked against the input schema (the process's shared pool by default). */
  checker?: SchemaChecker;
  /**
   * How a tool's request is sent, given how the credential rides on it; default the tool
   * context's fetch. A tenant's integration sends through the guarded egress (tenant.ts).
   */
  send?: (authorize: Provider['authorize']) => Sender;
}

/** Sends one of a tool's requests: a path below the API base. */
export type Sender = (ctx: ToolContext, path: string, init: RequestInit) => Promise<Response>;

const contextFetch: Sender = (ctx, path, init) => ctx.fetch(path, init);

/** The document's first server, its `{variables}` given their defaults; an absolute http(s) URL. */
export function documentBaseUrl(doc: OpenApiDocument): string {
  const servers = doc.root.servers;
  const first = Array.isArray(servers) ? servers[0] : undefined;
  if (!isObject(first) || typeof first.url !== 'string')
    throw new OpenApiError('servers', 'the document names no server; set the entry\'s "baseUrl"');
  const variables = isObject(first.variables) ? first.variables : {};
  const url = first.url.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const variable = variables[name];
    if (!isObject(variable) || typeof variable.default !== 'string')
      throw new OpenApiError(place(place('servers[0]', 'variables'), name), 'has no default');
    return variable.default;
  });
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url))
    throw new OpenApiError('servers[0].url', `"${url.slice(0, 100)}" is not an absolute http(s) URL; set the entry's "baseUrl"`);
  return url.replace(/\/+$/, '');
}

/** The authorization-code flow the document declares (its first oauth2 security scheme with one), if any. */
function documentOAuth(doc: OpenApiDocument): { authorizeUrl: string; tokenUrl: string; scopes: string[] } | undefined {
  const components = isObject(doc.root.components) ? doc.root.components : {};
  const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {};
  for (const scheme of Object.values(schemes)) {
    if (!isObject(scheme) || scheme.type !== 'oauth2' || !isObject(scheme.flows)) continue;
    const flow = scheme.flows.authorizationCode;
    if (!isObject(flow) || typeof flow.authorizationUrl !== 'string' || typeof flow.tokenUrl !== 'string') continue;
    return {
      authorizeUrl: flow.authorizationUrl,
      tokenUrl: flow.tokenUrl,
      scopes: isObject(flow.scopes) ? Object.keys(flow.scopes) : [],
    };
  }
  return undefined;
}

/** The environment prefix of an entry's OAuth client (`GITHUB` for GitHub's app, else the entry's or its name's). */
export function envPrefixOf(entry: OpenApiEntry): string {
  if (entry.auth.type === 'oauth2' && entry.auth.app === 'github') return github.manifest.envPrefix;
  if (entry.auth.type === 'oauth2' && entry.auth.envPrefix) return entry.auth.envPrefix;
  return entry.name.toUpperCase().replace(/-/g, '_');
}

function manifestOf(entry: OpenApiEntry, doc: OpenApiDocument, apiBaseUrl: string): ProviderManifest {
  const info = isObject(doc.root.info) ? doc.root.info : {};
  const about = typeof info.description === 'string' ? markdownText(info.description).slice(0, 300) : '';
  const base = {
    name: entry.name,
    version: typeof info.version === 'string' ? info.version.slice(0, 40) : '1.0.0',
    displayName: entry.displayName,
    description: entry.description ?? (about || `${entry.displayName} (from its OpenAPI document)`),
    envPrefix: envPrefixOf(entry),
    toolPrefix: entry.name.replace(/-/g, '_'),
    apiBaseUrl,
    // On the GitHub app the integration is GitHub's: its hand-written tools go first where both match.
    ...(entry.auth.type === 'oauth2' && entry.auth.app === 'github' && { defersTo: github.manifest.name }),
  };
  const { auth } = entry;
  if (auth.type === 'none') return { ...base, auth: 'none' };
  if (auth.type === 'apikey' || auth.type === 'bearer') {
    const placeholder = auth.type === 'apikey' ? auth.placeholder : undefined;
    return {
      ...base,
      auth: 'apikey',
      apiKeyFields: [{ name: 'apiKey', label: auth.label, secret: true, ...(placeholder && { placeholder }) }],
    };
  }
  let oauth2: OAuth2Manifest;
  if (auth.app === 'github') {
    oauth2 = { ...github.manifest.oauth2!, ...(auth.scopes && { scopes: auth.scopes }) };
  } else if (auth.service) {
    const service = oauthService(auth.service, { ...(auth.subdomain && { subdomain: auth.subdomain }) });
    oauth2 = {
      authorizeUrl: service.authorizeUrl,
      tokenUrl: service.tokenUrl,
      ...(auth.revokeUrl && { revokeUrl: auth.revokeUrl }),
      scopes: auth.scopes ?? [],
      scopeSeparator: service.scopeSeparator,
      rotatesRefreshTokens: service.refresh === 'rotating',
      ...(service.authorizeParams && { authorizeParams: service.authorizeParams }),
      ...((auth.clientAuth ?? service.clientAuth) && { clientAuth: auth.clientAuth ?? service.clientAuth }),
    };
  } else {
    const fromDoc = documentOAuth(doc);
    const authorizeUrl = auth.authorizeUrl ?? fromDoc?.authorizeUrl;
    const tokenUrl = auth.tokenUrl ?? fromDoc?.tokenUrl;
    if (!authorizeUrl || !tokenUrl)
      throw new OpenApiError(
        'components.securitySchemes',
        'no oauth2 authorizationCode flow in the document; give auth.authorizeUrl and auth.tokenUrl in the entry',
      );
    oauth2 = {
      authorizeUrl,
      tokenUrl,
      ...(auth.revokeUrl && { revokeUrl: auth.revokeUrl }),
      scopes: auth.scopes ?? fromDoc?.scopes ?? [],
      ...(auth.clientAuth && { clientAuth: auth.clientAuth }),
    };
  }
  return { ...base, auth: 'oauth2', oauth2 };
}

/** How the credential rides on each request: an OAuth token as Bearer (the default), a key in its header. */
function authorizer(entry: OpenApiEntry): Provider['authorize'] {
  const { auth } = entry;
  if (auth.type === 'apikey' && auth.in === 'header')
    return (credential, headers) => {
      if (credential.type === 'apikey' && credential.fields.apiKey) headers.set(auth.name, `${auth.prefix}${credential.fields.apiKey}`);
    };
  if (auth.type === 'bearer')
    return (credential, headers) => {
      if (credential.type === 'apikey' && credential.fields.apiKey) headers.set('authorization', `Bearer ${credential.fields.apiKey}`);
    };
  return undefined;
}

/** A key that goes in the query: appended to the path after the operation's own parameters. */
function withQueryKey(entry: OpenApiEntry, path: string, credential: Credential): string {
  if (entry.auth.type !== 'apikey' || entry.auth.in !== 'query' || credential.type !== 'apikey' || !credential.fields.apiKey) return path;
  const pair = `${encodeURIComponent(entry.auth.name)}=${encodeURIComponent(`${entry.auth.prefix}${credential.fields.apiKey}`)}`;
  return `${path}${path.includes('?') ? '&' : '?'}${pair}`;
}

/** The answer as the tool's result: JSON when it is JSON, otherwise its text (or, for a binary body, its type and size). */
async function resultOf(res: Response): Promise<unknown> {
  const type = res.headers.get('content-type') ?? '';
  if (/^(application\/([\w.+-]+\+)?json|text\/)|charset=/i.test(type) || type === '') {
    const text = await res.text();
    if (!res.ok) throw ProviderHttpError.of(res, text);
    if (!text.length) return { status: res.status };
    if (/json/i.test(type)) {
      try {
        return JSON.parse(text);
      } catch {
        return { status: res.status, contentType: type, text };
      }
    }
    return { status: res.status, contentType: type, text };
  }
  const bytes = await res.arrayBuffer();
  if (!res.ok) throw ProviderHttpError.of(res, Buffer.from(bytes).toString('utf8'));
  return { status: res.status, contentType: type, bytes: bytes.byteLength };
}

function toolOf(entry: OpenApiEntry, op: OperationSpec, checker: () => SchemaChecker, send: Sender): ToolDefinition {
  const schema = op.inputSchema;
  const key = createHash('sha256').update(JSON.stringify(schema)).digest('base64url');
  const cost = schemaCost(schema as Record<string, unknown>, MAX_ANALYSIS_STEPS);
  return {
    name: op.name,
    description: op.description,
    access: op.access,
    inputSchema: schema as Record<string, unknown>,
    asyncInput: true,
    input: z.unknown().superRefine(async (value, ctx) => {
      // Checked as an upstream MCP tool's arguments are: bounded, in the checker's threads.
      const problem =
        'reason' in cost
          ? `Switchboard cannot check arguments against this tool's schema: ${cost.reason}`
          : (argumentsTooCostly(value, cost.perValue) ??
            (await checker().check(entry.name, key, schema as Record<string, unknown>, value)));
      if (problem) ctx.addIssue({ code: 'custom', message: problem.slice(0, 300) });
    }),
    async run(args: unknown, ctx: ToolContext) {
      const request = buildRequest(op, (isObject(args) ? args : {}) as JsonObject);
      const res = await send(ctx, withQueryKey(entry, request.path, ctx.credential), {
        method: request.method,
        headers: request.headers,
        body: request.body,
      });
      return resultOf(res);
    },
  };
}

interface BuiltOpenApiProvider {
  provider: Provider;
  operations: OperationSpec[];
  refused: { operation: string; reason: string }[];
}

/** The provider of one entry and its parsed document; an OpenApiError names the place of any problem. */
export function openapiProvider(entry: OpenApiEntry, doc: OpenApiDocument, options: OpenApiProviderOptions = {}): BuiltOpenApiProvider {
  const apiBaseUrl = (entry.baseUrl ?? documentBaseUrl(doc)).replace(/\/+$/, '');
  const manifest = manifestOf(entry, doc, apiBaseUrl);
  const { operations, refused } = convertOperations(doc, { include: entry.include, exclude: entry.exclude, access: entry.access });
  const checker = () => options.checker ?? sharedSchemaChecker();
  const authorize = authorizer(entry);
  const send = options.send?.(authorize) ?? contextFetch;
  const provider: Provider = {
    manifest,
    tools: operations.map((op) => toolOf(entry, op, checker, send)),
    ...(authorize && { authorize }),
    // The GitHub app's accounts are told apart as the hand-written provider's are.
    ...(entry.auth.type === 'oauth2' && entry.auth.app === 'github' && github.identify && { identify: github.identify }),
  };
  return { provider, operations, refused };
}
