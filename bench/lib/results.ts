import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where every benchmark's JSON lands; *.json there is gitignored. */
export const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

/**
 * Writes one benchmark run as bench/results/<name>-<ISO timestamp>.json and returns the path.
 * The timestamp's colons and dot become dashes so the name is a valid file name everywhere.
 */
export function writeResults(name: string, data: unknown, at = new Date()): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, `${name}-${at.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`);
  return path;
}
