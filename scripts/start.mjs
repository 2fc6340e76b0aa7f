// `npm start`: install what is missing, then run the stack (bin/start.ts) under tsx.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ensureNodeModules, ensureTemporalCli, nodeSupport, ROOT, say } from './setup.mjs';

try {
  // Which Node runs the stack, and a warning when it is not a line this project supports (package.json engines).
  const node = nodeSupport(process.versions.node);
  say(`${node.supported ? '' : 'warning: '}${node.message} (${process.execPath})`);
  ensureNodeModules();
  const env = { ...process.env };
  if (!env.TEMPORAL_ADDRESS) {
    const cli = ensureTemporalCli();
    if (cli) env.TEMPORAL_CLI = cli;
  }
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bin', 'start.ts')], { stdio: 'inherit', env, cwd: ROOT });
  // The child handles Ctrl-C itself (drains the worker, stops the dev server); we wait for it.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 130 : 1)));
} catch (err) {
  say(`npm start failed: ${err.message}`);
  process.exit(1);
}
