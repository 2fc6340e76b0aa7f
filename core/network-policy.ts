/**
 * Which network addresses the built-in browser may reach. Pure code: the caller resolves names
 * (node:dns) and asks here about every address, so a name that resolves to a loopback, private,
 * link-local or metadata address is refused like the address itself.
 *
 * Refused: loopback, private (RFC 1918, CGNAT 100.64/10, IPv6 unique-local fc00::/7), link-local
 * (169.254/16, fe80::/10), unspecified, multicast, broadcast, documentation, benchmarking and
 * reserved ranges, IPv6 outside global unicast (2000::/3), and the cloud metadata endpoints. IPv4
 * inside IPv6 (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16)
 * is judged as the IPv4 address it carries. An operator's allow-list (hosts or host:port) lifts
 * the refusal for the hosts it names.
 */

type AddressKind = 'loopback' | 'private' | 'carrier-grade NAT' | 'link-local' | 'unspecified' | 'multicast' | 'metadata' | 'reserved';

type AddressVerdict = { allowed: true } | { allowed: false; kind: AddressKind };

interface ParsedIp {
  family: 4 | 6;
  /** 4 or 16 bytes, network order. */
  bytes: Uint8Array;
}

/** Host names refused before any lookup: cloud metadata services. */
const METADATA_HOSTNAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** Lower case, no brackets around an IPv6 literal, no trailing dot. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  while (h.endsWith('.') && h.length > 1) h = h.slice(0, -1);
  return h;
}

/**
 * An IPv4 address in any form the WHATWG URL parser and inet_aton accept: dotted decimal, one to
 * four parts, each decimal, hex (`0x7f`) or octal (`0177`) — `2130706433`, `0x7f.1` and
 * `127.1` are all 127.0.0.1. Undefined when `text` is not such a number.
 */
export function parseIPv4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 0 || parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    let value: number;
    if (/^0[xX][0-9a-fA-F]*$/.test(part)) value = part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) value = Number.parseInt(part.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(part)) value = Number(part);
    else return undefined;
    if (!Number.isSafeInteger(value)) return undefined;
    numbers.push(value);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255)) return undefined;
  if (last >= 256 ** (4 - numbers.length)) return undefined;
  let value = last;
  numbers.forEach((n, i) => {
    value += n * 256 ** (3 - i);
  });
  return Uint8Array.of((value >>> 24) & 255, (value >>> 16) & 255, (value >>> 8) & 255, value & 255);
}

/** An IPv6 address (optionally in brackets, with a zone id, or ending in dotted IPv4). */
function parseIPv6(text: string): Uint8Array | undefined {
  let s = text;
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(':') || !/^[0-9a-fA-F:.]+$/.test(s)) return undefined;
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string): number[] | undefined => {
    if (part === '') return [];
    const groups: number[] = [];
    const pieces = part.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i];
      if (i === pieces.length - 1 && piece.includes('.')) {
        // Only strict dotted-quad here: `::ffff:0x7f.1` is not an address.
        if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(piece)) return undefined;
        const v4 = piece.split('.').map(Number);
        if (v4.some((n) => n > 255)) return undefined;
        groups.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return undefined;
        groups.push(Number.parseInt(piece, 16));
      }
    }
    return groups;
  };
  const head = groupsOf(halves[0]);
  const tail = halves.length === 2 ? groupsOf(halves[1]) : [];
  if (!head || !tail) return undefined;
  let groups: number[];
  if (halves.length === 2) {
    const missing = 8 - head.length - tail.length;
    if (missing < 1) return undefined;
    groups = [...head, ...new Array(missing).fill(0), ...tail];
  } else {
    groups = head;
  }
  if (groups.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 255;
  });
  return bytes;
}

/** An IP literal in any accepted form, or undefined for a host name. */
export function parseIp(text: string): ParsedIp | undefined {
  const host = normalizeHost(text);
  const v4 = parseIPv4(host);
  if (v4) return { family: 4, bytes: v4 };
  const v6 = parseIPv6(host);
  if (v6) return { family: 6, bytes: v6 };
  return undefined;
}

/** The canonical text of an address: dotted quad, or compressed lower-case IPv6. */
export function formatIp(ip: ParsedIp): string {
  if (ip.family === 4) return [...ip.bytes].join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((ip.bytes[i] << 8) | ip.bytes[i + 1]);
  // Longest run of two or more zero groups becomes `::`.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

const inV4 = (b: Uint8Array, prefix: readonly number[], bits: number): boolean => {
  for (let i = 0; i < 4 && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 255 : (255 << (8 - bits)) & 255;
    if ((b[i] & mask) !== (prefix[i] & mask)) return false;
  }
  return true;
};

function classifyIPv4(b: Uint8Array): AddressVerdict {
  const refuse = (kind: AddressKind): AddressVerdict => ({ allowed: false, kind });
  if (inV4(b, [169, 254, 169, 254], 32) || inV4(b, [168, 63, 129, 16], 32) || inV4(b, [100, 100, 100, 200], 32)) {
    return refuse('metadata');
  }
  if (inV4(b, [0, 0, 0, 0], 32)) return refuse('unspecified');
  if (inV4(b, [0, 0, 0, 0], 8)) return refuse('unspecified'); // "this network"
  if (inV4(b, [127, 0, 0, 0], 8)) return refuse('loopback');
  if (inV4(b, [10, 0, 0, 0], 8) || inV4(b, [172, 16, 0, 0], 12) || inV4(b, [192, 168, 0, 0], 16)) return refuse('private');
  if (inV4(b, [100, 64, 0, 0], 10)) return refuse('carrier-grade NAT');
  if (inV4(b, [169, 254, 0, 0], 16)) return refuse('link-local');
  if (inV4(b, [224, 0, 0, 0], 4)) return refuse('multicast');
  if (
    inV4(b, [192, 0, 0, 0], 24) || // IETF protocol assignments
    inV4(b, [192, 0, 2, 0], 24) || // documentation
    inV4(b, [192, 88, 99, 0], 24) || // 6to4 relay anycast
    inV4(b, [198, 18, 0, 0], 15) || // benchmarking
    inV4(b, [198, 51, 100, 0], 24) ||
    inV4(b, [203, 0, 113, 0], 24) ||
    inV4(b, [240, 0, 0, 0], 4) // reserved, and 255.255.255.255 broadcast
  ) {
    return refuse('reserved');
  }
  return { allowed: true };
}

function classifyIPv6(b: Uint8Array): AddressVerdict {
  const refuse = (kind: AddressKind): AddressVerdict => ({ allowed: false, kind });
  const zeroUpTo = (n: number) => b.subarray(0, n).every((x) => x === 0);
  const starts = (...prefix: number[]) => prefix.every((x, i) => b[i] === x);
  // fd00:ec2::254, AWS's IPv6 metadata endpoint.
  if (starts(0xfd, 0x00, 0x0e, 0xc2) && b.subarray(4, 14).every((x) => x === 0) && b[14] === 0x02 && b[15] === 0x54) {
    return refuse('metadata');
  }
  if (zeroUpTo(16)) return refuse('unspecified');
  if (zeroUpTo(15) && b[15] === 1) return refuse('loopback');
  // IPv4-mapped ::ffff:a.b.c.d and the deprecated IPv4-compatible ::a.b.c.d.
  if (zeroUpTo(10) && b[10] === 0xff && b[11] === 0xff) return classifyIPv4(b.subarray(12));
  if (zeroUpTo(12)) return classifyIPv4(b.subarray(12));
  // NAT64 64:ff9b::/96 carries the IPv4 address it reaches.
  if (starts(0x00, 0x64, 0xff, 0x9b) && b.subarray(4, 12).every((x) => x === 0)) return classifyIPv4(b.subarray(12));
  if ((b[0] & 0xfe) === 0xfc) return refuse('private'); // unique-local fc00::/7
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0x80) return refuse('link-local'); // fe80::/10
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0xc0) return refuse('private'); // site-local fec0::/10 (deprecated)
  if (b[0] === 0xff) return refuse('multicast');
  if ((b[0] & 0xe0) !== 0x20) return refuse('reserved'); // outside global unicast 2000::/3
  // 6to4 2002:a.b.c.d::/48 reaches the IPv4 address it embeds.
  if (starts(0x20, 0x02)) return classifyIPv4(b.subarray(2, 6));
  if (starts(0x20, 0x01, 0x0d, 0xb8)) return refuse('reserved'); // documentation
  if (starts(0x20, 0x01, 0x00, 0x00)) return refuse('reserved'); // Teredo
  return { allowed: true };
}

/** Whether the browser may connect to this address (any accepted IPv4 or IPv6 form). */
export function classifyAddress(address: string | ParsedIp): AddressVerdict {
  const ip = typeof address === 'string' ? parseIp(address) : address;
  if (!ip) return { allowed: false, kind: 'reserved' };
  return ip.family === 4 ? classifyIPv4(ip.bytes) : classifyIPv6(ip.bytes);
}

export const isAddressAllowed = (address: string): boolean => classifyAddress(address).allowed;

/** True for names refused without a lookup (cloud metadata services). */
export const isRefusedHostname = (host: string): boolean => METADATA_HOSTNAMES.has(normalizeHost(host));

/** One entry of BROWSER_ALLOWED_HOSTS: a host, with a port when the entry names one. */
export interface AllowedHost {
  host: string;
  port?: number;
}

/**
 * Parses `host,host:port,[::1]:8080` (spaces allowed). IP hosts are kept in canonical form so
 * `[::1]` and `0:0::1` name the same host. Throws an Error naming the bad entry.
 */
export function parseAllowedHosts(text: string): AllowedHost[] {
  const entries: AllowedHost[] = [];
  for (const raw of text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    let host = raw;
    let port: string | undefined;
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw);
    if (bracketed) {
      host = bracketed[1];
      port = bracketed[2];
    } else if ((raw.match(/:/g) ?? []).length === 1) {
      [host, port] = raw.split(':');
    }
    const portNumber = port === undefined ? undefined : Number(port);
    const ip = parseIp(host);
    const validName = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(host);
    if ((!ip && !validName) || (port !== undefined && (!/^\d{1,5}$/.test(port) || portNumber! < 1 || portNumber! > 65535))) {
      throw new Error(`expected comma-separated hostnames or host:port, got "${raw.slice(0, 60)}"`);
    }
    entries.push({ host: ip ? formatIp(ip) : normalizeHost(host), ...(portNumber !== undefined && { port: portNumber }) });
  }
  return entries;
}

/** Whether the operator allowed `host` (as written in the URL) on `port`. */
export function isHostAllowListed(allowed: readonly AllowedHost[], host: string, port: number): boolean {
  if (!allowed.length) return false;
  const ip = parseIp(host);
  const name = ip ? formatIp(ip) : normalizeHost(host);
  return allowed.some((entry) => entry.host === name && (entry.port === undefined || entry.port === port));
}

/** `a loopback address`, `a cloud metadata address`, … for error messages. */
export function addressKindText(kind: AddressKind): string {
  return kind === 'metadata' ? 'a cloud metadata address' : kind === 'unspecified' ? 'an unspecified address' : `a ${kind} address`;
}

/** Why an address is refused, for error messages: `127.0.0.1 is a loopback address`. */
export const describeRefusal = (address: string, kind: AddressKind): string => `${address} is ${addressKindText(kind)}`;
