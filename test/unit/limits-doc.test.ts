import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * docs/reference/limits.md against the code: each row names a file and an exported constant (a
 * dotted path for an object's field), and the value in the row must be the constant's. A bound
 * changed in code without the table (or the other way round) fails here.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const DOC = 'docs/reference/limits.md';

function rows(): { bound: string; value: string; file: string; constant: string }[] {
  return readFileSync(resolve(ROOT, DOC), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| ') && line.includes('` · `'))
    .map((line) => {
      const [bound, value, where] = line
        .split('|')
        .slice(1, 4)
        .map((c) => c.trim());
      const [file, constant] = where.split(' · ').map((c) => c.replace(/`/g, '').trim());
      return { bound, value: value.replace(/`/g, ''), file, constant };
    });
}

describe(DOC, () => {
  it('lists bounds, and every value is the constant its row names', async () => {
    const table = rows();
    expect(table.length).toBeGreaterThanOrEqual(30);
    const wrong: string[] = [];
    for (const row of table) {
      const module = (await import(pathToFileURL(resolve(ROOT, row.file)).href)) as Record<string, unknown>;
      const [name, ...fields] = row.constant.split('.');
      let value: unknown = module[name];
      for (const field of fields) value = (value as Record<string, unknown> | undefined)?.[field];
      if (value === undefined) wrong.push(`${row.bound}: ${row.file} exports no ${row.constant}`);
      else if (String(value) !== row.value) wrong.push(`${row.bound}: the table says ${row.value}, ${row.constant} is ${String(value)}`);
    }
    expect(wrong).toEqual([]);
  });
});
