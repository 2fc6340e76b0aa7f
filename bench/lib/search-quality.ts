import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Ranker } from './real-eval.js';

/**
 * Ranking quality of `search_tools` on the hand-written evaluation set
 * (test/fixtures/search-eval.json): how often the right tool comes first, in the first three and
 * in the first five, on the tuning split and on the held-back split apart.
 */

export interface EvalItem {
  query: string;
  expected: string;
  alternates?: string[];
  split: 'tune' | 'held';
}

export interface QualityFigures {
  items: number;
  top1: number;
  top3: number;
  recall5: number;
  /** Requests whose right tool was not first, with the first five found. */
  misses: { query: string; expected: string; got: string[] }[];
}

export const EVAL_PATH = resolve(import.meta.dirname, '../../test/fixtures/search-eval.json');

export function loadEvalSet(path = EVAL_PATH): EvalItem[] {
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as { items: EvalItem[] };
  return parsed.items;
}

/** Scores one split; an alternate counts as right wherever the expected tool would. */
export function measureQuality(index: Ranker, items: readonly EvalItem[]): QualityFigures {
  let top1 = 0;
  let top3 = 0;
  let recall5 = 0;
  const misses: QualityFigures['misses'] = [];
  for (const item of items) {
    const got = index.query(item.query, { limit: 5 }).map((hit) => hit.entry.qualifiedName);
    const right = new Set([item.expected, ...(item.alternates ?? [])]);
    const rank = got.findIndex((name) => right.has(name));
    if (rank === 0) top1++;
    if (rank >= 0 && rank < 3) top3++;
    if (rank >= 0) recall5++;
    if (rank !== 0) misses.push({ query: item.query, expected: item.expected, got });
  }
  const n = items.length;
  return { items: n, top1: top1 / n, top3: top3 / n, recall5: recall5 / n, misses };
}

/** Both splits, as the test and the benchmark print them. */
export function measureSplits(index: Ranker, items = loadEvalSet()) {
  return {
    tune: measureQuality(
      index,
      items.filter((i) => i.split === 'tune'),
    ),
    held: measureQuality(
      index,
      items.filter((i) => i.split === 'held'),
    ),
  };
}
