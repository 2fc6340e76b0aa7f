import type { TenantOpenApiSource, TenantServerSource } from '../../core/ports/tenant-upstream-servers.js';
import type { TenantOpenApiEntry } from '../../core/tenant-openapi-entry.js';
import type { UpstreamEntry } from '../../core/upstream-entry.js';
import { Keyring } from './keyring.js';
import { inTransaction, lockKey, type Queryable } from './queryable.js';
import { deleteUpstreamCatalogs } from './upstream-tool-catalogs.js';

/**
 * A tenant's own upstream MCP servers (migration 1700000000025). The entry is stored as JSON
 * without its one secret, a pre-registered OAuth client secret (`auth.clientSecret`), which is
 * sealed beside it, bound to the tenant and the name: a sealed value copied to another row does
 * not open.
 */

const aad = (tenantId: string, name: string) => `tenant-upstream:${tenantId}:${name}`;

interface Row {
  tenant_id: string;
  name: string;
  entry: Record<string, unknown>;
  client_secret_sealed: string | null;
  created_by: string | null;
  created_at: Date;
}

/** What admins see: the entry without secrets, and whether one is sealed. */
export interface TenantUpstreamSummary {
  name: string;
  entry: Record<string, unknown>;
  hasClientSecret: boolean;
  createdBy: string | null;
  createdAt: string;
}

/** Each tenant's servers are listed and searched on every request of its people: a bound keeps that cheap. */
export const TENANT_UPSTREAM_MAX = 50;

/** An add the store refuses (the name is in use, the tenant is at the bound); the message says why. */
export class TenantUpstreamRefused extends Error {}

class TenantUpstreamExists extends TenantUpstreamRefused {
  constructor(name: string) {
    super(`this tenant already has an upstream server named "${name}"; remove it first to replace it`);
  }
}

/** The entry without `auth.clientSecret`, and that secret. */
function splitSecret(entry: UpstreamEntry | TenantOpenApiEntry): { open: Record<string, unknown>; clientSecret?: string } {
  const auth = entry.auth as Record<string, unknown>;
  if (typeof auth.clientSecret !== 'string') return { open: entry };
  const { clientSecret, ...rest } = auth;
  return { open: { ...entry, auth: rest }, clientSecret: clientSecret as string };
}

const summary = (row: Row): TenantUpstreamSummary => ({
  name: row.name,
  entry: row.entry,
  hasClientSecret: row.client_secret_sealed !== null,
  createdBy: row.created_by,
  createdAt: row.created_at.toISOString(),
});

/** What an add stores: an upstream MCP server, or an OpenAPI integration with the text of its document. */
export type TenantUpstreamInput = { tenantId: string; createdBy?: string } & (
  | { entry: UpstreamEntry; document?: undefined }
  | { entry: TenantOpenApiEntry; document: string }
);

/** Adds a server (or an OpenAPI integration and its document); throws TenantUpstreamExists when the tenant has one of that name. */
export async function addTenantUpstream(db: Queryable, keyring: Keyring, input: TenantUpstreamInput): Promise<TenantUpstreamSummary> {
  const { open, clientSecret } = splitSecret(input.entry);
  const sealed = clientSecret ? keyring.encrypt(clientSecret, aad(input.tenantId, input.entry.name)) : null;
  return inTransaction(db, async (tx) => {
    // Two adds at once for one tenant queue here, so the count below is the one the insert sees.
    await lockKey(tx, `tenant-upstreams:${input.tenantId}`);
    const added = await insertCounted(tx, input, open, sealed);
    if (input.document !== undefined)
      await tx.query(
        'INSERT INTO tenant_openapi_documents (tenant_id, sha256, text) VALUES ($1, $2, $3) ON CONFLICT (tenant_id, sha256) DO NOTHING',
        [input.tenantId, input.entry.documentSha256, input.document],
      );
    return added;
  });
}

async function insertCounted(
  db: Queryable,
  input: TenantUpstreamInput,
  open: Record<string, unknown>,
  sealed: string | null,
): Promise<TenantUpstreamSummary> {
  const { rows } = await db.query<Row>(
    `INSERT INTO tenant_upstream_servers (tenant_id, name, entry, client_secret_sealed, created_by)
     SELECT $1, $2, $3, $4, $5 WHERE (SELECT count(*) FROM tenant_upstream_servers WHERE tenant_id = $1) < $6
     ON CONFLICT (tenant_id, name) DO NOTHING RETURNING *`,
    [input.tenantId, input.entry.name, JSON.stringify(open), sealed, input.createdBy ?? null, TENANT_UPSTREAM_MAX],
  );
  if (rows[0]) return summary(rows[0]);
  const { rowCount } = await db.query('SELECT 1 FROM tenant_upstream_servers WHERE tenant_id = $1 AND name = $2', [
    input.tenantId,
    input.entry.name,
  ]);
  throw rowCount
    ? new TenantUpstreamExists(input.entry.name)
    : new TenantUpstreamRefused(`a tenant has at most ${TENANT_UPSTREAM_MAX} upstream servers`);
}

export async function listTenantUpstreams(db: Queryable, tenantId: string): Promise<TenantUpstreamSummary[]> {
  const { rows } = await db.query<Row>('SELECT * FROM tenant_upstream_servers WHERE tenant_id = $1 ORDER BY created_at, name', [tenantId]);
  return rows.map(summary);
}

/**
 * Removes a server of this tenant (never another's), with its saved tool listings (keyed
 * `tenant:<id>:<name>:<url>`, platform/database/upstream-tool-catalogs.ts); answers whether there was one.
 */
export async function removeTenantUpstream(db: Queryable, tenantId: string, name: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM tenant_upstream_servers WHERE tenant_id = $1 AND name = $2', [tenantId, name]);
  await deleteUpstreamCatalogs(db, `tenant:${tenantId}:${name}:`);
  // Documents no entry of the tenant names any more.
  await db.query(
    `DELETE FROM tenant_openapi_documents d WHERE d.tenant_id = $1 AND NOT EXISTS
       (SELECT 1 FROM tenant_upstream_servers s WHERE s.tenant_id = $1 AND s.entry->>'documentSha256' = d.sha256)`,
    [tenantId],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * The tenant's entries with their secrets opened, for the registry's loader (TenantServers.load).
 * Unvalidated: the registry checks each against today's schema.
 */
export async function loadTenantUpstreamEntries(
  db: Queryable,
  keyring: Keyring,
  tenantId: string,
): Promise<{ name: string; entry: unknown; unusable?: string }[]> {
  const { rows } = await db.query<Row>('SELECT * FROM tenant_upstream_servers WHERE tenant_id = $1 ORDER BY created_at, name', [tenantId]);
  return rows.flatMap((row) => {
    if (!row.client_secret_sealed) return [{ name: row.name, entry: row.entry }];
    try {
      const clientSecret = keyring.decrypt(row.client_secret_sealed, aad(row.tenant_id, row.name));
      return [{ name: row.name, entry: { ...row.entry, auth: { ...(row.entry.auth as object), clientSecret } } }];
    } catch {
      // A secret no key here opens (a retired key, a copied row): that server is left out, not the
      // tenant's every request.
      return [{ name: row.name, entry: row.entry, unusable: 'its client secret does not open with this deployment’s keys' }];
    }
  });
}

/** Re-seals every client secret under the active key (`keys reseal`); returns how many moved. */
export async function resealTenantUpstreams(db: Queryable, keyring: Keyring): Promise<number> {
  const { rows } = await db.query<Row>('SELECT * FROM tenant_upstream_servers WHERE client_secret_sealed IS NOT NULL');
  let moved = 0;
  for (const row of rows) {
    if (!row.client_secret_sealed || Keyring.keyIdOf(row.client_secret_sealed) === keyring.activeKeyId) continue;
    const bound = aad(row.tenant_id, row.name);
    const resealed = keyring.encrypt(keyring.decrypt(row.client_secret_sealed, bound), bound);
    const { rowCount } = await db.query(
      'UPDATE tenant_upstream_servers SET client_secret_sealed = $4 WHERE tenant_id = $1 AND name = $2 AND client_secret_sealed = $3',
      [row.tenant_id, row.name, row.client_secret_sealed, resealed],
    );
    moved += rowCount ?? 0;
  }
  return moved;
}

/** The stored text of a tenant's OpenAPI document, by its sha256. */
export async function loadTenantOpenApiDocument(db: Queryable, tenantId: string, sha256: string): Promise<string | undefined> {
  const { rows } = await db.query<{ text: string }>('SELECT text FROM tenant_openapi_documents WHERE tenant_id = $1 AND sha256 = $2', [
    tenantId,
    sha256,
  ]);
  return rows[0]?.text;
}

/**
 * The registry's source of tenants' servers (ProviderRegistry.withTenantServers): rows from here,
 * each built by `build`, the deployment's one upstream factory, or `openapi`'s (documents from here).
 */
export function tenantUpstreamSource<Built, Document = unknown>(
  db: Queryable,
  keyring: Keyring,
  build: TenantServerSource<Built>['build'],
  logger?: { warn(fields: object, message: string): void },
  openapi?: Omit<TenantOpenApiSource<Built, Document>, 'text'>,
): TenantServerSource<Built, Document> {
  return {
    load: (tenantId) => loadTenantUpstreamEntries(db, keyring, tenantId),
    build,
    ...(openapi && { openapi: { ...openapi, text: (tenantId, sha256) => loadTenantOpenApiDocument(db, tenantId, sha256) } }),
    onSkipped: (tenantId, name, reason) => logger?.warn({ tenantId, integration: name, reason }, 'tenant upstream server left out'),
  };
}
