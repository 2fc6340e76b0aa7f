/** Pure helpers for benchmark samples: percentiles, a summary, and an aligned text table. */

export interface Summary {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

const ascending = (a: number, b: number) => a - b;

/**
 * The p-th percentile (0–100) by nearest rank: always a value that was actually observed, so a
 * p99 of 200 samples is the 198th smallest rather than an interpolation between two samples.
 * The samples may be in any order.
 */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new RangeError('percentile of no samples');
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be from 0 to 100, got ${p}`);
  const sorted = [...samples].sort(ascending);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.max(0, rank - 1)];
}

export function summary(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new RangeError('summary of no samples');
  const sorted = [...samples].sort(ascending);
  return {
    n: sorted.length,
    min: sorted[0],
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1],
    mean: sorted.reduce((sum, x) => sum + x, 0) / sorted.length,
  };
}

export type TableRow = Record<string, string | number>;

/**
 * Rows as an aligned text table, columns in the first row's key order. Numbers are right-aligned
 * so their digits line up; text is left-aligned.
 */
export function formatTable(rows: readonly TableRow[]): string {
  if (rows.length === 0) return '';
  const columns = Object.keys(rows[0]);
  const cells = rows.map((row) => columns.map((column) => String(row[column] ?? '')));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i].length)));
  const numeric = columns.map((column) => rows.every((row) => typeof row[column] === 'number'));
  const align = (text: string, i: number) => (numeric[i] ? text.padStart(widths[i]) : text.padEnd(widths[i]));
  const lines = [
    columns.map(align).join('  '),
    widths.map((width) => '-'.repeat(width)).join('  '),
    ...cells.map((line) => line.map(align).join('  ')),
  ];
  return lines.map((line) => line.trimEnd()).join('\n');
}
