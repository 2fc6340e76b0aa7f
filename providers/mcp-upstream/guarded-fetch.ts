import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
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
} from '../../core/network-policy.js';
import { capResponse } from '../response-cap.js';

/** The upstream's host is not one Switchboard may reach (loopback, private, metadata, …). */
export class UpstreamAddressRefused extends Error {
  readonly code = 'upstream_address_refused';
  constructor(reason: string) {
    super(`Switchboard does not connect to this upstream MCP server: ${reason} (an operator may allow it in UPSTREAM_MCP_ALLOWED_HOSTS)`);
    this.name = 'UpstreamAddressRefused';
  }
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/**
 * The check runs inside the socket's own name lookup, so the address judged is the address
 * connected to: a name that answers a public address for a check and 127.0.0.1 for the connection
 * (DNS rebinding) cannot get through.
 */
function checkedLookup(allowListed: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as LookupAddress[];
      if (!allowListed) {
        for (const { address } of list) {
          const verdict = classifyAddress(address);
          if (!verdict.allowed) {
            return callback(new UpstreamAddressRefused(`${hostname} resolves to ${address}, ${addressKindText(verdict.kind)}`), '', 0);
          }
        }
      }
      if (options.all) return callback(null, list);
      const chosen = list.find((a) => a.family === 4) ?? list[0];
      if (!chosen) return callback(new Error(`${hostname} does not resolve`), '', 0);
      callback(null, chosen.address, chosen.family);
    });
  };
}

/** Refuses before connecting when the URL names a refused address or metadata host. */
export function checkUpstreamHost(url: URL, allowed: readonly AllowedHost[]): { allowListed: boolean } {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UpstreamAddressRefused(`${url.protocol} is not http(s)`);
  const host = normalizeHost(url.hostname);
  const port = Number(url.port) || DEFAULT_PORTS[url.protocol];
  const allowListed = isHostAllowListed(allowed, host, port);
  if (allowListed) return { allowListed };
  if (isRefusedHostname(host)) throw new UpstreamAddressRefused(`${host} is a cloud metadata host`);
  const literal = parseIp(host);
  if (literal) {
    const verdict = classifyAddress(literal);
    if (!verdict.allowed) throw new UpstreamAddressRefused(describeRefusal(formatIp(literal), verdict.kind));
  }
  return { allowListed };
}

/**
 * A `fetch` for the MCP SDK's client transports that reaches only addresses the network policy
 * allows (or the operator allow-listed), follows no redirect (a 3xx is handed back as it is, and
 * the SDK stops there), and cuts every response body off at `maxBytes`.
 */
export function guardedFetch(options: { allowed: readonly AllowedHost[]; maxBytes: number }) {
  return async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input instanceof URL ? input.href : String(input));
    const { allowListed } = checkUpstreamHost(url, options.allowed);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
    const body = init.body == null ? undefined : typeof init.body === 'string' ? init.body : String(init.body);
    const lib = url.protocol === 'https:' ? https : http;
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = lib.request(
        url,
        { method: init.method ?? 'GET', headers, lookup: checkedLookup(allowListed), signal: init.signal ?? undefined },
        resolve,
      );
      req.on('error', reject);
      req.end(body);
    });
    const responseHeaders = new Headers();
    for (const [key, value] of Object.entries(res.headers)) {
      if (Array.isArray(value)) for (const v of value) responseHeaders.append(key, v);
      else if (value !== undefined) responseHeaders.set(key, value);
    }
    const status = res.statusCode ?? 502;
    const nullBody = status === 204 || status === 205 || status === 304 || init.method === 'HEAD';
    if (nullBody) res.resume();
    const response = new Response(nullBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
      status,
      statusText: res.statusMessage,
      headers: responseHeaders,
    });
    Object.defineProperty(response, 'url', { value: url.href });
    return capResponse(response, options.maxBytes);
  };
}
