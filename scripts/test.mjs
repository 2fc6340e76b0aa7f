// `npm test`: does its own setup (Node, dependencies, Temporal CLI and server, chromium, the MCP conformance suite,
// Postgres check), then lint, type check and every test with vitest on the dev server, then the end-to-end tests again
// on the Temporal server itself with PostgreSQL and processes apart (the cluster stage). Extra arguments go to vitest
// and run only what they name, without the solo and cluster stages (e.g. `npm test -- test/unit`; the solo stage's
// files with `npm test -- --config vitest.solo.config.ts`).
// `npm run test:cluster` (`--cluster`): the setup and the cluster stage alone (vitest.cluster.config.ts).
import { spawn, spawnSync } from 'node:child_process';
import { createConnection } from 'node:net';
import {
  ensureChromium,
  ensureConformanceSuite,
  ensureNodeModules,
  ensureTemporalCli,
  ensureTemporalServer,
  ensureTestNode,
  NODE_LTS_VERSION,
  ROOT,
  say,
} from './setup.mjs';

const cluster = process.argv.includes('--cluster');
const args = process.argv.slice(2).filter((arg) => arg !== '--cluster');

// The suite runs on the newest LTS line. On another Node (this machine's Debian has 20) it runs itself again on
// that line's build from the npm registry, so everything it starts (vitest, servers, workers) runs on it too.
const testNode = ensureTestNode();
if (testNode !== process.execPath) {
  say(`Node ${process.version} is not the line the tests run on: running them on Node ${NODE_LTS_VERSION} (${testNode})`);
  const again = spawnSync(testNode, [import.meta.filename, ...process.argv.slice(2)], { stdio: 'inherit', cwd: ROOT });
  process.exit(again.status ?? 1);
}

function reachable(host, port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port, timeout: 2000 });
    socket.once('connect', () => socket.end(() => resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => socket.destroy() && resolve(false));
  });
}

/** Runs vitest with `vitestArgs`; resolves its exit code. */
function vitest(vitestArgs, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...vitestArgs], { stdio: 'inherit', env, cwd: ROOT });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

try {
  say(`running on Node ${process.version} (${process.execPath})`);
  ensureNodeModules();
  const env = { ...process.env };
  const cli = ensureTemporalCli();
  if (cli) env.TEMPORAL_CLI = cli;
  // The cluster stage runs with every full `npm test` and with `npm run test:cluster`.
  const withCluster = cluster || args.length === 0;
  if (withCluster) env.TEMPORAL_SERVER_BIN = ensureTemporalServer();
  env.CHROMIUM_PATH = ensureChromium();
  // The official MCP conformance suite and the Node 22+ it needs (test/integration/dns-rebinding.test.ts).
  const conformance = ensureConformanceSuite();
  env.MCP_CONFORMANCE_NODE = conformance.node;
  env.MCP_CONFORMANCE_CLI = conformance.cli;
  env.MCP_CONFORMANCE_2026_CLI = conformance.cli2026;
  const dbUrl = new URL(env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/switchboard_test');
  if (!(await reachable(dbUrl.hostname, Number(dbUrl.port || 5432)))) {
    throw new Error(`PostgreSQL does not answer at ${dbUrl.host}; start it or set TEST_DATABASE_URL`);
  }
  if (!cluster) {
    say('lint and type check (biome, tsc)');
    for (const [cmd, lintArgs] of [
      ['node_modules/@biomejs/biome/bin/biome', ['check', '--error-on-warnings', '.']],
      ['node_modules/typescript/bin/tsc', ['-p', '.']],
    ]) {
      const status = spawnSync(process.execPath, [cmd, ...lintArgs], { stdio: 'inherit', cwd: ROOT }).status;
      if (status !== 0) throw new Error(`${lintArgs[0] === 'check' ? 'biome' : 'tsc'} found problems (see above)`);
    }
    say('running the tests (vitest, on the Temporal dev server)');
    const code = await vitest(args, env);
    if (code !== 0) process.exit(code);
    if (args.length === 0) {
      say('the timing-sensitive attack tests, alone (vitest.solo.config.ts)');
      const solo = await vitest(['--config', 'vitest.solo.config.ts'], env);
      if (solo !== 0) process.exit(solo);
    }
  }
  if (withCluster) {
    say(
      'the cluster stage: end-to-end tests on the Temporal server with PostgreSQL, two server and two worker processes (vitest.cluster.config.ts)',
    );
    process.exit(await vitest(['--config', 'vitest.cluster.config.ts', ...args], env));
  }
  process.exit(0);
} catch (err) {
  say(`npm test setup failed: ${err.message}`);
  process.exit(1);
}
