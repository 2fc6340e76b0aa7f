import { type Lookup, type Refusal, type Resolution, resolveAllowedHost, systemLookup } from '../../core/host-resolution.js';
import { type AllowedHost, isHostAllowListed, normalizeHost, parseIp } from '../../core/network-policy.js';

export type { Lookup } from '../../core/host-resolution.js';

/**
 * Where a browser may go at all, before addresses: cookie capture's is the service's domains
 * (serviceOnlyEgressPolicy). Hosts outside it are refused whatever they resolve to; hosts inside
 * still need allowed addresses.
 */
interface HostScope {
  includes(host: string): boolean;
  /** Completes "<host> is not …", e.g. `one of news.ycombinator.com's hosts`. */
  description: string;
}

/**
 * The browser's network policy with DNS (core/host-resolution.ts), allow-listed by
 * BROWSER_ALLOWED_HOSTS. The egress proxy connects to exactly the address this answered, so a
 * name cannot resolve one way for the check and another way for the connection. With a scope,
 * hosts outside it are refused first (allow-listed entries are inside it). The browser built-in's is the open web
 * (`new EgressPolicy(BROWSER_ALLOWED_HOSTS)`); cookie capture's are the variants below.
 */
export class EgressPolicy {
  constructor(
    private readonly allowed: readonly AllowedHost[],
    private readonly lookup: Lookup = systemLookup,
    private readonly scope?: HostScope,
  ) {}

  async resolve(rawHost: string, port: number): Promise<Resolution> {
    const host = normalizeHost(rawHost);
    const allowListed = isHostAllowListed(this.allowed, host, port);
    if (this.scope && !allowListed && !this.scope.includes(host)) {
      return { ok: false, reason: `${host}:${port} is not ${this.scope.description}` };
    }
    return resolveAllowedHost(host, port, this.allowed, this.lookup);
  }

  /** Checks a URL the page wants: http or https, and a host `resolve` allows. */
  async checkUrl(url: string): Promise<{ ok: true } | Refusal> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { ok: false, reason: 'not a valid URL' };
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      return { ok: false, reason: `only http and https URLs may be opened (not ${parsed.protocol})` };
    }
    const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
    const resolution = await this.resolve(parsed.hostname, port);
    return resolution.ok ? { ok: true } : resolution;
  }
}

/** Hosts the remote browser may navigate its page to: the service's domain family and the login host. */
export function isServiceHost(host: string, serviceHost: string, loginHost: string): boolean {
  const h = host.toLowerCase();
  const d = serviceHost.toLowerCase();
  return h === loginHost.toLowerCase() || h === d || h.endsWith(`.${d}`) || (d.endsWith(`.${h}`) && h.includes('.'));
}

/** The service a capture browser signs in to. */
export interface ServiceHosts {
  loginUrl: string;
  /** The host whose cookies capture keeps. */
  cookieDomain: string;
  /** True when the operator set the login URL: its exact host and port may then be private. */
  loginUrlFromOperator: boolean;
}

/**
 * Where a capture browser may go: the service's domain family (its cookie domain, subdomains and
 * parent domain) at public addresses, and the login URL's exact host and port at any address
 * when the operator set that URL (a staging or test site on a private or loopback address).
 * Every connection of the session's context (each redirect hop, pop-up, frame, subresource and
 * socket) goes through a proxy holding this policy, so a redirect on the service's host cannot
 * send the server's browser to a metadata address, Temporal UI or /metrics.
 */
export function serviceOnlyEgressPolicy(service: ServiceHosts, lookup?: Lookup): EgressPolicy {
  const login = new URL(service.loginUrl);
  const loginHost = login.hostname.replace(/^\[|\]$/g, '');
  // An address has no domain family: `0.0.1` is not "a parent domain" of 127.0.0.1.
  const ipService = parseIp(service.cookieDomain) !== undefined;
  const scope: HostScope = {
    includes: (host) =>
      ipService
        ? host === normalizeHost(service.cookieDomain) || host === normalizeHost(loginHost)
        : isServiceHost(host, service.cookieDomain, loginHost),
    description: `one of the hosts of ${service.cookieDomain}, the service being signed in to`,
  };
  const trusted: AllowedHost[] = service.loginUrlFromOperator
    ? [{ host: loginHost, port: Number(login.port || (login.protocol === 'https:' ? 443 : 80)) }]
    : [];
  return new EgressPolicy(trusted, lookup, scope);
}

/**
 * Refuses everything ("<host> is not <purpose>"): the policy of a launch-wide proxy that no
 * connection should use, because every browser context names a proxy of its own.
 */
export function refuseAllEgressPolicy(purpose: string): EgressPolicy {
  return new EgressPolicy([], undefined, { includes: () => false, description: purpose });
}
