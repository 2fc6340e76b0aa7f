import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevServer } from '../../bin/support/temporal-dev-server.js';
import { startTemporalServer } from '../../bin/support/temporal-server.js';
import { ensureDatabase } from '../../platform/database/database.js';
import { bundleWorkflowsInto, findTemporalCli, findTemporalServer } from '../../test/support/infra.js';
import { freePort } from '../../test/support/ports.js';
import type { Infra } from '../../test/support/stack.js';
import type { TemporalServerKind } from './temporal-servers.js';

/** Benchmarks keep their schemas out of the development and test databases. */
export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/switchboard_bench';

/** After a first Ctrl-C, how long the benchmark gets to clean up by itself. */
const FORCED_EXIT_MS = 45_000;

export interface BenchEnvironment {
  infra: Infra;
  /** The Temporal server's process (for its CPU and memory). */
  temporalPid: number;
  /**
   * Aborts on the first Ctrl-C or SIGTERM, so the benchmark stops its work and cleans up after
   * itself (its schema, its stack) before calling teardown.
   */
  interrupted: AbortSignal;
  /** Stops everything the environment started; safe to call more than once. */
  teardown(): Promise<void>;
}

/**
 * The infrastructure of one benchmark, outside vitest: a Temporal server on a free loopback port —
 * the headless in-memory dev server, or with `temporal: 'postgres'` the Temporal server itself on
 * PostgreSQL (databases of its own next to the bench database, dropped afterwards) — the bench
 * database, and the workflows bundled once (a worker would otherwise bundle them on every start).
 * Whatever was started is stopped again if a later step fails. The server runs in its own process
 * group, so Ctrl-C does not reach it and it would outlive this process: a first signal asks the
 * benchmark to stop (`interrupted`); a second one, or the benchmark not finishing within
 * FORCED_EXIT_MS, tears down here and exits; and should the process end any other way (a crash),
 * the server is killed on the way out.
 */
export async function startBenchEnvironment(
  options: { log?: (line: string) => void; temporal?: TemporalServerKind } = {},
): Promise<BenchEnvironment> {
  const undo: (() => Promise<void> | void)[] = [];
  const onExit: (() => void)[] = [];
  const runOnExit = () => {
    for (const step of onExit) step();
  };
  let tornDown: Promise<void> | undefined;
  const teardown = () => {
    tornDown ??= (async () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.off('exit', runOnExit);
      for (const step of undo.reverse()) {
        await Promise.resolve()
          .then(step)
          .catch((err: Error) => process.stderr.write(`bench teardown: ${err.message}\n`));
      }
    })();
    return tornDown;
  };

  const interruption = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    const exit = () => void teardown().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    if (interruption.signal.aborted) return exit();
    process.stderr.write(`\n${signal}: stopping the benchmark (again to stop at once)\n`);
    interruption.abort(new Error(`interrupted by ${signal}`));
    setTimeout(exit, FORCED_EXIT_MS).unref();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', runOnExit);

  try {
    const cli = findTemporalCli();
    await ensureDatabase(BENCH_DATABASE_URL);
    const server =
      options.temporal === 'postgres'
        ? await startTemporalServer({ binDir: findTemporalServer(), cli, databaseUrl: BENCH_DATABASE_URL, log: options.log })
        : await startDevServer({ cli, port: await freePort(), headless: true, log: options.log });
    undo.push(() => server.stop());
    onExit.push(() => killProcessGroup(server.process.pid));

    const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-'));
    const removeDir = () => rmSync(dir, { recursive: true, force: true });
    undo.push(removeDir);
    onExit.push(removeDir);
    const workflowBundlePath = await bundleWorkflowsInto(dir);

    return {
      infra: { temporalAddress: server.address, databaseUrl: BENCH_DATABASE_URL, workflowBundlePath },
      temporalPid: server.process.pid!,
      interrupted: interruption.signal,
      teardown,
    };
  } catch (err) {
    await teardown();
    throw err;
  }
}

/** Synchronous, for the 'exit' event: nothing asynchronous runs any more by then. */
function killProcessGroup(pid: number | undefined) {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
