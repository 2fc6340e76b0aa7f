import { z } from 'zod';

/**
 * One upstream MCP server as the operator (UPSTREAM_MCP_SERVERS) or the curated catalog writes it.
 * The URL is fixed here: nothing a tool call carries can change where requests go.
 */

/** Integration names: lower-case words joined by single hyphens (no `_`, so `<name>__<tool>` splits once). */
export const UPSTREAM_NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
export const UPSTREAM_NAME_MAX_CHARS = 40;
/** An operator's saved tools/list, as JSON, at most. */
const TOOLS_SNAPSHOT_MAX_CHARS = 1024 * 1024;

const headerName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected an HTTP header name (letters, digits, "-", "_")')
  .refine(
    (h) => !['host', 'content-length', 'content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version'].includes(h.toLowerCase()),
    {
      message: 'is a header the MCP transport sets itself',
    },
  );

const apiKeyAuth = z
  .object({
    type: z.literal('apikey'),
    /** The header the key rides in, e.g. `Authorization` or `X-API-Key`. */
    header: headerName,
    /** Put before the key in the header, e.g. `Bearer ` (with its space). */
    prefix: z.string().max(32).default(''),
    /** What the portal form asks for; the key field's name is `apiKey`. */
    label: z.string().min(1).max(80).default('API key'),
    placeholder: z.string().max(80).optional(),
  })
  .strict();

const noAuth = z.object({ type: z.literal('none') }).strict();

/** An OAuth scope token (RFC 6749 §3.3): printable ASCII without space, `"` or `\\`. */
const scopeToken = z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,200}$/, 'expected an OAuth scope (no spaces or quotes)');

/**
 * OAuth discovered from the server (docs/reference/upstream-mcp-auth.md). Without a client, Switchboard
 * registers itself (Client ID Metadata Document or dynamic registration); `clientId` (and
 * `clientSecret` for a confidential client) is a client the operator registered by hand, best
 * with the `issuer` it belongs to, so it is never sent to another authorization server. `scopes`
 * replaces the discovered ones (the challenge's `scope`, else `scopes_supported`).
 */
const oauth2Auth = z
  .object({
    type: z.literal('oauth2'),
    clientId: z.string().min(1).max(512).optional(),
    clientSecret: z.string().min(1).max(2048).optional(),
    issuer: z.url({ protocol: /^https?$/, error: 'expected the http(s) URL of an authorization server' }).optional(),
    scopes: z.array(scopeToken).max(50).optional(),
  })
  .strict()
  .refine((a) => !a.clientSecret || a.clientId, { message: 'clientSecret needs the clientId it belongs to', path: ['clientSecret'] });

const upstreamAuthSchema = z.discriminatedUnion('type', [noAuth, apiKeyAuth, oauth2Auth]);

export const upstreamEntrySchema = z
  .object({
    name: z
      .string()
      .max(UPSTREAM_NAME_MAX_CHARS)
      .regex(UPSTREAM_NAME, 'expected a lower-case integration name: letters and digits in words joined by "-", e.g. "deepwiki"'),
    displayName: z.string().min(1).max(80),
    url: z
      .url({ protocol: /^https?$/, error: 'expected an http(s) URL' })
      .refine((u) => !new URL(u).username && !new URL(u).password, { message: 'must not carry a user name or password' })
      .refine((u) => !new URL(u).hash, { message: 'must not carry a #fragment' }),
    description: z.string().max(500).optional(),
    auth: upstreamAuthSchema.default({ type: 'none' }),
    /** Only these upstream tool names (as the server names them) become tools; unset: all. */
    tools: z.array(z.string().min(1).max(128)).max(500).optional(),
    /**
     * The server's tools/list as the operator saved it (its `tools` array), shown in search before
     * anyone has connected a server that needs a credential to list; a saved listing from a real
     * connection, and then the server's own, replace it. Checked as a listing is (tools.ts).
     */
    toolsSnapshot: z
      .array(z.looseObject({ name: z.string() }))
      .max(300)
      .refine((tools) => JSON.stringify(tools).length <= TOOLS_SNAPSHOT_MAX_CHARS, {
        message: `must be at most ${TOOLS_SNAPSHOT_MAX_CHARS} characters of JSON`,
      })
      .optional(),
  })
  .strict();

export type UpstreamEntry = z.infer<typeof upstreamEntrySchema>;

/** `"linear"` enables the catalog entry of that name; an object adds (or overrides) one. */
export const upstreamConfigSchema = z
  .array(z.union([z.string().regex(UPSTREAM_NAME, 'expected a catalog entry name'), z.unknown()]))
  .max(100);

/** `a[2].auth.header: expected …` — the place in the JSON and what is wrong there. */
export function describeIssues(error: z.ZodError, prefix = ''): string[] {
  return error.issues.map((issue) => {
    const where = issue.path.reduce<string>(
      (text, p) => (typeof p === 'number' ? `${text}[${p}]` : `${text}${text ? '.' : ''}${String(p)}`),
      prefix,
    );
    return `${where || '(top level)'}: ${issue.message}`;
  });
}
