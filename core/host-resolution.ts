import { lookup as dnsLookup } from 'node:dns/promises';
import {
  type AllowedHost,
  addressKindText,
  classifyAddress,
  describeRefusal,
  formatIp,
  isHostAllowListed,
  isRefusedHostname,
  normalizeHost,
  parseIp,
} from './network-policy.js';

/** Where a host may be reached: the address to connect to, or why not. */
export type Resolution = { ok: true; address: string; family: 4 | 6 } | Refusal;

/** Why not; `unresolved` when the name does not resolve at all (not a policy matter). */
export type Refusal = { ok: false; reason: string; unresolved?: true };

export type Lookup = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemLookup: Lookup = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * The network policy with DNS: a host is reachable when every address it resolves to is allowed
 * (network-policy.ts), or when the operator allow-listed it. Whoever connects must connect to
 * exactly the address answered, so a name cannot resolve one way for the check and another way
 * for the connection (DNS rebinding). Used by the browser's egress proxy and the guarded fetch.
 */
export async function resolveAllowedHost(
  rawHost: string,
  port: number,
  allowed: readonly AllowedHost[],
  lookup: Lookup = systemLookup,
): Promise<Resolution> {
  const host = normalizeHost(rawHost);
  const allowListed = isHostAllowListed(allowed, host, port);
  const literal = parseIp(host);
  if (literal) {
    const address = formatIp(literal);
    const verdict = classifyAddress(literal);
    if (!verdict.allowed && !allowListed) return { ok: false, reason: describeRefusal(address, verdict.kind) };
    return { ok: true, address, family: literal.family };
  }
  if (!allowListed && isRefusedHostname(host)) return { ok: false, reason: `${host} is a cloud metadata host` };
  let addresses: { address: string; family: number }[];
  try {
    addresses = await lookup(host);
  } catch (err) {
    return { ok: false, reason: `${host} does not resolve (${(err as { code?: string }).code ?? 'DNS error'})`, unresolved: true };
  }
  if (!addresses.length) return { ok: false, reason: `${host} does not resolve`, unresolved: true };
  if (!allowListed) {
    for (const { address } of addresses) {
      const verdict = classifyAddress(address);
      if (!verdict.allowed) return { ok: false, reason: `${host} resolves to ${address}, ${addressKindText(verdict.kind)}` };
    }
  }
  // Every address passed; IPv4 first, as not every network routes IPv6.
  const chosen = addresses.find((a) => a.family === 4) ?? addresses[0];
  return { ok: true, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
