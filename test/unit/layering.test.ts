import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The house rules a reader relies on, checked rather than hoped for:
 * - top-level folders form layers, and a lower one never imports a higher one;
 * - workflow code (everything the workflow bundle reaches from features/workflows.ts by value) uses only
 *   `@temporalio/workflow`, `@temporalio/common`, pure code from core/ and other workflow files —
 *   activities, stores and surfaces are reached by type only.
 */
const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Lowest first. A folder may import its own layer and any lower one. core/ is pure domain code and
 * the ports (core/ports/) that platform/ implements; platform/ (database, Temporal codec, egress,
 * browser, telemetry) knows no service; providers/ (the SDK, built-in services, the remote-MCP adapter
 * and its OAuth client) knows no feature; features/ are vertical slices, each with its workflow,
 * activities, store functions and tools; surfaces/ (HTTP API, MCP by revision, portal, operator
 * endpoints, the worker's Temporal plugin, the agents' workflow SDK) are how the product is reached;
 * demo/ sits above everything it is built from and below bin/, the one place that starts it.
 */
const LAYERS = ['core', 'platform', 'providers', 'features', 'surfaces', 'demo', 'bin'];
const layerOf = (file: string): number => LAYERS.indexOf(relative(ROOT, file).split(sep)[0]);

interface Import {
  specifier: string;
  typeOnly: boolean;
}

function importsOf(file: string): Import[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, false);
  const found: Import[] = [];
  for (const node of source.statements) {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly = !!clause && (clause.isTypeOnly || (!clause.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      const typeOnly = node.isTypeOnly || (!!named && named.length > 0 && named.every((e) => e.isTypeOnly));
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    }
  }
  return found;
}

/** The file a relative specifier names (`./x.js` is written for `./x.ts`), or undefined for a package. */
function resolveRelative(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  throw new Error(`${relative(ROOT, from)} imports ${specifier}, which does not exist`);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('layering', () => {
  it('no top-level folder imports one above it', () => {
    const files = LAYERS.filter((layer) => existsSync(join(ROOT, layer))).flatMap((layer) => sourceFiles(join(ROOT, layer)));
    expect(files.length).toBeGreaterThan(100);
    const upward: string[] = [];
    for (const file of files) {
      for (const { specifier } of importsOf(file)) {
        const target = resolveRelative(file, specifier);
        // package.json (name and version) is the project's own data, readable from anywhere.
        if (!target || target === join(ROOT, 'package.json')) continue;
        const targetLayer = layerOf(target);
        if (targetLayer > layerOf(file)) upward.push(`${relative(ROOT, file)} → ${relative(ROOT, target)}`);
        if (targetLayer < 0) upward.push(`${relative(ROOT, file)} → ${relative(ROOT, target)} (outside every layer)`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('workflow code reaches only @temporalio/workflow, @temporalio/common, core/ and workflow files by value', () => {
    const allowedPackages = new Set(['@temporalio/workflow', '@temporalio/common']);
    const seen = new Set<string>();
    const refused: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const { specifier, typeOnly } of importsOf(file)) {
        if (typeOnly) continue;
        const target = resolveRelative(file, specifier);
        if (!target) {
          if (!allowedPackages.has(specifier)) refused.push(`${relative(ROOT, file)} → ${specifier}`);
          continue;
        }
        const folder = relative(ROOT, target).split(sep)[0];
        const isWorkflowFile = /(^|\/)workflows?\.ts$/.test(target);
        if (folder !== 'core' && !isWorkflowFile) refused.push(`${relative(ROOT, file)} → ${relative(ROOT, target)}`);
        else visit(target);
      }
    };
    visit(join(ROOT, 'features', 'workflows.ts'));
    expect(seen.size).toBeGreaterThan(3);
    expect(refused).toEqual([]);
  });
});
