import { chmodSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LaunchedChromium, launchChromium } from '../../platform/browser/chromium.js';
import { EgressPolicy } from '../../platform/egress/egress-policy.js';
import { type EgressProxy, startEgressProxy } from '../../platform/egress/egress-proxy.js';

/**
 * Finding 5: chromium (the browser built-in's and cookie capture's, one launcher) never runs as
 * root and keeps its sandbox on. This machine runs the tests as root, so the launcher drops
 * chromium to CHROMIUM_RUN_AS (65534) and the kernel's unprivileged user namespaces give its
 * renderers the namespace + seccomp-bpf sandbox.
 */

const RUN_AS = { uid: 65534, gid: 65534 };
const lines: string[] = [];
const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });

let proxy: EgressProxy;
let launched: LaunchedChromium;

beforeAll(async () => {
  proxy = await startEgressProxy(new EgressPolicy([]), { maxResponseBytes: 1_000_000, maxTunnelBytes: 4_000_000 }, logger);
  launched = await launchChromium({
    chromiumPath: process.env.CHROMIUM_PATH,
    proxyUrl: proxy.url,
    runAs: RUN_AS,
    sandbox: 'required',
    logger,
  });
}, 90_000);

afterAll(async () => {
  await launched?.browser.close();
  await proxy?.close();
});

/** uid of every process whose command line names this browser's proxy (the browser and its children carry the flag). */
function chromiumProcesses(): { pid: number; uid: number; type: string }[] {
  const found: { pid: number; uid: number; type: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    let status: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      status = readFileSync(`/proc/${entry}/status`, 'utf8');
    } catch {
      continue;
    }
    const args = cmdline.split('\0');
    if (!args.includes(`--proxy-server=${proxy.url}`) && !args.some((a) => a.startsWith('--type='))) continue;
    const type = args.find((a) => a.startsWith('--type='))?.slice(7) ?? 'browser';
    if (type === 'browser' && !args.includes(`--proxy-server=${proxy.url}`)) continue;
    found.push({ pid: Number(entry), uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]), type });
  }
  return found;
}

describe('chromium sandbox (finding 5)', () => {
  it('finding 5: the shared launcher starts chromium as an unprivileged user with its sandbox on, even when Switchboard runs as root', async () => {
    expect(launched.sandboxed).toBe(true);
    const page = await launched.browser.newPage();
    await page.goto('chrome://sandbox');
    const text = (await page.locator('body').textContent()) ?? '';
    expect(text).toMatch(/Seccomp-BPF sandbox\s*Yes/);
    expect(text).toContain('You are adequately sandboxed.');
    await page.close();
    // No --no-sandbox anywhere, and the browser process is not root.
    const processes = chromiumProcesses();
    const browserProcess = processes.find((p) => p.type === 'browser');
    expect(browserProcess).toBeDefined();
    if (process.getuid?.() === 0) expect(browserProcess!.uid).toBe(RUN_AS.uid);
    else expect(browserProcess!.uid).toBe(process.getuid?.());
    const cmdline = readFileSync(`/proc/${browserProcess!.pid}/cmdline`, 'utf8').split('\0');
    expect(cmdline).not.toContain('--no-sandbox');
    expect(lines.join('')).toContain('"sandbox":true');
    expect(lines.join('')).not.toContain('sandbox is OFF');
  });

  it('finding 5: chromium dropped from root can never regain privileges (no_new_privs): a setuid binary in the image gives a compromised browser nothing', async () => {
    if (process.getuid?.() !== 0) return expect(launched.sandboxed).toBe(true);
    const browserProcess = chromiumProcesses().find((p) => p.type === 'browser');
    expect(browserProcess).toBeDefined();
    const status = readFileSync(`/proc/${browserProcess!.pid}/status`, 'utf8');
    expect(/^NoNewPrivs:\s+(\d)/m.exec(status)?.[1]).toBe('1');
    // Nor does it keep any capability of the root process that started it.
    expect(/^CapEff:\s+([0-9a-f]+)/m.exec(status)?.[1]).toMatch(/^0+$/);
    expect(/^CapBnd:\s+([0-9a-f]+)/m.exec(status)?.[1]).toMatch(/^0+$/);
  });

  it('finding 5: where the kernel refuses the sandbox, `auto` starts without it and warns; `required` refuses to start', async () => {
    // A chromium that behaves like one on a kernel without unprivileged user namespaces.
    const dir = mkdtempSync(path.join(tmpdir(), 'no-userns-'));
    chmodSync(dir, 0o755);
    const fake = path.join(dir, 'chromium');
    writeFileSync(
      fake,
      `#!/bin/sh
for a in "$@"; do [ "$a" = "--no-sandbox" ] && exec ${process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'} "$@"; done
echo "[FATAL:zygote_host_impl_linux.cc(128)] No usable sandbox! You are running on a kernel without user namespaces." >&2
exit 1
`,
    );
    chmodSync(fake, 0o755);
    const warned: string[] = [];
    const quiet = pino({ level: 'info' }, { write: (line: string) => void warned.push(line) });
    await expect(
      launchChromium({ chromiumPath: fake, proxyUrl: proxy.url, runAs: RUN_AS, sandbox: 'required', logger: quiet }),
    ).rejects.toThrow(/sandbox/i);
    const fallback = await launchChromium({ chromiumPath: fake, proxyUrl: proxy.url, runAs: RUN_AS, sandbox: 'auto', logger: quiet });
    try {
      expect(fallback.sandboxed).toBe(false);
      expect(warned.join('')).toContain('chromium sandbox is OFF');
      expect(JSON.parse(warned.find((l) => l.includes('sandbox is OFF'))!).level).toBe(40);
    } finally {
      await fallback.browser.close();
    }
  }, 90_000);
});
