import { describe, expect, it } from 'vitest';
import { loadEvalSet, measureSplits } from '../../bench/lib/search-quality.js';
import { builtinProviders } from '../../providers/index.js';
import { ProviderRegistry } from '../../providers/registry.js';
import { toolIndexFor } from '../../server/catalog/tool-search.js';

// The index search_tools queries (toolIndexFor over the registry of built-in providers), scored on
// test/fixtures/search-eval.json. Issue 18's bar is top-1 ≥ 90 %, recall@5 ≥ 98 % on both splits;
// SEARCH_EVAL_MISSES=1 prints the tuning split's misses (never the held-back split's, so tuning cannot
// look at it). Until ranking reaches it, FLOOR holds what it does reach so that no change makes search worse.
const FLOOR = { tune: { top1: 0.96, recall5: 0.99 }, held: { top1: 0.83, recall5: 0.98 } };

const registry = new ProviderRegistry(builtinProviders);
const items = loadEvalSet();

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
    for (const split of ['tune', 'held'] as const) {
      expect(figures[split].top1, `${split} top-1`).toBeGreaterThanOrEqual(FLOOR[split].top1);
      expect(figures[split].recall5, `${split} recall@5`).toBeGreaterThanOrEqual(FLOOR[split].recall5);
    }
  });
});

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
