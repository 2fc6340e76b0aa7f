import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, inject, it } from 'vitest';
import type { ActivityDeps } from '../../features/activity-deps.js';
import { SwitchboardPlugin, WORKFLOW_BUNDLE_OPTIONS, WORKFLOWS_PATH } from '../../surfaces/temporal-plugin/index.js';

// With reuseV8Context, a module not preloaded is evaluated again for every new workflow: preloading
// Switchboard's workflow modules takes that off every batch (bench/README.md, call cost).

const deps = {
  config: { CONNECTIONS_ACCOUNT_MAX_CONCURRENCY: 3 },
  pool: {},
  keyring: {},
  logger: {},
  registry: {},
} as unknown as ActivityDeps;

describe("Switchboard's workflow bundle", () => {
  it('the worker that bundles the workflows itself preloads them; a prebuilt bundle is left as built', () => {
    const bundling = new SwitchboardPlugin({ activityDeps: deps }).configureWorker({ taskQueue: 'q' });
    expect(bundling.workflowsPath).toBe(WORKFLOWS_PATH);
    expect(bundling.bundlerOptions?.preloadModules).toEqual([WORKFLOWS_PATH]);
    const prebuilt = new SwitchboardPlugin({ activityDeps: deps, workflowBundle: { codePath: '/x.js' } }).configureWorker({
      taskQueue: 'q',
    });
    expect(prebuilt.bundlerOptions).toBeUndefined();
    expect(WORKFLOW_BUNDLE_OPTIONS.preloadModules).toEqual([WORKFLOWS_PATH]);
  });

  it("an agent's own worker (client-only plugin, switchboard/workflow) is bundled as its owner set it: nothing preloaded", () => {
    const agentPath = resolve(dirname(WORKFLOWS_PATH), '../test/support/agent-workflows.ts');
    const agent = new SwitchboardPlugin().configureWorker({ taskQueue: 'agents', workflowsPath: agentPath });
    expect(agent.workflowsPath).toBe(agentPath);
    expect(agent.bundlerOptions).toBeUndefined();
    const own = new SwitchboardPlugin().configureWorker({
      taskQueue: 'agents',
      workflowsPath: agentPath,
      bundlerOptions: { ignoreModules: ['x'] },
    });
    expect(own.bundlerOptions).toEqual({ ignoreModules: ['x'] });
    // Switchboard's own worker keeps what the operator preloads and adds only its own index.
    const switchboard = new SwitchboardPlugin({ activityDeps: deps }).configureWorker({
      taskQueue: 'q',
      bundlerOptions: { preloadModules: ['/op/module.js'] },
    });
    expect(switchboard.bundlerOptions?.preloadModules).toEqual(['/op/module.js', WORKFLOWS_PATH]);
  });

  // Preloaded modules are evaluated once and shared by every workflow the worker runs: module-level
  // state there would carry one workflow's (one user's) data into another's and break replay.
  it('no module of the preloaded graph keeps state of its own at module level', () => {
    const { files, stateful } = moduleState(WORKFLOWS_PATH);
    expect(stateful).toEqual([]);
    expect(files.length).toBeGreaterThan(5);
    // The agent-side SDK (switchboard/workflow) is bundled by an agent's own worker, never preloaded here.
    expect(files.some((f) => f.includes('/surfaces/workflow-sdk/'))).toBe(false);
  });

  // An agent's worker may preload its own workflow modules (the SDK's preloadModules, the same
  // saving): then switchboard/workflow's module is shared by every agent workflow that worker runs.
  it('switchboard/workflow keeps one map at module level, and reaches it only by workflow run', () => {
    const sdk = resolve(dirname(WORKFLOWS_PATH), '../surfaces/workflow-sdk/index.ts');
    expect(moduleState(sdk).stateful.map((s) => `${basename(dirname(s.file))}/${basename(s.file)}: ${s.what}`)).toEqual([
      'workflow-sdk/index.ts: settledApprovals',
    ]);
    const uses = [...readFileSync(sdk, 'utf8').matchAll(/settledApprovals\.(\w+)\(([^)]*\)?)/g)];
    expect(uses.length).toBeGreaterThanOrEqual(3);
    for (const [use, , argument] of uses) expect(argument, use).toMatch(/^settledKey\(approvalId\)/);
    expect(readFileSync(sdk, 'utf8')).toMatch(
      /const settledKey = \(approvalId: string\) => `\$\{workflowInfo\(\)\.runId\}\/\$\{approvalId\}`;/,
    );
  });

  it('the guard follows every import form and sees state however it is written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'preload-guard-'));
    const write = (name: string, text: string) => writeFileSync(join(dir, name), text);
    write(
      'index.ts',
      [
        "import './side-effect.js';",
        "export * from './star.js';",
        "export * as ns from './star-ns.js';",
        "export { a } from './named.js';",
        "import {\n  type T,\n  b,\n} from './mixed.js';",
        "import type { U } from './types-only.js';",
        'export const use = (t: T, u: U) => [t, u, b];',
      ].join('\n'),
    );
    write('side-effect.ts', 'let calls = 0;\nexport const bump = () => ++calls;');
    write('star.ts', 'export const counts = { n: 0 };');
    write('star-ns.ts', "export const seen: string[] = ['x'];");
    write('named.ts', 'export class a {\n  static last = new Map<string, number>();\n}');
    write('mixed.ts', 'export type T = number;\nexport const b = Object.create(null);\nexport const cache = new Map<string, number>();');
    write('types-only.ts', 'export type U = string;\nlet never = 1;');
    const { files, stateful } = moduleState(join(dir, 'index.ts'));
    expect(files.map((f) => basename(f)).sort()).toEqual(['index.ts', 'mixed.ts', 'named.ts', 'side-effect.ts', 'star-ns.ts', 'star.ts']);
    expect(stateful.map((s) => `${basename(s.file)}: ${s.what}`).sort()).toEqual([
      'mixed.ts: b',
      'mixed.ts: cache',
      'named.ts: a.last',
      'side-effect.ts: calls',
      'star-ns.ts: seen',
      'star.ts: counts',
    ]);
    // What keeps no state: frozen or `as const` tables, primitives, functions, signal definitions.
    write(
      'index.ts',
      [
        "import { defineSignal } from '@temporalio/workflow';",
        "export const SA = { tenant: 'SwitchboardTenant' } as const;",
        "export const CODES = ['a', 'b'] as const;",
        'export const FROZEN = Object.freeze({ a: 1 });',
        'export const MAX = 20;',
        'const encoder = new TextEncoder();',
        "export const signal = defineSignal<[string]>('s');",
        'export const size = (s: string) => encoder.encode(s).length;',
        'export class Plain {\n  static readonly NAME = "p";\n  value = 1;\n}',
      ].join('\n'),
    );
    expect(moduleState(join(dir, 'index.ts')).stateful).toEqual([]);
  });

  it('the bundle the tests and benchmarks share preloads the workflows index', () => {
    const code = readFileSync(inject('workflowBundlePath'), 'utf8');
    const preload = code.slice(code.indexOf('exports.preloadModules = function preloadModules()'));
    expect(preload.slice(0, preload.indexOf('}'))).toMatch(/features\/workflows\.ts/);
  });
});

/** Values a module's own top level may hold without keeping state (no workflow can change them). */
const STATELESS_CONSTRUCTORS = new Set(['TextEncoder', 'TextDecoder']);

/**
 * Every module of Switchboard's own that `entry` loads at run time (any import or re-export that is
 * not type-only, side-effect imports included), and the module-level bindings among them that could
 * hold state: `let`/`var`, a mutable object or array literal (not `as const`, not frozen), `new` of
 * anything but an encoder, Object.create, and a class's static field that is not readonly.
 */
function moduleState(entry: string): { files: string[]; stateful: { file: string; what: string }[] } {
  const seen = new Set<string>();
  const stateful: { file: string; what: string }[] = [];
  const pending = [entry];
  const isFrozen = (e: ts.Expression): boolean =>
    (ts.isAsExpression(e) && ts.isTypeReferenceNode(e.type) && e.type.typeName.getText() === 'const') ||
    (ts.isCallExpression(e) && e.expression.getText() === 'Object.freeze');
  const holdsState = (e: ts.Expression): boolean => {
    if (isFrozen(e)) return false;
    if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e)) return holdsState(e.expression);
    if (ts.isObjectLiteralExpression(e) || ts.isArrayLiteralExpression(e)) return true;
    if (ts.isNewExpression(e)) return !STATELESS_CONSTRUCTORS.has(e.expression.getText());
    return ts.isCallExpression(e) && e.expression.getText() === 'Object.create';
  };
  while (pending.length) {
    const file = pending.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    for (const statement of source.statements) {
      const specifier =
        (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly) ||
        (ts.isExportDeclaration(statement) && !statement.isTypeOnly)
          ? statement.moduleSpecifier
          : undefined;
      if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith('.'))
        pending.push(resolve(dirname(file), specifier.text.replace(/\.js$/, '.ts')));
      if (ts.isVariableStatement(statement)) {
        const constant = (statement.declarationList.flags & ts.NodeFlags.Const) !== 0;
        for (const d of statement.declarationList.declarations)
          if (!constant || (d.initializer && holdsState(d.initializer))) stateful.push({ file, what: d.name.getText() });
      }
      if (ts.isClassDeclaration(statement))
        for (const member of statement.members)
          if (
            ts.isPropertyDeclaration(member) &&
            member.modifiers?.some((m) => m.kind === ts.SyntaxKind.StaticKeyword) &&
            !member.modifiers.some((m) => m.kind === ts.SyntaxKind.ReadonlyKeyword)
          )
            stateful.push({ file, what: `${statement.name?.getText()}.${member.name.getText()}` });
    }
  }
  return { files: [...seen], stateful };
}
