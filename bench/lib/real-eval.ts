import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ToolEntry } from '../../providers/registry.js';

/**
 * The evaluation on real catalogs (test/fixtures/search-eval-real.tsv): natural requests written
 * from the user's goal for the tools of published MCP servers. Each request's half is fixed by a
 * hash of its text (`reportedHalf`), so no one chooses which requests are reported and adding a
 * request never moves another between halves.
 */
export const REAL_EVAL_PATH = resolve(import.meta.dirname, '../../test/fixtures/search-eval-real.tsv');

export interface RealEvalItem {
  catalog: string;
  query: string;
  expected: string;
  alternates: string[];
  /** The request names the integration ("in Notion", "on GitHub"). */
  namesIntegration: boolean;
  split: 'tune' | 'reported';
}

/** Reported when the first byte of the request's SHA-256 is odd. */
export const reportedHalf = (query: string) => (createHash('sha256').update(query).digest()[0] & 1) === 1;

export function loadRealEval(path = REAL_EVAL_PATH): RealEvalItem[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
    .map((line) => {
      const [catalog, query, expected, alternates = '', names = ''] = line.split('\t');
      return {
        catalog,
        query,
        expected,
        alternates: alternates.split(',').filter(Boolean),
        namesIntegration: names.trim() === 'y',
        split: reportedHalf(query) ? 'reported' : 'tune',
      };
    });
}

/** Any ranking measured here: the product's index or an experiment. */
export interface Ranker {
  query(text: string, options: { limit: number }): { entry: ToolEntry }[];
}

export interface CatalogFigures {
  items: number;
  top1: number;
  top3: number;
  recall5: number;
  /** Requests naming the integration whose tool came in the first three, of those naming it. */
  namedTop3: { hit: number; of: number };
  misses: { query: string; expected: string; got: string[] }[];
}

export function measureItems(index: Ranker, items: readonly RealEvalItem[]): CatalogFigures {
  let top1 = 0;
  let top3 = 0;
  let recall5 = 0;
  const namedTop3 = { hit: 0, of: 0 };
  const misses: CatalogFigures['misses'] = [];
  for (const item of items) {
    const got = index.query(item.query, { limit: 5 }).map((h) => h.entry.qualifiedName);
    const right = new Set([item.expected, ...item.alternates]);
    const rank = got.findIndex((name) => right.has(name));
    if (rank === 0) top1++;
    if (rank >= 0 && rank < 3) top3++;
    if (rank >= 0) recall5++;
    if (item.namesIntegration) {
      namedTop3.of++;
      if (got.slice(0, 3).some((name) => name.startsWith(`${item.catalog}__`))) namedTop3.hit++;
    }
    if (rank !== 0) misses.push({ query: item.query, expected: item.expected, got });
  }
  const n = Math.max(1, items.length);
  return { items: items.length, top1: top1 / n, top3: top3 / n, recall5: recall5 / n, namedTop3, misses };
}

/** Per catalog and overall, for one split. */
export function measureByCatalog(index: Ranker, items: readonly RealEvalItem[]) {
  const catalogs = [...new Set(items.map((i) => i.catalog))].sort();
  const per = Object.fromEntries(
    catalogs.map((c) => [
      c,
      measureItems(
        index,
        items.filter((i) => i.catalog === c),
      ),
    ]),
  );
  return { per, overall: measureItems(index, items) };
}
