import { toolIndexFor } from '../features/catalog/tool-search.js';
import { evalRegistry } from './lib/eval-catalog.js';
import { realCatalogRegistry } from './lib/real-catalogs.js';
import { loadRealEval, measureByCatalog } from './lib/real-eval.js';
import { loadEvalSet, measureQuality } from './lib/search-quality.js';

/**
 * Tuning figures only: the real catalogs' tuning half (misses printed) and the built-in set's
 * tuning split. Never prints the reported half's misses (bench/README: how the split is kept honest).
 */
const pct = (x: number) => (Math.round(x * 1000) / 10).toFixed(1);
const registry = await realCatalogRegistry();
const tune = loadRealEval().filter((i) => i.split === 'tune');
const real = measureByCatalog(toolIndexFor(registry), tune);
if (process.env.SEARCH_EVAL_MISSES)
  for (const m of Object.values(real.per).flatMap((f) => f.misses))
    console.log(`miss: ${m.query} → want ${m.expected}; got ${m.got.slice(0, 5).join(', ')}`);
for (const [c, f] of Object.entries(real.per)) console.log(`${c}: ${pct(f.top1)} / ${pct(f.recall5)} (${f.items})`);
console.log(`real tuning half: top-1 ${pct(real.overall.top1)} recall@5 ${pct(real.overall.recall5)} (${real.overall.items})`);
const builtin = measureQuality(
  toolIndexFor(await evalRegistry()),
  loadEvalSet().filter((i) => i.split === 'tune'),
);
console.log(`built-in tuning: top-1 ${pct(builtin.top1)} recall@5 ${pct(builtin.recall5)}`);
