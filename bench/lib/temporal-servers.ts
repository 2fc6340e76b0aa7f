/**
 * Which Temporal server a benchmark runs on: `dev`, the CLI's dev server (in-memory SQLite, what
 * `npm start` and `npm test` use), or `postgres`, the Temporal server itself on PostgreSQL
 * persistence and visibility (what a cluster runs; bin/support/temporal-server.ts).
 */
export type TemporalServerKind = 'dev' | 'postgres';

const KINDS: readonly TemporalServerKind[] = ['dev', 'postgres'];

/**
 * The servers to run on, in order, from BENCH_TEMPORAL (comma-separated), else `fallback`. The
 * benchmarks that compare servers run once on each in one run and print the figures side by side.
 */
export function temporalServersFromEnv(fallback: readonly TemporalServerKind[]): TemporalServerKind[] {
  const raw = process.env.BENCH_TEMPORAL;
  if (raw === undefined || raw.trim() === '') return [...fallback];
  const chosen = raw.split(',').map((s) => s.trim());
  const unknown = chosen.filter((s) => !KINDS.includes(s as TemporalServerKind));
  if (unknown.length || new Set(chosen).size !== chosen.length) {
    throw new Error(`BENCH_TEMPORAL must name ${KINDS.join(' and/or ')} (comma-separated, each once), got "${raw}"`);
  }
  return chosen as TemporalServerKind[];
}

/** How the servers are called in tables. */
export const SERVER_LABEL: Record<TemporalServerKind, string> = {
  dev: 'dev server (SQLite in memory)',
  postgres: 'Temporal server on PostgreSQL',
};

/** Runs `measure` once per server, one after the other (they would skew each other side by side). */
export async function onEachServer<T>(
  servers: readonly TemporalServerKind[],
  measure: (server: TemporalServerKind) => Promise<T>,
): Promise<Partial<Record<TemporalServerKind, T>>> {
  const results: Partial<Record<TemporalServerKind, T>> = {};
  for (const server of servers) {
    console.log(`\n— on the ${SERVER_LABEL[server]} —`);
    results[server] = await measure(server);
  }
  return results;
}
