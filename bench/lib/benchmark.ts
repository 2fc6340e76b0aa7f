import { cpus } from 'node:os';

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
