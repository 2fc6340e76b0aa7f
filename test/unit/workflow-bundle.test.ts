import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import type { ActivityDeps } from '../../activities/deps.js';
import { SwitchboardPlugin, WORKFLOW_BUNDLE_OPTIONS, WORKFLOWS_PATH } from '../../plugin/index.js';

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

  // Preloaded modules are evaluated once and shared by every workflow the worker runs: module-level
  // state there would carry one workflow's (one user's) data into another's and break replay.
  it('no module of the preloaded graph keeps state of its own at module level', () => {
    const seen = new Set<string>();
    const pending = [WORKFLOWS_PATH];
    while (pending.length) {
      const file = pending.pop() as string;
      if (seen.has(file)) continue;
      seen.add(file);
      const source = readFileSync(file, 'utf8');
      // Values imported from Switchboard's own files (not `import type`, not packages).
      for (const match of source.matchAll(/^(?:import|export) (?!type\b)[^;]*?from '(\.{1,2}\/[^']+)\.js';/gms))
        pending.push(resolve(dirname(file), `${match[1]}.ts`));
      const state = source.match(
        /^(?:export )?(?:let|var) \w+|^(?:export )?const \w+(?::[^=]+)? = (?:new (?:Map|Set|WeakMap|WeakSet|Array)\b|\[\s*\]|\{\s*\})/m,
      );
      expect(state?.[0], `${file} keeps module-level state`).toBeUndefined();
    }
    expect(seen.size).toBeGreaterThan(5);
  });

  it('the bundle the tests and benchmarks share preloads the workflows index', () => {
    const code = readFileSync(inject('workflowBundlePath'), 'utf8');
    const preload = code.slice(code.indexOf('exports.preloadModules = function preloadModules()'));
    expect(preload.slice(0, preload.indexOf('}'))).toMatch(/workflows\/index\.ts/);
  });
});
