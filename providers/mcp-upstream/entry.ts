import { z } from 'zod';

/**
 * One upstream MCP server as the operator (UPSTREAM_MCP_SERVERS) or the curated catalog writes it.
 * The URL is fixed here: nothing a tool call carries can change where requests go.
 */

/** Integration names: lower-case words joined by single hyphens (no `_`, so `<name>__<tool>` splits once). */
export const UPSTREAM_NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
export const UPSTREAM_NAME_MAX_CHARS = 40;

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

/**
 * Accepted here so catalog entries and configs can name it, but refused when an entry is enabled
 * (upstreamProviders) until the OAuth module for upstreams (providers/mcp-auth/) is wired in; its
 * fields (pre-registered client, scopes) are that module's to define.
 */
const oauth2Auth = z.object({ type: z.literal('oauth2') }).loose();

export const upstreamAuthSchema = z.discriminatedUnion('type', [noAuth, apiKeyAuth, oauth2Auth]);

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
  })
  .strict();

export type UpstreamEntry = z.infer<typeof upstreamEntrySchema>;
export type UpstreamAuth = z.infer<typeof upstreamAuthSchema>;

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
