import { performance } from 'node:perf_hooks';
import { formatTable, type Summary, summary, type TableRow } from './stats.js';

/** One side of a comparison: a single timed operation. */
export type Side = () => Promise<unknown>;

/**
 * Runs every side once per round, in a rotating order (round i starts with side i mod k), so the
 * machine's drift and any order effect fall on every side alike. The first `warmup` rounds are
 * left out. Answers each side's latencies in ms, index i of every side from the same round.
 */
export async function alternate<K extends string>(
  sides: Record<K, Side>,
  options: { rounds: number; warmup: number; signal: AbortSignal },
): Promise<Record<K, number[]>> {
  const names = Object.keys(sides) as K[];
  const samples = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < options.warmup + options.rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      options.signal.throwIfAborted();
      const side = names[(round + i) % names.length];
      const started = performance.now();
      await sides[side]();
      if (round >= options.warmup) samples[side].push(performance.now() - started);
    }
  }
  return samples;
}

export interface Comparison {
  baseline: Summary;
  subject: Summary;
  /** Subject minus baseline, of the medians and of the p99s. */
  added: { p50: number; p99: number };
  /** The median of the per-round differences: robust to drift between rounds. */
  pairedAddedP50: number;
  ratio: { p50: number; p99: number };
}

/** Compares two sides measured in the same rounds (same length, index-aligned). */
export function compare(baseline: readonly number[], subject: readonly number[]): Comparison {
  const b = summary(baseline);
  const s = summary(subject);
  const paired = subject.map((x, i) => x - baseline[i]);
  return {
    baseline: b,
    subject: s,
    added: { p50: s.p50 - b.p50, p99: s.p99 - b.p99 },
    pairedAddedP50: summary(paired).p50,
    ratio: { p50: s.p50 / b.p50, p99: s.p99 / b.p99 },
  };
}

/** One row per side: n, p50, p90, p99, max in ms. */
export function latencyTable(sides: Record<string, Summary>, digits = 2): string {
  return formatTable(
    Object.entries(sides).map(([side, s]) => ({
      side,
      n: s.n,
      'p50 ms': round(s.p50, digits),
      'p90 ms': round(s.p90, digits),
      'p99 ms': round(s.p99, digits),
      'max ms': round(s.max, digits),
    })),
  );
}

/** One row per comparison: both medians, what the subject adds (p50, paired p50, p99) and the ratios. */
export function comparisonTable(comparisons: Record<string, Comparison>, digits = 2): string {
  const rows: TableRow[] = Object.entries(comparisons).map(([what, c]) => ({
    'subject vs baseline': what,
    'base p50': round(c.baseline.p50, digits),
    'subj p50': round(c.subject.p50, digits),
    'added p50': round(c.added.p50, digits),
    'paired added p50': round(c.pairedAddedP50, digits),
    'added p99': round(c.added.p99, digits),
    'ratio p50': `${c.ratio.p50.toFixed(2)}×`,
    'ratio p99': `${c.ratio.p99.toFixed(2)}×`,
  }));
  return formatTable(rows);
}

export const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
