import { z } from 'zod';
import { UPSTREAM_NAME, UPSTREAM_NAME_MAX_CHARS } from './upstream-entry.js';

/**
 * One REST API from an OpenAPI document, as the operator writes it in OPENAPI_INTEGRATIONS
 * (providers/openapi/ turns it into a provider). The base URL is fixed here or by the document:
 * nothing a tool call carries can change where requests go.
 */

const headerName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected an HTTP header name (letters, digits, "-", "_")')
  .refine((h) => !['host', 'cookie', 'content-length', 'content-type', 'transfer-encoding', 'connection'].includes(h.toLowerCase()), {
    message: 'is a header Switchboard or the transport sets itself',
  });

const label = z.string().min(1).max(80);

const noAuth = z.object({ type: z.literal('none') }).strict();

/** A key the person enters in the portal, sent in a header (with an optional prefix) or a query parameter. */
const apiKeyAuth = z
  .object({
    type: z.literal('apikey'),
    in: z.enum(['header', 'query']).default('header'),
    name: z.string().min(1).max(64),
    prefix: z.string().max(32).default(''),
    label: label.default('API key'),
    placeholder: z.string().max(80).optional(),
  })
  .strict()
  .refine((a) => a.in === 'query' || headerName.safeParse(a.name).success, {
    message: 'expected an HTTP header name that Switchboard does not set itself',
    path: ['name'],
  })
  .refine((a) => a.in === 'query' || !a.prefix.includes('\n'), { message: 'must be one line', path: ['prefix'] });

/** A bearer token the person enters in the portal (`Authorization: Bearer <token>`). */
const bearerAuth = z.object({ type: z.literal('bearer'), label: label.default('Access token') }).strict();

const scopeToken = z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,200}$/, 'expected an OAuth scope (no spaces or quotes)');
const httpsUrl = z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' });

/**
 * OAuth 2 authorization code with PKCE. `app: "github"` uses the deployment's GitHub OAuth app
 * (GITHUB_CLIENT_ID, its endpoints and overrides); otherwise the endpoints come from here or from
 * the document's authorizationCode flow, and the client from `<envPrefix>_CLIENT_ID`/`_SECRET`.
 */
const oauth2Auth = z
  .object({
    type: z.literal('oauth2'),
    app: z.enum(['github']).optional(),
    /** A well-known service's endpoints and habits (providers/openapi/oauth-services.ts), e.g. "notion". */
    service: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,40}$/, 'expected a service name, e.g. "notion"')
      .optional(),
    /** The account's subdomain, for a service whose endpoints have one (Shopify's shop, Zendesk's account). */
    subdomain: z.string().max(63).optional(),
    authorizeUrl: httpsUrl.optional(),
    tokenUrl: httpsUrl.optional(),
    revokeUrl: httpsUrl.optional(),
    scopes: z.array(scopeToken).max(50).optional(),
    clientAuth: z.enum(['client_secret_post', 'client_secret_basic']).optional(),
    envPrefix: z
      .string()
      .regex(/^[A-Z][A-Z0-9_]{0,40}$/, 'expected an upper-case prefix, e.g. "ACME" for ACME_CLIENT_ID')
      .optional(),
  })
  .strict()
  .refine((a) => !a.app || (!a.authorizeUrl && !a.tokenUrl && !a.envPrefix && !a.service), {
    message: '"app" brings its own endpoints and client; leave authorizeUrl, tokenUrl, envPrefix and service out',
  })
  .refine((a) => !a.service || (!a.authorizeUrl && !a.tokenUrl), {
    message:
      '"service" brings its own endpoints; leave authorizeUrl and tokenUrl out (override them with <PREFIX>_AUTHORIZE_URL / _TOKEN_URL)',
  });

const openapiAuthSchema = z.discriminatedUnion('type', [noAuth, apiKeyAuth, bearerAuth, oauth2Auth]);

const accessLevel = z.enum(['read', 'write', 'destructive']);
const pattern = z.string().min(1).max(300);

export const openapiEntrySchema = z
  .object({
    name: z
      .string()
      .max(UPSTREAM_NAME_MAX_CHARS)
      .regex(UPSTREAM_NAME, 'expected a lower-case integration name: letters and digits in words joined by "-", e.g. "petstore"'),
    displayName: z.string().min(1).max(80),
    description: z.string().max(500).optional(),
    /**
     * The document: a file path (absolute, or starting `./`/`../`: from the working directory) or
     * a package-relative path (`@octokit/openapi/generated/api.github.com.json`).
     */
    document: z.string().min(1).max(1000),
    /** Where requests go; default the document's first server. */
    baseUrl: httpsUrl
      .refine((u) => !new URL(u).username && !new URL(u).password, { message: 'must not carry a user name or password' })
      .refine((u) => !new URL(u).search && !new URL(u).hash, { message: 'must not carry a ?query or #fragment' })
      .optional(),
    auth: openapiAuthSchema.default({ type: 'none' }),
    /** Operations that become tools: globs over operationId, tool name, `tag:<tag>` and `METHOD /path`; unset: all. */
    include: z.array(pattern).max(500).optional(),
    /** Operations left out (wins over include). */
    exclude: z.array(pattern).max(500).optional(),
    /** Access by operationId or tool name, over the method's (GET/HEAD read, DELETE destructive, others write). */
    access: z.record(z.string().min(1).max(200), accessLevel).optional(),
  })
  .strict();

export type OpenApiEntry = z.infer<typeof openapiEntrySchema>;

export const openapiConfigSchema = z.array(z.unknown()).max(50);
