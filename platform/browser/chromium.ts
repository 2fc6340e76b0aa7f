import { existsSync } from 'node:fs';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Browser } from 'playwright-core';
import type { Config } from '../../core/config.js';

/** Where Debian (and most distributions) install chromium. */
const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The configured chromium, else the first one installed; undefined when there is none. */
export function findChromium(configured?: string): string | undefined {
  if (configured) return existsSync(configured) ? configured : undefined;
  return CHROMIUM_CANDIDATES.find((p) => existsSync(p));
}

/**
 * Flags every chromium Switchboard starts shares: no GPU, no QUIC, and none of chromium's own
 * background traffic (updates, sync, metrics) — a server browser talks only to the pages it is
 * sent to. The sandbox is not switched off here: `launchChromium` decides (see there).
 */
export const QUIET_CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-quic',
  '--disable-dev-shm-usage',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-domain-reliability',
  '--no-pings',
];

/**
 * Every connection goes through the egress proxy, loopback included (no implicit bypass), and
 * chromium resolves no names itself: the proxy does, under the policy. WebRTC sends no UDP
 * around it. A browser context may name its own proxy (cookie capture does, one per session);
 * these flags hold for all of them.
 */
function egressArgs(proxyUrl: string): string[] {
  return [
    `--proxy-server=${proxyUrl}`,
    '--proxy-bypass-list=<-loopback>',
    '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  ];
}

/** CHROMIUM_SANDBOX: `auto` falls back to no sandbox (with a warning) where the kernel refuses it; `required` refuses to start. */
type SandboxMode = 'auto' | 'required';

/** The operator's chromium settings, the same for every browser Switchboard starts. */
export interface ChromiumSettings {
  /** CHROMIUM_PATH; default the first of CHROMIUM_CANDIDATES. */
  chromiumPath?: string;
  /** CHROMIUM_RUN_AS: the uid and gid chromium runs as when this process is root. */
  runAs: { uid: number; gid: number };
  /** CHROMIUM_SANDBOX. */
  sandbox: SandboxMode;
}

export type ChromiumConfig = Pick<Config, 'CHROMIUM_PATH' | 'CHROMIUM_RUN_AS' | 'CHROMIUM_SANDBOX'>;

/** The chromium settings of this process's config. */
export function chromiumSettings(config: ChromiumConfig): ChromiumSettings {
  return { chromiumPath: config.CHROMIUM_PATH, runAs: config.CHROMIUM_RUN_AS, sandbox: config.CHROMIUM_SANDBOX };
}

interface ChromiumLaunchOptions extends ChromiumSettings {
  /** The egress proxy every connection goes through (egress-proxy.ts). */
  proxyUrl: string;
  /** Flags of this use on top of QUIET_CHROMIUM_ARGS and egressArgs. */
  extraArgs?: readonly string[];
  logger: Pick<Logger, 'info' | 'warn'>;
}

export interface LaunchedChromium {
  browser: Browser;
  /** Whether chromium's sandbox is on (false only after the `auto` fallback, with a warning logged). */
  sandboxed: boolean;
  /** The uid chromium runs as. */
  uid: number;
}

/** A sandbox failure (chromium's "No usable sandbox", Playwright's hint) rather than any other. */
const isSandboxFailure = (err: unknown) => /sandbox/i.test(String((err as Error)?.message ?? err));

const firstLine = (err: unknown) => String((err as Error)?.message ?? err).split('\n')[0];

/**
 * A small executable that starts chromium as `runAs` instead of root. Chromium refuses its
 * sandbox as root, and a root browser would hold every file this process can read; run as
 * an unprivileged user, its renderers get the namespace sandbox (user, pid and network
 * namespaces plus seccomp-bpf). Playwright makes the profile directory as root, so it is handed
 * over first; HOME points into it so chromium writes nothing elsewhere. `setpriv` execs, so the
 * pid Playwright watches (and kills on close) is chromium's own; with no_new_privs and an empty
 * capability bounding set, a compromised browser gains nothing from a setuid binary in the image.
 */
const wrappers = new Map<string, Promise<string>>();
function dropRootWrapper(executablePath: string, runAs: { uid: number; gid: number }): Promise<string> {
  const key = `${runAs.uid}:${runAs.gid}:${executablePath}`;
  const made = wrappers.get(key);
  if (made) return made;
  const wrapper = (async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'switchboard-chromium-'));
    const file = path.join(dir, 'chromium-as-user');
    const owner = `${runAs.uid}:${runAs.gid}`;
    const script = `#!/bin/sh
# Written by Switchboard (platform/browser/chromium.ts): runs chromium as ${owner}, not root.
set -e
profile=
for arg in "$@"; do
  case "$arg" in --user-data-dir=*) profile="\${arg#--user-data-dir=}" ;; esac
done
if [ -n "$profile" ]; then
  chown -R ${owner} "$profile"
  export HOME="$profile" XDG_CONFIG_HOME="$profile/.config" XDG_CACHE_HOME="$profile/.cache"
fi
exec setpriv --reuid=${runAs.uid} --regid=${runAs.gid} --clear-groups --no-new-privs --inh-caps=-all --bounding-set=-all -- ${JSON.stringify(executablePath)} "$@"
`;
    await writeFile(file, script, { mode: 0o700 });
    await chmod(file, 0o700);
    return file;
  })();
  wrappers.set(key, wrapper);
  wrapper.catch(() => wrappers.delete(key));
  return wrapper;
}

const isRoot = () => process.getuid?.() === 0;

/**
 * The one way Switchboard starts chromium (the browser built-in and cookie capture): headless,
 * quiet, every connection through the egress proxy, never as root (dropped to CHROMIUM_RUN_AS),
 * with the sandbox on. Where the kernel refuses the sandbox (no unprivileged user namespaces,
 * e.g. Docker's default seccomp profile) `auto` starts it without and logs a warning saying so;
 * `required` fails instead. Playwright's own signal handlers are off: the process owns shutdown.
 */
export async function launchChromium(options: ChromiumLaunchOptions): Promise<LaunchedChromium> {
  const found = findChromium(options.chromiumPath);
  if (!found) {
    throw new Error(
      `The browser is not available: no chromium at ${options.chromiumPath ?? CHROMIUM_CANDIDATES.join(' or ')} (set CHROMIUM_PATH).`,
    );
  }
  const root = isRoot();
  const executablePath = root ? await dropRootWrapper(found, options.runAs) : found;
  const uid = root ? options.runAs.uid : (process.getuid?.() ?? -1);
  const { chromium } = await import('playwright-core');
  const launch = (sandboxed: boolean) =>
    chromium.launch({
      executablePath,
      headless: true,
      timeout: 30_000,
      chromiumSandbox: sandboxed,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      args: [...QUIET_CHROMIUM_ARGS, ...egressArgs(options.proxyUrl), ...(options.extraArgs ?? [])],
    });
  try {
    const browser = await launch(true);
    options.logger.info({ executablePath: found, uid, sandbox: true }, 'chromium started');
    return { browser, sandboxed: true, uid };
  } catch (err) {
    if (options.sandbox === 'required' || !isSandboxFailure(err)) throw err;
    options.logger.warn(
      { executablePath: found, uid, reason: firstLine(err) },
      'chromium sandbox is OFF: this kernel or container refuses it (no unprivileged user namespaces). Pages run with only the process user as their boundary; see README "Docker". Set CHROMIUM_SANDBOX=required to refuse instead.',
    );
    const browser = await launch(false);
    return { browser, sandboxed: false, uid };
  }
}
