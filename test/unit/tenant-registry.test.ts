import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { UpstreamEntry } from '../../core/upstream-entry.js';
import { toolIndexFor } from '../../features/catalog/tool-search.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { ProviderRegistry } from '../../providers/registry.js';
import { upstreamFactory } from '../../providers/remote-mcp/index.js';
import type { Provider } from '../../providers/sdk/index.js';
import type { TenantServers } from '../../providers/tenant-views.js';

const entryOf = (name: string, extra: Partial<UpstreamEntry> = {}) => ({
  name,
  displayName: `Server ${name}`,
  url: `https://${name}.mcp.example/mcp`,
  auth: { type: 'none' },
  ...extra,
});

/**
 * The tenants' rows as the store would hand them over, and a factory that builds each entry into a
 * provider with one declared tool named after the entry (so search sees it without a server), and
 * counts builds and closes.
 */
function world(rows: Record<string, unknown[]>, ttlMs = 50, firstRead?: Promise<void>, idleMs?: number) {
  const loads: string[] = [];
  const built: string[] = [];
  const closed: string[] = [];
  const skipped: string[] = [];
  const servers: TenantServers = {
    async load(tenantId) {
      loads.push(tenantId);
      // What the database held when the read began; the first read can be held back to race a change.
      const read = (rows[tenantId] ?? []).map((entry) => ({ name: (entry as { name: string }).name, entry }));
      if (loads.length === 1 && firstRead) await firstRead;
      return read;
    },
    build(entry): Provider {
      built.push(entry.name);
      const prefix = entry.name.replace(/-/g, '_');
      return {
        manifest: {
          name: entry.name,
          version: '1.0.0',
          displayName: entry.displayName,
          description: entry.description ?? 'test server',
          auth: 'none',
          envPrefix: prefix.toUpperCase(),
          toolPrefix: prefix,
          apiBaseUrl: entry.url,
        },
        tools: [
          {
            name: `${prefix}_zebra_lookup`,
            description: `Looks up zebras at ${entry.displayName}`,
            access: 'read',
            input: z.object({}),
            run: async () => 'ok',
          },
        ],
        dynamicTools: {
          shared: () => [],
          version: () => 0,
          list: async () => [],
          warm: async () => {},
          close: async () => {
            closed.push(entry.name);
          },
        },
      };
    },
    onSkipped: (tenantId, name, reason) => skipped.push(`${tenantId}/${name}: ${reason}`),
  };
  const registry = new ProviderRegistry(builtinProviders).withTenantServers(servers, { ttlMs, idleMs });
  return { registry, loads, built, closed, skipped };
}

const names = (r: ProviderRegistry) => r.list().map((p) => p.manifest.name);
const search = (r: ProviderRegistry, text: string) =>
  toolIndexFor(r)
    .query(text, { limit: 5 })
    .map((h) => h.entry.qualifiedName);

describe('ProviderRegistry.forTenant', () => {
  it('answers the base registry itself, and its search index, for a tenant without servers of its own', async () => {
    const { registry } = world({ a: [entryOf('acme')] });
    const view = await registry.forTenant('nobody');
    expect(view).toBe(registry);
    expect(toolIndexFor(view)).toBe(toolIndexFor(registry));
    // A registry built without tenant servers (the library with its own providers) answers itself for everyone.
    const plain = new ProviderRegistry(builtinProviders);
    expect(await plain.forTenant('a')).toBe(plain);
  });

  it("shows a tenant its own servers beside the deployment's, and never another tenant's", async () => {
    const { registry } = world({ a: [entryOf('acme')], b: [entryOf('bravo')] });
    const [a, b] = await Promise.all([registry.forTenant('a'), registry.forTenant('b')]);
    expect(names(a)).toEqual([...names(registry), 'acme']);
    expect(names(b)).toEqual([...names(registry), 'bravo']);
    expect(a.get('bravo')).toBeUndefined();
    expect(b.get('acme')).toBeUndefined();
    expect(registry.get('acme')).toBeUndefined();
    expect(a.toolByQualifiedName('acme__acme_zebra_lookup')).toBeDefined();
    expect(b.toolByQualifiedName('acme__acme_zebra_lookup')).toBeUndefined();
    expect(b.toolByFlatName('acme_acme_zebra_lookup')).toBeUndefined();
    // Search is per view: tenant B's index does not hold A's tool, the base's neither.
    // (Built-in search tools may follow on "lookup"; the tenant's own tool comes first, the other's never.)
    const zebra = (names: string[]) => names.filter((n) => n.includes('zebra'));
    expect(search(a, 'zebra lookup')[0]).toBe('acme__acme_zebra_lookup');
    expect(zebra(search(a, 'zebra lookup'))).toEqual(['acme__acme_zebra_lookup']);
    expect(search(b, 'zebra lookup')[0]).toBe('bravo__bravo_zebra_lookup');
    expect(zebra(search(b, 'zebra lookup'))).toEqual(['bravo__bravo_zebra_lookup']);
    expect(zebra(search(registry, 'zebra lookup'))).toEqual([]);
    // A view asked for another tenant answers that tenant's view, not its own.
    expect(await a.forTenant('b')).toBe(b);
    expect(await a.forTenant('a')).toBe(a);
  });

  it('reads the rows once per TTL (concurrent callers share the read), and keeps the view and its providers while they are unchanged', async () => {
    const rows = { a: [entryOf('acme')] };
    const { registry, loads, built, closed } = world(rows, 40);
    const [first, second] = await Promise.all([registry.forTenant('a'), registry.forTenant('a')]);
    expect(first).toBe(second);
    expect(loads).toEqual(['a']);
    const index = toolIndexFor(first);
    await sleep(60);
    const again = await registry.forTenant('a');
    expect(loads).toEqual(['a', 'a']);
    expect(again).toBe(first);
    expect(toolIndexFor(again)).toBe(index);
    expect(built).toEqual(['acme']);

    // A second server joins: a new view, the first server's provider object (its sessions) carried over.
    rows.a = [entryOf('acme'), entryOf('bravo')];
    await sleep(60);
    const grown = await registry.forTenant('a');
    expect(grown).not.toBe(first);
    expect(grown.get('acme')).toBe(first.get('acme'));
    expect(built).toEqual(['acme', 'bravo']);

    // An entry that changes is built again, and the old provider's sessions closed; one that goes is closed.
    rows.a = [entryOf('acme', { url: 'https://elsewhere.mcp.example/mcp' })];
    registry.forgetTenant('a');
    const changed = await registry.forTenant('a');
    expect(changed.get('acme')).not.toBe(first.get('acme'));
    expect(changed.get('bravo')).toBeUndefined();
    expect(built).toEqual(['acme', 'bravo', 'acme']);
    await sleep(0);
    expect(closed.sort()).toEqual(['acme', 'bravo']);

    // The last one goes: the base answers again.
    rows.a = [];
    registry.forgetTenant('a');
    expect(await registry.forTenant('a')).toBe(registry);
  });

  it('a change made while the rows were being read is not hidden by that read', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const rows = { a: [entryOf('acme')] };
    const { registry, loads } = world(rows, 60_000, held);
    const before = registry.forTenant('a');
    await sleep(0);
    rows.a = [entryOf('acme'), entryOf('bravo')];
    registry.forgetTenant('a');
    const after = registry.forTenant('a');
    release();
    expect(names(await before)).toContain('bravo');
    expect(await after).toBe(await before);
    expect(loads).toEqual(['a', 'a']);
  });

  it("leaves out a stored entry that takes a deployment integration's name, or no longer validates", async () => {
    const { registry, skipped } = world({ a: [entryOf('github'), { name: 'broken', url: 'ftp://x' }, entryOf('acme')] });
    const view = await registry.forTenant('a');
    expect(view.get('github')).toBe(registry.get('github'));
    expect(names(view).filter((n) => n === 'github')).toHaveLength(1);
    expect(view.get('acme')).toBeDefined();
    expect(skipped).toEqual([
      'a/github: the integration github of the deployment has this name',
      'a/broken: its stored entry no longer validates',
    ]);
  });

  it("closes an idle tenant's sessions when another tenant's rows are read, and builds them again on its next use", async () => {
    const { registry, built, closed } = world({ a: [entryOf('acme')], b: [entryOf('bravo')] }, 10, undefined, 1000);
    const first = await registry.forTenant('a');
    await sleep(20);
    await registry.forTenant('b');
    expect(closed).toEqual([]);
    await sleep(1100);
    await registry.forTenant('b');
    await sleep(0);
    expect(closed).toEqual(['acme']);
    const again = await registry.forTenant('a');
    expect(again).not.toBe(first);
    expect(built).toEqual(['acme', 'bravo', 'acme']);
  });

  it('closes tenant providers with the base registry; closing a view closes nothing', async () => {
    const { registry, closed } = world({ a: [entryOf('acme')] });
    const view = await registry.forTenant('a');
    await view.close();
    expect(closed).toEqual([]);
    await registry.close();
    expect(closed).toEqual(['acme']);
  });
});

describe('ProviderRegistry.tenantEntry', () => {
  const config = { UPSTREAM_MCP_ALLOWED_HOSTS: [], UPSTREAM_MCP_TOOLS_TTL_SEC: 300, CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES: 1024 };
  const registry = new ProviderRegistry(builtinProviders).withTenantServers({
    load: async () => [],
    build: upstreamFactory(config, { version: 'test' }),
  });

  it('takes a catalog name or a JSON entry, through the same checks as UPSTREAM_MCP_SERVERS', () => {
    expect(registry.tenantEntry('deepwiki')).toMatchObject({ name: 'deepwiki', url: expect.stringMatching(/^https:/) });
    expect(registry.tenantEntry(JSON.stringify(entryOf('acme')))).toMatchObject({ name: 'acme', auth: { type: 'none' } });
    expect(() => registry.tenantEntry('no-such-server')).toThrow('"no-such-server" is not in the catalog');
    expect(() => registry.tenantEntry('{"name": ')).toThrow(/^not valid JSON/);
    expect(() => registry.tenantEntry(JSON.stringify({ ...entryOf('acme'), url: 'ftp://x' }))).toThrow('url: expected an http(s) URL');
    expect(() => registry.tenantEntry(JSON.stringify({ ...entryOf('acme'), headers: {} }))).toThrow(/Unrecognized key/);
    expect(() => registry.tenantEntry('<script>')).toThrow('is neither a catalog name nor a JSON entry');
  });

  it("refuses a name (or tool prefix) of the deployment's integrations", () => {
    expect(() => registry.tenantEntry(JSON.stringify(entryOf('github')))).toThrow(
      `"github" is the name of the deployment's integration github; choose another name`,
    );
    const jira = builtinProviders.find((p) => p.manifest.toolPrefix !== p.manifest.name)!;
    const sameTools = jira.manifest.toolPrefix.replace(/_/g, '-');
    expect(() => registry.tenantEntry(JSON.stringify(entryOf(sameTools)))).toThrow(
      `would name its tools like the deployment's integration ${jira.manifest.name}`,
    );
    // Prefixes that extend each other by whole words meet too: `github-docs`'s `search` and `github`'s
    // `docs_search` would both be `github_docs_search`. A mere string prefix (`git`) does not.
    expect(() => registry.tenantEntry(JSON.stringify(entryOf('github-docs')))).toThrow(
      "would name its tools like the deployment's integration github",
    );
    expect(() => registry.tenantEntry(JSON.stringify(entryOf('git')))).not.toThrow();
  });

  it('refuses everything on a registry that takes no tenant servers', () => {
    expect(() => new ProviderRegistry(builtinProviders).tenantEntry('deepwiki')).toThrow('does not take upstream servers per tenant');
  });
});
