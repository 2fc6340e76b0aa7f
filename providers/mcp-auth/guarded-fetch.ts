import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import {
  type AllowedHost,
  addressKindText,
  classifyAddress,
  formatIp,
  isHostAllowListed,
  isRefusedHostname,
  normalizeHost,
  parseIp,
} from '../../core/network-policy.js';
import { ResponseTooLarge } from '../http.js';
import { capResponse } from '../response-cap.js';
import { McpAuthError } from './errors.js';

/** What a fetch of OAuth metadata, registration or tokens may reach and read. */
export interface EgressOptions {
  /**
   * Hosts (or host:port) the operator allows even at loopback or private addresses and over plain
   * http: an internal authorization server, or the tests' servers on 127.0.0.1.
   */
  allowedHosts?: readonly AllowedHost[];
  /** Bytes read from one answer before reading stops (a huge or endless document). */
  maxResponseBytes?: number;
  /** Milliseconds one request may take, headers and body. */
  timeoutMs?: number;
  /** Name resolution (tests put a rebinding resolver here). */
  lookup?: (host: string) => Promise<{ address: string; family: number }[]>;
}

export type GuardedFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** Metadata documents are a few kilobytes; a megabyte is generous and still harmless. */
export const DEFAULT_METADATA_MAX_BYTES = 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 15_000;

const defaultLookup = (host: string) => dnsLookup(host, { all: true, verbatim: true });

const refuse = (url: URL, why: string) => new McpAuthError('egress_refused', `Refused to fetch ${url.origin}${url.pathname}: ${why}`);

/** The URL checked for shape: http(s), no userinfo, https unless the operator allow-listed its host. */
export function checkUrlShape(raw: string | URL, options: Pick<EgressOptions, 'allowedHosts'>): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new McpAuthError('egress_refused', 'Refused to fetch a value that is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse(url, `only https URLs are used (not ${url.protocol})`);
  if (url.username || url.password) throw refuse(url, 'a URL with credentials in it is never used');
  if (url.protocol === 'http:' && !isAllowListed(url, options.allowedHosts)) {
    throw refuse(url, 'plain http is used only for hosts the operator allow-listed');
  }
  return url;
}

const portOf = (url: URL) => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);
const isAllowListed = (url: URL, allowed: readonly AllowedHost[] = []) => isHostAllowListed(allowed, url.hostname, portOf(url));

/** The address to connect to: every address the name has must be public, unless allow-listed. */
async function resolveAllowed(url: URL, options: EgressOptions): Promise<{ address: string; family: 4 | 6 }> {
  const host = normalizeHost(url.hostname);
  const allowListed = isAllowListed(url, options.allowedHosts);
  const literal = parseIp(host);
  if (literal) {
    const verdict = classifyAddress(literal);
    if (!verdict.allowed && !allowListed) throw refuse(url, `${formatIp(literal)} is ${addressKindText(verdict.kind)}`);
    return { address: formatIp(literal), family: literal.family };
  }
  if (!allowListed && isRefusedHostname(host)) throw refuse(url, `${host} is a cloud metadata host`);
  let addresses: { address: string; family: number }[];
  try {
    addresses = await (options.lookup ?? defaultLookup)(host);
  } catch (err) {
    throw new McpAuthError('metadata_unavailable', `${host} does not resolve (${(err as { code?: string }).code ?? 'DNS error'})`);
  }
  if (!addresses.length) throw new McpAuthError('metadata_unavailable', `${host} does not resolve`);
  if (!allowListed) {
    for (const { address } of addresses) {
      const verdict = classifyAddress(address);
      if (!verdict.allowed) throw refuse(url, `${host} resolves to ${address}, ${addressKindText(verdict.kind)}`);
    }
  }
  const chosen = addresses.find((a) => a.family === 4) ?? addresses[0];
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

function bodyBytes(body: RequestInit['body']): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof URLSearchParams) return Buffer.from(body.toString());
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('guarded fetch sends string, URLSearchParams or byte bodies only');
}

function toResponse(url: URL, method: string, res: IncomingMessage, maxBytes: number): Response {
  const headers = new Headers();
  for (let i = 0; i < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
  const status = res.statusCode ?? 502;
  const empty = method === 'HEAD' || status === 204 || status === 205 || status === 304;
  if (empty) res.resume();
  const response = new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
    status: status >= 200 && status <= 599 ? status : 502,
    statusText: res.statusMessage,
    headers,
  });
  Object.defineProperty(response, 'url', { value: url.href });
  try {
    return capResponse(response, maxBytes);
  } catch (err) {
    res.destroy();
    if (err instanceof ResponseTooLarge)
      throw new McpAuthError('response_too_large', `${url.origin}${url.pathname} answered more than ${maxBytes} bytes`);
    throw err;
  }
}

/**
 * A `fetch` for everything an upstream MCP server's metadata can name: each URL is checked (shape,
 * then every address its name resolves to), the connection goes to exactly the address checked (a
 * name cannot resolve one way for the check and another for the connection), redirects are never
 * followed (the caller sees the 3xx), and the body stops at `maxResponseBytes`.
 */
export function guardedFetch(options: EgressOptions = {}): GuardedFetch {
  const maxBytes = options.maxResponseBytes ?? DEFAULT_METADATA_MAX_BYTES;
  return async (input, init = {}) => {
    const url = checkUrlShape(input, options);
    const { address, family } = await resolveAllowed(url, options);
    const method = (init.method ?? 'GET').toUpperCase();
    const body = bodyBytes(init.body);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
    if (body && !headers['content-length']) headers['content-length'] = String(body.length);
    const signals = [AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS), ...(init.signal ? [init.signal] : [])];
    const signal = AbortSignal.any(signals);
    // The connection goes to the address that passed the policy, whatever DNS says now.
    const pinned: LookupFunction = (_host, opts, callback) => {
      if ((opts as { all?: boolean }).all)
        (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
      else callback(null, address, family);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<Response>((resolve, reject) => {
      const req = send(url, { method, headers, lookup: pinned, signal }, (res) => {
        try {
          resolve(toResponse(url, method, res, maxBytes));
        } catch (err) {
          reject(err);
        }
      });
      req.on('error', (err) => {
        if (err instanceof McpAuthError) reject(err);
        else if (signal.aborted) reject(new McpAuthError('metadata_unavailable', `${url.origin}${url.pathname} did not answer in time`));
        else
          reject(
            new McpAuthError(
              'metadata_unavailable',
              `${url.origin}${url.pathname} could not be reached (${(err as { code?: string }).code ?? err.message})`,
            ),
          );
      });
      req.end(body);
    });
  };
}
