import { existsSync } from 'node:fs';

/** Where Debian (and most distributions) install chromium. */
export const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The configured chromium, else the first one installed; undefined when there is none. */
export function findChromium(configured?: string): string | undefined {
  if (configured) return existsSync(configured) ? configured : undefined;
  return CHROMIUM_CANDIDATES.find((p) => existsSync(p));
}

/**
 * Flags every chromium Switchboard starts shares: no GPU, no QUIC, and none of chromium's own
 * background traffic (updates, sync, metrics) — a server browser talks only to the pages it is
 * sent to. The sandbox cannot start as root (containers); elsewhere it stays on.
 */
export const QUIET_CHROMIUM_ARGS = [
  ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
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
