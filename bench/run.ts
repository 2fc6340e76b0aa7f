import { loadavg } from 'node:os';
import * as callCost from './call-cost.js';
import * as connectionWait from './connection-wait.js';
import * as executeOverhead from './execute-overhead.js';
import * as hostileTenant from './hostile-tenant.js';
import type { Benchmark } from './lib/benchmark.js';
import { writeResults } from './lib/results.js';
import * as openapiSweep from './openapi-sweep.js';
import * as parkedWaits from './parked-waits.js';
import * as refreshStorm from './refresh-storm.js';
import * as search from './search.js';
import * as storedResults from './stored-results.js';
import * as throughput from './throughput.js';

/** Every benchmark, in the order `npm run bench` runs them. */
const BENCHMARKS: Benchmark[] = [
  connectionWait,
  executeOverhead,
  callCost,
  throughput,
  parkedWaits,
  refreshStorm,
  search,
  storedResults,
  openapiSweep,
  hostileTenant,
];

/**
 * `npm run bench` runs every benchmark one after another (they would skew each other's timings
 * side by side); `npm run bench -- <name>…` runs those whose name contains one of the arguments.
 * Each one's data goes to bench/results/<name>-<timestamp>.json.
 */
async function main(filters: string[]): Promise<number> {
  const selected = filters.length ? BENCHMARKS.filter((b) => filters.some((f) => b.name.includes(f))) : BENCHMARKS;
  if (selected.length === 0) {
    process.stderr.write(`No benchmark matches ${filters.join(', ')}. Known: ${BENCHMARKS.map((b) => b.name).join(', ')}\n`);
    return 2;
  }
  let failures = 0;
  for (const benchmark of selected) {
    if (stopRequested) return 130;
    const started = performance.now();
    // Others may share the machine: each benchmark's output and JSON carry the load around it.
    const loadAtStart = loadAverage();
    console.log(`${benchmark.name}: load average at start ${loadAtStart.join(' ')} (1/5/15 min)`);
    try {
      const data = await benchmark.run();
      const loadAtEnd = loadAverage();
      console.log(`${benchmark.name}: load average at end ${loadAtEnd.join(' ')} (1/5/15 min)`);
      const path = writeResults(benchmark.name, { ...data, loadAverage: { start: loadAtStart, end: loadAtEnd } });
      console.log(`${benchmark.name}: done in ${((performance.now() - started) / 1000).toFixed(1)} s, results in ${path}\n`);
    } catch (err) {
      failures++;
      const detail = stopRequested ? (err as Error).message : ((err as Error).stack ?? err);
      process.stderr.write(`${benchmark.name} failed: ${detail}\n\n`);
    }
  }
  if (stopRequested) return 130;
  return failures ? 1 : 0;
}

/** The 1, 5 and 15 minute load averages (as /proc/loadavg has them), two decimals. */
const loadAverage = () => loadavg().map((x) => Math.round(x * 100) / 100);

// The running benchmark's environment stops it and cleans up on Ctrl-C; this only keeps the
// next one from starting.
let stopRequested = false;
const requestStop = () => {
  stopRequested = true;
};
process.on('SIGINT', requestStop);
process.on('SIGTERM', requestStop);

// Exit explicitly: Temporal's native runtime may keep the event loop alive after everything closed.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);
