// Setup steps shared by `npm start` and `npm test`. Plain Node with no dependencies, because it
// runs before `node_modules` exists. Each step says what it is doing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
export const CACHE_DIR = process.env.SWITCHBOARD_CACHE_DIR ?? join(homedir(), '.cache', 'switchboard');

export const say = (msg) => process.stderr.write(`[switchboard] ${msg}\n`);

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { stdio: 'inherit', cwd: ROOT, ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    if (dir && existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** Installs dependencies when node_modules is missing or older than the lockfile. */
export function ensureNodeModules() {
  const marker = join(ROOT, 'node_modules', '.package-lock.json');
  const lock = join(ROOT, 'package-lock.json');
  if (existsSync(marker) && (!existsSync(lock) || statSync(marker).mtimeMs >= statSync(lock).mtimeMs)) return;
  // `npm install`, not `npm ci`: the lockfile records an optional Windows-only package of vite
  // that the registry here does not serve, which `npm ci` refuses; install follows the lock.
  say('installing Node dependencies (npm install, following package-lock.json)…');
  const status = run('npm', ['install', '--no-audit', '--no-fund']);
  if (status !== 0) throw new Error('npm could not install the dependencies (see above)');
}

/**
 * Finds the Temporal CLI: TEMPORAL_CLI, then PATH, then our cache; else builds it once with
 * `go install` into the cache. Returns undefined when there is neither a CLI nor Go, so the
 * caller can fall back to @temporalio/testing's download (a laptop with internet).
 */
export function ensureTemporalCli() {
  if (process.env.TEMPORAL_CLI) {
    if (!existsSync(process.env.TEMPORAL_CLI)) throw new Error(`TEMPORAL_CLI points at ${process.env.TEMPORAL_CLI}, which does not exist`);
    return process.env.TEMPORAL_CLI;
  }
  const cached = join(CACHE_DIR, 'bin', 'temporal');
  if (existsSync(cached)) return cached;
  const found = onPath('temporal');
  if (found) return found;
  const go = onPath('go') ?? (existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  if (!go) {
    say("no Temporal CLI and no Go toolchain: will use @temporalio/testing's download");
    return undefined;
  }
  mkdirSync(join(CACHE_DIR, 'bin'), { recursive: true });
  say(`building the Temporal CLI ${TEMPORAL_CLI_VERSION} with go install into ${join(CACHE_DIR, 'bin')}`);
  say('this happens once and takes a few minutes on 2 cores; packages are listed as they compile');
  const status = run(go, ['install', '-v', `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`], {
    env: { ...process.env, GOBIN: join(CACHE_DIR, 'bin'), GOFLAGS: '-mod=mod' },
  });
  if (status !== 0 || !existsSync(cached)) throw new Error('go install of the Temporal CLI failed (see above)');
  say(`Temporal CLI ready: ${cached}`);
  return cached;
}

export const CHROMIUM_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** Installs Debian's chromium for the browser tests when it is missing and we may (root + apt). */
export function ensureChromium() {
  const found = process.env.CHROMIUM_PATH ?? CHROMIUM_PATHS.find((p) => existsSync(p));
  if (found) return found;
  if (process.getuid?.() !== 0 || !onPath('apt-get')) {
    throw new Error("chromium is missing: install Debian's chromium package (apt-get install -y chromium) or set CHROMIUM_PATH");
  }
  say('installing chromium from Debian packages (apt-get)…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (run('apt-get', ['update', '-qq'], { env }) !== 0 || run('apt-get', ['install', '-y', '-qq', 'chromium'], { env }) !== 0) {
    throw new Error('apt-get could not install chromium (see above)');
  }
  return CHROMIUM_PATHS.find((p) => existsSync(p));
}
