import { cpus } from 'node:os';
import { positiveIntFromEnv } from './settings.js';

/** What bench/run.ts expects of every benchmark module. */
export interface Benchmark {
  /** Used by the name filter of `npm run bench -- <name>` and in the results file name. */
  name: string;
  /** Runs the benchmark to completion, prints its report, and answers the data to keep as JSON. */
  run(): Promise<object>;
}

/** What every benchmark's results begin with: which one, when, the parameters it ran with, and on what machine. */
export function resultHeader(name: string, startedAt: Date, parameters: object) {
  return {
    benchmark: name,
    startedAt: startedAt.toISOString(),
    parameters,
    host: { node: process.version, platform: process.platform, cpus: cpus().length },
  };
}

/**
 * The start of every benchmark's run: its deadline (BENCH_TIMEOUT_SEC, else the benchmark's own
 * default) and start time, announced with what it is about to do.
 */
export function beginRun(name: string, what: string, defaultTimeoutSec = 600): { timeoutSec: number; startedAt: Date } {
  const timeoutSec = positiveIntFromEnv('BENCH_TIMEOUT_SEC', defaultTimeoutSec);
  console.log(`${name}: ${what}, deadline ${timeoutSec} s`);
  return { timeoutSec, startedAt: new Date() };
}
