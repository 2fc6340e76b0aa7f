import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * No function in the product (everything but test/ and bench/) is longer than MAX_FUNCTION_LINES:
 * a long function hides the steps a reader looks for. A function is measured from its first line
 * to its last, comments included; a function nested in another counts on its own and inside it.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const MAX_FUNCTION_LINES = 100;
/**
 * Functions still over the bound, each to be split; the list only shrinks (one split off must be
 * taken off it, and a new long function fails the test).
 */
const NOT_YET_SPLIT: string[] = [];
const OUTSIDE_THE_PRODUCT = new Set(['test', 'bench', 'node_modules', 'deploy', 'docs']);

function productFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith('.')) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return dir === ROOT && OUTSIDE_THE_PRODUCT.has(entry.name) ? [] : productFiles(path);
    return /\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function nameOf(node: ts.Node): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isFunctionExpression(node)) && node.name) {
    return node.name.getText();
  }
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText();
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText().slice(0, 40)})`;
  return '(anonymous)';
}

/** Every function in the file longer than the bound, as `file name` (a line and length to read in a failure). */
function longFunctions(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > MAX_FUNCTION_LINES) found.push(`${relative(ROOT, file)} ${nameOf(node)} (line ${first + 1}, ${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('function length', () => {
  it(`no function in the product is over ${MAX_FUNCTION_LINES} lines`, () => {
    const files = productFiles(ROOT);
    expect(files.length).toBeGreaterThan(100);
    const long = files.flatMap(longFunctions);
    expect(long.filter((found) => !NOT_YET_SPLIT.some((known) => found.startsWith(`${known} (`)))).toEqual([]);
    expect(NOT_YET_SPLIT.filter((known) => !long.some((found) => found.startsWith(`${known} (`)))).toEqual([]);
  });
});
