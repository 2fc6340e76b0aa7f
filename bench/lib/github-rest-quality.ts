import { resolve } from 'node:path';
import { openapiEntrySchema } from '../../core/openapi-entry.js';
import { toolIndexFor } from '../../features/catalog/tool-search.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { documentPath, loadDocumentFile } from '../../providers/openapi/config.js';
import { openapiProvider } from '../../providers/openapi/provider.js';
import { ProviderRegistry } from '../../providers/registry.js';
import { type CatalogFigures, loadRealEval, measureByCatalog } from './real-eval.js';
import { formatTable, type Summary, summary } from './stats.js';

/**
 * Search over GitHub's whole REST API imported from its own OpenAPI description (issue 32):
 * ~1,200 imported tools beside the built-ins (the hand-written GitHub tools among them), with the
 * requests of test/fixtures/search-eval-github-rest.tsv — written from the user's goal; those of
 * catalog `github` are for what the hand-written tools do, which must rank first where both match.
 * Halves as in real-eval.ts (by a hash of the request); latency of the product's index at that size.
 */
export const GITHUB_REST_EVAL_PATH = resolve(import.meta.dirname, '../../test/fixtures/search-eval-github-rest.tsv');

export interface GithubRestQuality {
  tools: number;
  imported: number;
  reported: { per: Record<string, Omit<CatalogFigures, 'misses'>>; overall: Omit<CatalogFigures, 'misses'> };
  tune: { overall: Omit<CatalogFigures, 'misses'> };
  /** Requests for the hand-written tools (catalog `github`, both halves) answered first by an imported one. */
  importedOverHandWritten: number;
  queryMs: Summary;
}

const strip = ({ misses: _, ...f }: CatalogFigures) => f;
const pct = (x: number) => `${Math.round(x * 1000) / 10} %`;

export function githubRestRegistry(): ProviderRegistry {
  const doc = loadDocumentFile(documentPath('@octokit/openapi/generated/api.github.com.json'));
  const entry = openapiEntrySchema.parse({
    name: 'github-rest',
    displayName: 'GitHub REST API',
    document: '@octokit/openapi/generated/api.github.com.json',
    baseUrl: 'https://api.github.com',
    auth: { type: 'oauth2', app: 'github' },
  });
  return new ProviderRegistry([...builtinProviders, openapiProvider(entry, doc).provider]);
}

export function measureGithubRestQuality(): GithubRestQuality {
  const registry = githubRestRegistry();
  const tools = registry.tools();
  const known = new Set(tools.map((t) => t.qualifiedName));
  const items = loadRealEval(GITHUB_REST_EVAL_PATH);
  for (const item of items) {
    const missing = [item.expected, ...item.alternates].filter((n) => !known.has(n));
    if (missing.length) throw new Error(`${GITHUB_REST_EVAL_PATH}: "${item.query}" expects ${missing.join(', ')}, which no tool is`);
  }
  const index = toolIndexFor(registry);
  const reported = measureByCatalog(
    index,
    items.filter((i) => i.split === 'reported'),
  );
  const tune = measureByCatalog(
    index,
    items.filter((i) => i.split === 'tune'),
  );
  const handWritten = items.filter((i) => i.catalog === 'github');
  const importedOverHandWritten = handWritten.filter((i) =>
    index.query(i.query, { limit: 1 })[0]?.entry.qualifiedName.startsWith('github-rest__'),
  ).length;
  const times: number[] = [];
  for (let round = 0; round < 20; round++) {
    for (const item of items) {
      const started = performance.now();
      index.query(item.query, { limit: 5 });
      if (round > 0) times.push(performance.now() - started);
    }
  }
  return {
    tools: tools.length,
    imported: tools.filter((t) => t.provider.manifest.name === 'github-rest').length,
    reported: { per: Object.fromEntries(Object.entries(reported.per).map(([c, f]) => [c, strip(f)])), overall: strip(reported.overall) },
    tune: { overall: strip(tune.overall) },
    importedOverHandWritten,
    queryMs: summary(times),
  };
}

export function printGithubRestQuality(q: GithubRestQuality): void {
  console.log(`\nsearch with GitHub's REST API imported from its OpenAPI document (${q.imported} imported tools, ${q.tools} in all)`);
  const row = (name: string, f: Omit<CatalogFigures, 'misses'>) => ({
    requests: name,
    n: f.items,
    'top-1': pct(f.top1),
    'top-3': pct(f.top3),
    'recall@5': pct(f.recall5),
  });
  console.log(
    formatTable([
      ...Object.entries(q.reported.per).map(([c, f]) =>
        row(`reported: ${c === 'github' ? 'for the hand-written tools' : 'for imported tools'}`, f),
      ),
      row('reported: overall', q.reported.overall),
      row('tuning half: overall', q.tune.overall),
    ]),
  );
  console.log(
    `requests for the hand-written tools answered first by an imported tool: ${q.importedOverHandWritten}; query p50 ${q.queryMs.p50.toFixed(2)} ms, p99 ${q.queryMs.p99.toFixed(2)} ms`,
  );
}
