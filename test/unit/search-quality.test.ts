import { beforeAll, describe, expect, it } from 'vitest';
import { evalRegistry } from '../../bench/lib/eval-catalog.js';
import { realCatalogRegistry } from '../../bench/lib/real-catalogs.js';
import { loadRealEval, measureItems, reportedHalf } from '../../bench/lib/real-eval.js';
import { loadEvalSet, measureSplits } from '../../bench/lib/search-quality.js';
import { toolIndexFor } from '../../features/catalog/tool-search.js';
import type { ProviderRegistry } from '../../providers/registry.js';

// The index search_tools queries (toolIndexFor over the registry), on the evaluation catalog: the
// built-in providers and an upstream MCP server (server-everything's saved listing, as the product
// shows it), scored on test/fixtures/search-eval.json. SEARCH_EVAL_MISSES=1 prints the tuning split's
// misses (never the held-back split's, so tuning cannot look at it).
const BAR = { top1: 0.9, recall5: 0.98 };
let registry: ProviderRegistry;
const items = loadEvalSet();

beforeAll(async () => {
  registry = await evalRegistry();
});

describe('search quality on the evaluation set', () => {
  it('has at least 200 requests, a held-back split, and names only tools that exist', () => {
    expect(items.length).toBeGreaterThanOrEqual(200);
    expect(items.filter((i) => i.split === 'held').length).toBeGreaterThanOrEqual(50);
    const names = new Set(registry.tools().map((e) => e.qualifiedName));
    for (const item of items) for (const name of [item.expected, ...(item.alternates ?? [])]) expect(names, item.query).toContain(name);
    const integrations = new Set(items.map((i) => i.expected.split('__')[0]));
    expect([...integrations].sort()).toEqual(
      registry
        .list()
        .map((p) => p.manifest.name)
        .sort(),
    );
  });

  it('asks for the upstream MCP server’s tools at least 30 times, on both splits', () => {
    const upstream = items.filter((i) => registry.dynamicProviderOf(i.expected));
    expect(upstream.length).toBeGreaterThanOrEqual(30);
    expect(upstream.filter((i) => i.split === 'held').length).toBeGreaterThanOrEqual(5);
  });

  it('puts the right tool first and in the first five, on both splits', () => {
    const figures = measureSplits(toolIndexFor(registry), items);
    for (const [split, f] of Object.entries(figures)) {
      console.log(
        `search quality (${split}, ${f.items} requests): top-1 ${pct(f.top1)}, top-3 ${pct(f.top3)}, recall@5 ${pct(f.recall5)}` +
          (process.env.SEARCH_EVAL_MISSES && split === 'tune'
            ? `\n${f.misses.map((m) => `  ${m.query} → ${m.expected}; got ${m.got.join(', ')}`).join('\n')}`
            : ''),
      );
    }
    expect(figures.tune.top1, 'tune top-1').toBeGreaterThanOrEqual(BAR.top1);
    expect(figures.tune.recall5, 'tune recall@5').toBeGreaterThanOrEqual(BAR.recall5);
    expect(figures.held.top1, 'held top-1').toBeGreaterThanOrEqual(BAR.top1);
    expect(figures.held.recall5, 'held recall@5').toBeGreaterThanOrEqual(BAR.recall5);
  });
});

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

// The real catalogs: published MCP servers' tools (test/fixtures/search-catalogs) beside the built-ins,
// ranked on requests written from the user's goal (test/fixtures/search-eval-real.tsv). The floors are
// today's figures, far below issue 30's goal (top-1 ≥ 80 %, recall@5 ≥ 95 % on the reported half):
// they keep a change from losing ground unseen. SEARCH_EVAL_MISSES=1 prints the tuning half's misses
// only: the reported half's never, so nobody tunes on it.
const REAL_FLOOR = { tune: { top1: 0.47, recall5: 0.73 }, reported: { top1: 0.43, recall5: 0.68 } };

describe('search quality on real MCP servers’ catalogs', () => {
  const real = loadRealEval();

  it('asks for tools that exist, in every catalog, on halves fixed by the request’s hash', async () => {
    const registry = await realCatalogRegistry();
    const names = new Set(registry.tools().map((e) => e.qualifiedName));
    for (const item of real) {
      for (const name of [item.expected, ...item.alternates]) expect(names, item.query).toContain(name);
      expect(item.expected.startsWith(`${item.catalog}__`), item.query).toBe(true);
      expect(item.split).toBe(reportedHalf(item.query) ? 'reported' : 'tune');
    }
    expect(new Set(real.map((i) => i.query)).size).toBe(real.length);
    expect(real.filter((i) => i.split === 'reported').length).toBeGreaterThanOrEqual(50);
    expect(real.filter((i) => i.split === 'tune').length).toBeGreaterThanOrEqual(50);
    expect(new Set(real.map((i) => i.catalog)).size).toBeGreaterThanOrEqual(10);
  });

  it('ranks them no worse than today', async () => {
    const index = toolIndexFor(await realCatalogRegistry());
    for (const split of ['tune', 'reported'] as const) {
      const f = measureItems(
        index,
        real.filter((i) => i.split === split),
      );
      console.log(
        `real catalogs (${split}, ${f.items} requests): top-1 ${pct(f.top1)}, top-3 ${pct(f.top3)}, recall@5 ${pct(f.recall5)}` +
          (process.env.SEARCH_EVAL_MISSES && split === 'tune'
            ? `\n${f.misses.map((m) => `  ${m.query} → ${m.expected}; got ${m.got.join(', ')}`).join('\n')}`
            : ''),
      );
      expect(f.top1, `${split} top-1`).toBeGreaterThanOrEqual(REAL_FLOOR[split].top1);
      expect(f.recall5, `${split} recall@5`).toBeGreaterThanOrEqual(REAL_FLOOR[split].recall5);
    }
  });
});
