import { CatalogRanker, RANKING } from '../../features/catalog/catalog-ranker.js';
import { ToolSearchIndex, toolIndexFor } from '../../features/catalog/tool-search.js';
import { evalRegistry } from './eval-catalog.js';
import { realCatalogRegistry } from './real-catalogs.js';
import { type CatalogFigures, loadRealEval, measureByCatalog, type Ranker, type RealEvalItem } from './real-eval.js';
import { loadEvalSet, measureQuality } from './search-quality.js';
import { formatTable } from './stats.js';

/**
 * Search quality on the real catalogs (published MCP servers' tools beside the built-ins), per
 * catalog and overall, tuning and reported halves apart; and the ablation: the product's ranking
 * with issue 30's parts added one by one, and the catalog-only ranking (features/catalog/catalog-ranker.ts) with and without the learned
 * related words, on the real catalogs and on the built-in evaluation set.
 */
export const GOAL_REAL = { top1: 0.8, recall5: 0.95, perCatalogTop1: 0.6, builtinTop1: 0.95 };

export interface RealQuality {
  tools: number;
  reported: { per: Record<string, Omit<CatalogFigures, 'misses'>>; overall: Omit<CatalogFigures, 'misses'> };
  tune: { overall: Omit<CatalogFigures, 'misses'> };
  ablation: Record<string, { realTune: string; realReported: string; builtinTune: string; builtinHeld: string }>;
  met: boolean;
}

const pct = (x: number) => Math.round(x * 1000) / 10;
const strip = ({ misses: _, ...f }: CatalogFigures) => f;
const pair = (f: { top1: number; recall5: number }) => `${pct(f.top1)} / ${pct(f.recall5)}`;

export async function measureRealQuality(): Promise<RealQuality> {
  const registry = await realCatalogRegistry();
  const items = loadRealEval();
  const half = (split: RealEvalItem['split']) => items.filter((i) => i.split === split);
  const product = toolIndexFor(registry);
  const reported = measureByCatalog(product, half('reported'));
  const tune = measureByCatalog(product, half('tune'));

  const builtin = loadEvalSet();
  const builtinRegistry = await evalRegistry();
  const rankers: { name: string; make: (r: typeof registry) => Ranker; expansion: number }[] = [
    {
      name: 'product without issue 30’s parts (table-based text, operations, integrations)',
      make: (r) => new ToolSearchIndex(r.tools(), { catalogText: false, peers: false, relatedNames: false }),
      expansion: RANKING.expansion,
    },
    {
      name: '+ peers share what points at an integration',
      make: (r) => new ToolSearchIndex(r.tools(), { catalogText: false, relatedNames: false }),
      expansion: RANKING.expansion,
    },
    {
      name: '+ learned related words naming an integration',
      make: (r) => new ToolSearchIndex(r.tools(), { catalogText: false }),
      expansion: RANKING.expansion,
    },
    { name: '+ BM25F catalog text = product now', make: (r) => toolIndexFor(r), expansion: RANKING.expansion },
    { name: 'product now, BM25F without related-word expansion', make: (r) => new ToolSearchIndex(r.tools()), expansion: 0 },
    { name: 'catalog only: BM25F, stems, integration named', make: (r) => new CatalogRanker(r.tools()), expansion: 0 },
    { name: 'catalog only + learned related words', make: (r) => new CatalogRanker(r.tools()), expansion: RANKING.expansion },
  ];
  const ablation: RealQuality['ablation'] = {};
  for (const { name, make, expansion } of rankers) {
    const onReal = make(registry);
    const onBuiltin = make(builtinRegistry);
    // The experiment reads its expansion weight at query time.
    withExpansion(expansion, () => {
      ablation[name] = {
        realTune: pair(measureByCatalog(onReal, half('tune')).overall),
        realReported: pair(measureByCatalog(onReal, half('reported')).overall),
        builtinTune: pair(
          measureQuality(
            onBuiltin,
            builtin.filter((i) => i.split === 'tune'),
          ),
        ),
        builtinHeld: pair(
          measureQuality(
            onBuiltin,
            builtin.filter((i) => i.split === 'held'),
          ),
        ),
      };
    });
  }
  const per = Object.fromEntries(Object.entries(reported.per).map(([c, f]) => [c, strip(f)]));
  const met =
    reported.overall.top1 >= GOAL_REAL.top1 &&
    reported.overall.recall5 >= GOAL_REAL.recall5 &&
    Object.values(per).every((f) => f.top1 >= GOAL_REAL.perCatalogTop1);
  return {
    tools: registry.tools().length,
    reported: { per, overall: strip(reported.overall) },
    tune: { overall: strip(tune.overall) },
    ablation,
    met,
  };
}

/** Runs `fn` with the experiment's expansion weight set, then puts it back. */
function withExpansion<T>(weight: number, fn: () => T): T {
  const saved = RANKING.expansion;
  RANKING.expansion = weight;
  try {
    return fn();
  } finally {
    RANKING.expansion = saved;
  }
}

export function printRealQuality(q: RealQuality) {
  console.log(`\nsearch quality on real catalogs (${q.tools} tools: built-ins + published MCP servers), reported half, per catalog`);
  console.log(
    formatTable(
      [...Object.entries(q.reported.per), ['overall', q.reported.overall] as const].map(([catalog, f]) => ({
        catalog,
        requests: f.items,
        'top-1 %': pct(f.top1),
        'top-3 %': pct(f.top3),
        'recall@5 %': pct(f.recall5),
        'named → own tool in top 3': f.namedTop3.of ? `${f.namedTop3.hit}/${f.namedTop3.of}` : '-',
      })),
    ),
  );
  const t = q.tune.overall;
  console.log(`tuning half: ${t.items} requests, top-1 ${pct(t.top1)} %, recall@5 ${pct(t.recall5)} %`);
  console.log('\nablation, top-1 % / recall@5 %');
  console.log(
    formatTable(
      Object.entries(q.ablation).map(([ranking, a]) => ({
        ranking,
        'real, tuning half': a.realTune,
        'real, reported half': a.realReported,
        'built-in, tuning': a.builtinTune,
        'built-in, held back': a.builtinHeld,
      })),
    ),
  );
  console.log(
    `goal on the reported half: top-1 ≥ ${GOAL_REAL.top1 * 100} %, recall@5 ≥ ${GOAL_REAL.recall5 * 100} %, every catalog top-1 ≥ ${GOAL_REAL.perCatalogTop1 * 100} %: ${q.met ? 'met' : 'NOT met'}`,
  );
}
