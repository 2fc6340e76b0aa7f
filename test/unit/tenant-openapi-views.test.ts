import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { builtinProviders } from '../../providers/builtin/index.js';
import { tenantOpenApiFactory, withDocumentSha } from '../../providers/openapi/tenant.js';
import { ProviderRegistry } from '../../providers/registry.js';
import type { TenantServers } from '../../providers/tenant-views.js';

const documentText = (operationId: string) =>
  JSON.stringify({
    openapi: '3.1.0',
    info: { title: 'Pets', version: '1' },
    servers: [{ url: 'https://pets.example' }],
    paths: { '/pets': { get: { operationId, responses: { '200': { description: 'ok' } } } } },
  });

const input = {
  kind: 'openapi' as const,
  name: 'pets',
  displayName: 'Pets',
  document: 'https://pets.example/openapi.json',
  auth: { type: 'none' as const },
};

/** A tenant's rows and stored documents as the store would hand them over, counting document reads. */
function world() {
  const rows: Record<string, unknown[]> = {};
  const texts = new Map<string, string>();
  const reads: string[] = [];
  const skipped: string[] = [];
  const factory = tenantOpenApiFactory({ maxResponseBytes: 1024 * 1024 });
  const servers: TenantServers = {
    load: async (tenantId) => (rows[tenantId] ?? []).map((entry) => ({ name: (entry as { name: string }).name, entry })),
    build: () => {
      throw new Error('no upstream MCP servers here');
    },
    onSkipped: (_tenantId, name, reason) => skipped.push(`${name}: ${reason}`),
    openapi: {
      ...factory,
      async text(tenantId, sha256) {
        reads.push(`${tenantId}:${sha256.slice(0, 8)}`);
        return texts.get(`${tenantId}:${sha256}`);
      },
    },
  };
  const registry = new ProviderRegistry(builtinProviders).withTenantServers(servers, { ttlMs: 20 });
  const store = (tenantId: string, text: string) => {
    const entry = withDocumentSha(input, text);
    texts.set(`${tenantId}:${entry.documentSha256}`, text);
    rows[tenantId] = [entry];
  };
  return { registry, store, reads, rows, skipped };
}

describe("tenants' OpenAPI integrations in their views", () => {
  it('read a document only when an entry names one not built yet, not on every re-read of the rows', async () => {
    const { registry, store, reads } = world();
    store('t1', documentText('listPets'));
    expect((await registry.forTenant('t1')).toolByFlatName('pets_list_pets')).toBeDefined();
    for (let i = 0; i < 5; i++) {
      await sleep(30);
      expect((await registry.forTenant('t1')).toolByFlatName('pets_list_pets')).toBeDefined();
    }
    expect(reads).toHaveLength(1);
    // A changed document is a changed entry: read once, and the old tool is gone.
    store('t1', documentText('findPets'));
    registry.forgetTenant('t1');
    const view = await registry.forTenant('t1');
    expect(view.toolByFlatName('pets_find_pets')).toBeDefined();
    expect(view.toolByFlatName('pets_list_pets')).toBeUndefined();
    expect(reads).toHaveLength(2);
    // Another tenant's view never has it.
    expect((await registry.forTenant('t2')).toolByFlatName('pets_find_pets')).toBeUndefined();
  });

  it('leave out an entry whose stored document is missing, and one that takes a built-in name', async () => {
    const { registry, rows, skipped } = world();
    // Rows whose documents were never stored.
    rows.t1 = [withDocumentSha(input, documentText('listPets')), { ...withDocumentSha(input, documentText('x')), name: 'github' }];
    const view = await registry.forTenant('t1');
    expect(view.toolByFlatName('pets_list_pets')).toBeUndefined();
    expect(view.get('github')).toBe(registry.get('github'));
    expect(skipped).toEqual(['github: the integration github of the deployment has this name', 'pets: its stored document is missing']);
  });
});
