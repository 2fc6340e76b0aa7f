import { describe, expect, it } from 'vitest';
import { formatTable, percentile, summary } from '../../bench/lib/stats.js';

describe('percentile', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('is the nearest-rank value, whatever the order of the samples', () => {
    const shuffled = [...hundred].reverse();
    expect(percentile(shuffled, 50)).toBe(50);
    expect(percentile(shuffled, 99)).toBe(99);
    expect(percentile(shuffled, 100)).toBe(100);
    expect(percentile(shuffled, 0)).toBe(1);
  });

  it('answers an observed sample, never an interpolation', () => {
    expect(percentile([10, 20], 50)).toBe(10);
    expect(percentile([10, 20], 51)).toBe(20);
    expect(percentile([7], 99)).toBe(7);
  });

  it('leaves the samples as they were', () => {
    const samples = [3, 1, 2];
    percentile(samples, 50);
    expect(samples).toEqual([3, 1, 2]);
  });

  it('refuses no samples and percentiles outside 0–100', () => {
    expect(() => percentile([], 50)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], Number.NaN)).toThrow(RangeError);
  });
});

describe('summary', () => {
  it('gives count, extremes, percentiles and mean', () => {
    const samples = Array.from({ length: 200 }, (_, i) => 200 - i);
    expect(summary(samples)).toEqual({ n: 200, min: 1, p50: 100, p90: 180, p99: 198, max: 200, mean: 100.5 });
  });

  it('handles negative samples (a poller may read CONNECTED before the callback responds)', () => {
    expect(summary([-2, 4])).toMatchObject({ min: -2, max: 4, mean: 1 });
  });
});

describe('formatTable', () => {
  it('aligns text left and numbers right under a header', () => {
    const table = formatTable([
      { kind: 'event', 'p50 ms': 12.5 },
      { kind: 'polling', 'p50 ms': 512 },
    ]);
    expect(table.split('\n')).toEqual(['kind     p50 ms', '-------  ------', 'event      12.5', 'polling     512']);
  });
});
