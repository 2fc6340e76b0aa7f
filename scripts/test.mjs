// `npm test`: does its own setup (dependencies, Temporal CLI, chromium, the MCP conformance suite, Postgres check), then
// runs every test with vitest. Extra arguments go to vitest (e.g. `npm test -- test/unit`).
import { spawn, spawnSync } from 'node:child_process';
import { createConnection } from 'node:net';
import { ensureChromium, ensureConformanceSuite, ensureNodeModules, ensureTemporalCli, ROOT, say } from './setup.mjs';

function reachable(host, port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port, timeout: 2000 });
    socket.once('connect', () => socket.end(() => resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => socket.destroy() && resolve(false));
  });
}

try {
  ensureNodeModules();
  const env = { ...process.env };
  const cli = ensureTemporalCli();
  if (cli) env.TEMPORAL_CLI = cli;
  env.CHROMIUM_PATH = ensureChromium();
  // The official MCP conformance suite and the Node 22+ it needs (test/integration/dns-rebinding.test.ts).
  const conformance = ensureConformanceSuite();
  env.MCP_CONFORMANCE_NODE = conformance.node;
  env.MCP_CONFORMANCE_CLI = conformance.cli;
  const dbUrl = new URL(env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/switchboard_test');
  if (!(await reachable(dbUrl.hostname, Number(dbUrl.port || 5432)))) {
    throw new Error(`PostgreSQL does not answer at ${dbUrl.host}; start it or set TEST_DATABASE_URL`);
  }
  say('lint and type check (biome, tsc)');
  for (const [cmd, args] of [
    ['node_modules/@biomejs/biome/bin/biome', ['check', '--error-on-warnings', '.']],
    ['node_modules/typescript/bin/tsc', ['-p', '.']],
  ]) {
    const status = spawnSync(process.execPath, [cmd, ...args], { stdio: 'inherit', cwd: ROOT }).status;
    if (status !== 0) throw new Error(`${args[0] === 'check' ? 'biome' : 'tsc'} found problems (see above)`);
  }
  say('running the tests (vitest)');
  const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)], {
    stdio: 'inherit',
    env,
    cwd: ROOT,
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} catch (err) {
  say(`npm test setup failed: ${err.message}`);
  process.exit(1);
}
