import type { Config } from './config.js';
import { type AllowedHost, classifyAddress, isHostAllowListed, normalizeHost, parseIp } from './network-policy.js';

/**
 * Which names and web origins are this service's own. A browser's `Host` header carries the name
 * the page's script used, so a page that rebound its own name to our address (DNS rebinding) shows
 * up with a foreign Host; its `Origin` names the page that sent the request. Pure code: the
 * Host/Origin middleware (surfaces/http/host-origin-guard.ts) and the portal's cross-site check ask here.
 *
 * Ours: PUBLIC_BASE_URL's host and port; when that host is loopback, every loopback spelling
 * (localhost, 127.0.0.1, [::1]) on the same port, since `npm start` prints one and people type the
 * other; and the operator's ALLOWED_HOSTS (a name alone allows it on any port).
 */

type OwnConfig = Pick<Config, 'PUBLIC_BASE_URL' | 'ALLOWED_HOSTS'>;

/** host[:port] only: userinfo, a path or spaces are not a Host header a client sends. */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[^[\]/@?#\s:\\]+)(:\d{1,5})?$/i;
const LOOPBACK_SPELLINGS = ['localhost', '127.0.0.1', '::1'];
const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** True for `localhost` and loopback IP literals (127.0.0.0/8, ::1, bracketed or not). */
export function isLoopbackHost(host: string): boolean {
  const name = normalizeHost(host);
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  const ip = parseIp(name);
  if (!ip) return false;
  const verdict = classifyAddress(ip);
  return !verdict.allowed && verdict.kind === 'loopback';
}

interface Endpoint {
  protocol: string;
  host: string;
  port: number;
}

function endpointOf(url: URL): Endpoint {
  return { protocol: url.protocol, host: normalizeHost(url.hostname), port: Number(url.port) || DEFAULT_PORTS[url.protocol] };
}

/** PUBLIC_BASE_URL as an endpoint, plus its other loopback spellings when it is loopback. */
function baseEndpoints(config: OwnConfig): Endpoint[] {
  const base = endpointOf(new URL(config.PUBLIC_BASE_URL));
  if (!isLoopbackHost(base.host)) return [base];
  return [base, ...LOOPBACK_SPELLINGS.filter((h) => h !== base.host).map((host) => ({ ...base, host }))];
}

/**
 * Whether a request's Host header (`name`, `name:port`, `[v6]:port`) names this service. A Host
 * without a port means PUBLIC_BASE_URL's scheme default (what a TLS-terminating proxy forwards).
 */
export function isOwnHost(config: OwnConfig, hostHeader: string | undefined): boolean {
  if (!hostHeader || !HOST_HEADER.test(hostHeader)) return false;
  const protocol = new URL(config.PUBLIC_BASE_URL).protocol;
  let parsed: URL;
  try {
    parsed = new URL(`${protocol}//${hostHeader}`);
  } catch {
    return false;
  }
  return matches(config, endpointOf(parsed), { anyScheme: true });
}

/**
 * Whether a browser's Origin header names a page of this service (same scheme, host and port as
 * PUBLIC_BASE_URL or a loopback spelling of it, or a host in ALLOWED_HOSTS). `null` and anything
 * that is not an http(s) origin are never ours.
 */
export function isOwnOrigin(config: OwnConfig, origin: string | undefined): boolean {
  if (!origin || origin === 'null') return false;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (!(parsed.protocol in DEFAULT_PORTS) || parsed.origin !== origin.replace(/\/$/, '')) return false;
  return matches(config, endpointOf(parsed), { anyScheme: false });
}

function matches(config: OwnConfig, asked: Endpoint, { anyScheme }: { anyScheme: boolean }): boolean {
  const own = baseEndpoints(config).some(
    (e) => (anyScheme || e.protocol === asked.protocol) && sameHost(e.host, asked.host) && e.port === asked.port,
  );
  return own || isHostAllowListed(config.ALLOWED_HOSTS as AllowedHost[], asked.host, asked.port);
}

function sameHost(a: string, b: string): boolean {
  if (a === b) return true;
  const [ipA, ipB] = [parseIp(a), parseIp(b)];
  return !!ipA && !!ipB && ipA.family === ipB.family && ipA.bytes.every((byte, i) => byte === ipB.bytes[i]);
}

/**
 * Whether a Host header may reach the operator port (/metrics): an IP literal or `localhost`
 * (what Prometheus and probes use), or a name in ALLOWED_HOSTS. A rebound page always shows its
 * own DNS name, never an IP literal, so this refuses rebinding without knowing the scrape address.
 */
export function isOperatorHost(config: Pick<Config, 'ALLOWED_HOSTS'>, hostHeader: string | undefined): boolean {
  if (!hostHeader || !HOST_HEADER.test(hostHeader)) return false;
  let parsed: URL;
  try {
    parsed = new URL(`http://${hostHeader}`);
  } catch {
    return false;
  }
  const host = normalizeHost(parsed.hostname);
  if (host === 'localhost' || parseIp(host)) return true;
  return isHostAllowListed(config.ALLOWED_HOSTS as AllowedHost[], host, Number(parsed.port) || 80);
}
