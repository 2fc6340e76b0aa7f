import { z } from 'zod';
import { openapiEntrySchema } from './openapi-entry.js';

/**
 * A tenant administrator's OpenAPI integration: the operator's entry (openapi-entry.ts) marked
 * `"kind": "openapi"`, whose document is an https URL (a tenant names no file of the server's).
 * Switchboard fetches the document once, when the entry is added, and stores its text; the stored
 * entry carries the text's sha256 (`documentSha256`), so a changed document is a changed entry.
 */

const documentUrl = z
  .url({ protocol: /^https?$/, error: 'expected the https URL of the OpenAPI document (a tenant names no file)' })
  .max(1000)
  .refine((u) => !URL.canParse(u) || (!new URL(u).username && !new URL(u).password), { message: 'must not carry a user name or password' });

/** What an administrator types. */
export const tenantOpenApiInputSchema = openapiEntrySchema.extend({ kind: z.literal('openapi'), document: documentUrl }).strict();

/** What is stored: the entry with the sha256 of the document text fetched when it was added. */
export const tenantOpenApiEntrySchema = tenantOpenApiInputSchema
  .extend({ documentSha256: z.string().regex(/^[0-9a-f]{64}$/, 'expected a sha256 in hex') })
  .strict();

export type TenantOpenApiInput = z.infer<typeof tenantOpenApiInputSchema>;
export type TenantOpenApiEntry = z.infer<typeof tenantOpenApiEntrySchema>;

/** An item (parsed JSON) that asks to be an OpenAPI integration rather than an upstream MCP server. */
export const isOpenApiItem = (item: unknown): boolean =>
  typeof item === 'object' && item !== null && (item as { kind?: unknown }).kind === 'openapi';
