import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseEnvSchema } from '../../core/config.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { providerEnvSpec } from '../../providers/sdk/index.js';

// docs/reference/configuration.md is the operator's reference; these tests keep it and the code in step, so a
// variable added, renamed or removed in code fails here until the page says so too.

const ROOT = resolve(import.meta.dirname, '../..');
const DOC_PATH = 'docs/reference/configuration.md';
const doc = readFileSync(join(ROOT, DOC_PATH), 'utf8');

/** The text under one `## heading`, up to the next `## `. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`${DOC_PATH} has no "## ${heading}" section`);
  const body = markdown.slice(start + heading.length + 5);
  const end = body.search(/\n## /);
  return end < 0 ? body : body.slice(0, end);
}

const cells = (row: string) => row.trim().replace(/^\|/, '').replace(/\|$/, '').split('|');
const isSeparator = (row: string) => /^\|(\s*:?-+:?\s*\|)+$/.test(row.trim());

/**
 * The first column of every table in a section: one name in backticks per row (header and
 * separator rows aside). A row that is not in that form fails, so a typo cannot hide a variable.
 */
function firstColumn(text: string): string[] {
  const rows = text.split('\n').filter((line) => line.trim().startsWith('|'));
  const names: string[] = [];
  rows.forEach((row, i) => {
    if (isSeparator(row) || isSeparator(rows[i + 1] ?? '')) return;
    const name = /^`([^`]+)`$/.exec(cells(row)[0].trim())?.[1];
    if (!name) throw new Error(`${DOC_PATH}: a table row must start with one \`NAME\`, got: ${row.slice(0, 80)}`);
    names.push(name);
  });
  return names;
}

/** What `expected` has that `actual` lacks, sorted, for a failure message that names them. */
const missing = (expected: Iterable<string>, actual: Iterable<string>) => {
  const have = new Set(actual);
  return [...new Set(expected)].filter((name) => !have.has(name)).sort();
};

/** Every production source file: tests, benchmarks, examples and docs aside. */
function productionFiles(dir = ROOT): string[] {
  const skip = new Set(['node_modules', 'test', 'bench', 'examples', 'docs', 'coverage', 'dist']);
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name.startsWith('.') || skip.has(entry.name) ? [] : productionFiles(path);
    return ['.ts', '.mts', '.js', '.mjs', '.cjs'].includes(extname(entry.name)) && !entry.name.includes('.test.') ? [path] : [];
  });
}

/**
 * Names read as `env.NAME` or `env['NAME']` (process.env or an env object passed in); plain
 * assignments (`env.X = …`, `env.X ||= …`) are writes, e.g. a script handing a value to its child.
 * A destructured read (`const { X } = process.env`) is not seen: the code reads env by name.
 */
function envReads(source: string): string[] {
  const notWrite = String.raw`(?!\s*(?:=(?!=)|\|\|=|\?\?=|&&=))`;
  const patterns = [
    new RegExp(String.raw`\benv\.([A-Z][A-Z0-9_]*)\b${notWrite}`, 'g'),
    new RegExp(String.raw`\benv\[\s*['"\x60]([A-Z][A-Z0-9_]*)['"\x60]\s*\]${notWrite}`, 'g'),
  ];
  return patterns.flatMap((pattern) => [...source.matchAll(pattern)].map((m) => m[1]));
}

const schemaVariables = Object.keys(baseEnvSchema.shape);
const providerSpecs = builtinProviders.map((p) => providerEnvSpec(p.manifest));

describe(`${DOC_PATH} matches the code`, () => {
  it('documents every variable of the config schema, and no variable the schema lacks', () => {
    const documented = firstColumn(section(doc, 'Server configuration'));
    expect(missing(schemaVariables, documented), `in core/config.ts but missing from ${DOC_PATH}`).toEqual([]);
    expect(missing(documented, schemaVariables), `in ${DOC_PATH} but not in core/config.ts`).toEqual([]);
    expect(documented.length, 'each variable once').toBe(new Set(documented).size);
  });

  it("documents every provider's prefix and every per-provider variable", () => {
    const text = section(doc, 'Per-provider variables');
    const documented = firstColumn(text);
    const prefixes = providerSpecs.map((spec) => spec.envPrefix);
    // loadConfig adds a client id and secret for every prefix, then each of its URL settings.
    const settings = [...new Set(providerSpecs.flatMap((spec) => ['CLIENT_ID', 'CLIENT_SECRET', ...spec.urlSettings]))];
    const expected = [...prefixes, ...settings.map((setting) => `<PREFIX>_${setting}`)];
    expect(missing(expected, documented), `provider variables missing from ${DOC_PATH}`).toEqual([]);
    expect(missing(documented, expected), `provider variables in ${DOC_PATH} the code does not have`).toEqual([]);
  });

  it('lists the variables production code reads outside the schema, and only those', () => {
    const inSchema = new Set(schemaVariables);
    const outside = productionFiles().flatMap((file) => {
      const reads = envReads(readFileSync(file, 'utf8')).filter((name) => !inSchema.has(name));
      return reads.map((name) => ({ name, file: relative(ROOT, file) }));
    });
    const documented = firstColumn(section(doc, 'Read by scripts and helpers, not the server config'));
    const undocumented = outside.filter(({ name }) => !documented.includes(name)).map(({ name, file }) => `${name} (${file})`);
    expect([...new Set(undocumented)].sort(), `read outside the schema but missing from ${DOC_PATH}`).toEqual([]);
    expect(
      missing(
        documented,
        outside.map(({ name }) => name),
      ),
      `listed in ${DOC_PATH} but read nowhere in production code`,
    ).toEqual([]);
  });

  it('finds the env reads it checks (the scan is not blind)', () => {
    expect(
      envReads("const a = process.env.FOO_BAR ?? 'x'; env['BAZ']; env.SET_ME = 1; env.DEFAULTED ||= 2; if (env.X === '1') {}"),
    ).toEqual(['FOO_BAR', 'X', 'BAZ']);
    expect(productionFiles().map((file) => relative(ROOT, file))).toContain(join('core', 'config.ts'));
  });
});
