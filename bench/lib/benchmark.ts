/** What bench/run.ts expects of every benchmark module. */
export interface Benchmark {
  /** Used by the name filter of `npm run bench -- <name>` and in the results file name. */
  name: string;
  /** Runs the benchmark to completion, prints its report, and answers the data to keep as JSON. */
  run(): Promise<object>;
}
