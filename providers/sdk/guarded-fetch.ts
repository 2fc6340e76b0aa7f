import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { type Lookup, resolveAllowedHost } from '../../core/host-resolution.js';
import { type AllowedHost, isHostAllowListed, normalizeHost } from '../../core/network-policy.js';
import { ResponseTooLarge } from './http.js';
import { capResponse } from './response-cap.js';

/**
 * The errors a guarded fetch fails with: each caller keeps its own (mcp-upstream's
 * UpstreamAddressRefused, mcp-auth's McpAuthError codes), the rules are the same for both.
 */
export interface EgressErrors {
  /** The network policy refused the URL; `why` names the rule. */
  refused(why: string, url?: URL): Error;
  /** The name did not resolve, the connection failed, or no answer came in time (`message` says which). */
  unreachable(message: string, url: URL): Error;
  /** The answer declared more bytes than are read. */
  tooLarge(maxBytes: number, url: URL): Error;
  /**
   * The connection broke after it was made, before an answer came: the request may have reached
   * the server. Without it, such a failure is `unreachable` too.
   */
  lost?(message: string, url: URL): Error;
}

/** What a guarded fetch may reach and read. */
export interface EgressOptions {
  /**
   * Hosts (or host:port) the operator allows even at loopback or private addresses and over plain
   * http (UPSTREAM_MCP_ALLOWED_HOSTS, an internal authorization server, the tests' 127.0.0.1).
   */
  allowedHosts?: readonly AllowedHost[];
  /** Bytes read from one answer before reading stops (a huge or endless document). */
  maxResponseBytes?: number;
  /**
   * Milliseconds one request may take, headers and body. `null`: no deadline of its own, for
   * answers that are long-lived streams (an MCP session's SSE); the caller's signal still applies.
   */
  timeoutMs?: number | null;
  /** Name resolution (tests put a rebinding resolver here). */
  lookup?: Lookup;
}

export type GuardedFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

const DEFAULT_TIMEOUT_MS = 15_000;

const portOf = (url: URL) => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);
const isAllowListed = (url: URL, allowed: readonly AllowedHost[] = []) =>
  isHostAllowListed(allowed, normalizeHost(url.hostname), portOf(url));
const PLAIN_HTTP = 'plain http is used only for hosts the operator allow-listed';

/** An http(s) URL without credentials in it; anything else is refused. */
function parseHttpUrl(raw: string | URL, errors: EgressErrors): URL {
  let url: URL;
  try {
    url = new URL(raw instanceof URL ? raw.href : raw);
  } catch {
    throw errors.refused('not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw errors.refused(`only https URLs are used (not ${url.protocol})`, url);
  if (url.username || url.password) throw errors.refused('a URL with credentials in it is never used', url);
  return url;
}

/** The URL checked for shape: http(s), no userinfo, https unless the operator allow-listed its host. */
export function checkUrlShape(raw: string | URL, allowedHosts: readonly AllowedHost[] | undefined, errors: EgressErrors): URL {
  const url = parseHttpUrl(raw, errors);
  if (url.protocol === 'http:' && !isAllowListed(url, allowedHosts)) throw errors.refused(PLAIN_HTTP, url);
  return url;
}

/**
 * The address to connect to (core/host-resolution.ts). Plain http off the allow-list is refused
 * too, after the address checks, so a name that resolves to loopback is reported as that rather
 * than as plain http.
 */
async function resolveAllowed(url: URL, options: EgressOptions, errors: EgressErrors): Promise<{ address: string; family: 4 | 6 }> {
  const allowed = options.allowedHosts ?? [];
  const plainHttpRefused = url.protocol === 'http:' && !isAllowListed(url, allowed);
  const resolution = await resolveAllowedHost(url.hostname, portOf(url), allowed, options.lookup);
  if (plainHttpRefused && (resolution.ok || resolution.unresolved)) throw errors.refused(PLAIN_HTTP, url);
  if (!resolution.ok) throw resolution.unresolved ? errors.unreachable(resolution.reason, url) : errors.refused(resolution.reason, url);
  return resolution;
}

function bodyBytes(body: RequestInit['body']): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof URLSearchParams) return Buffer.from(body.toString());
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('guarded fetch sends string, URLSearchParams or byte bodies only');
}

function toResponse(url: URL, method: string, res: IncomingMessage, maxBytes: number, errors: EgressErrors): Response {
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
    if (err instanceof ResponseTooLarge) throw errors.tooLarge(maxBytes, url);
    throw err;
  }
}

/**
 * A `fetch` for everything a remote MCP server (or its metadata) can name: each URL is checked
 * (shape, then every address its name resolves to), the connection goes to exactly the address
 * checked (a name cannot resolve one way for the check and another for the connection: DNS
 * rebinding), redirects are never followed (the caller sees the 3xx), and the body stops at
 * `maxResponseBytes`.
 */
export function guardedFetch(options: EgressOptions & { maxResponseBytes: number; errors: EgressErrors }): GuardedFetch {
  const { errors, maxResponseBytes } = options;
  const timeoutMs = options.timeoutMs === undefined ? DEFAULT_TIMEOUT_MS : options.timeoutMs;
  return async (input, init = {}) => {
    const url = parseHttpUrl(input, errors);
    const { address, family } = await resolveAllowed(url, options, errors);
    const method = (init.method ?? 'GET').toUpperCase();
    const body = bodyBytes(init.body);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
    if (body && !headers['content-length']) headers['content-length'] = String(body.length);
    const signals = [...(timeoutMs === null ? [] : [AbortSignal.timeout(timeoutMs)]), ...(init.signal ? [init.signal] : [])];
    const signal = signals.length ? AbortSignal.any(signals) : undefined;
    // The connection goes to the address that passed the policy, whatever DNS says now.
    const pinned: LookupFunction = (_host, opts, callback) => {
      if ((opts as { all?: boolean }).all)
        (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
      else callback(null, address, family);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<Response>((resolve, reject) => {
      // Once connected (a reused keep-alive socket is), the request may be on its way to the server.
      let connected = false;
      const req = send(url, { method, headers, lookup: pinned, signal }, (res) => {
        try {
          resolve(toResponse(url, method, res, maxResponseBytes, errors));
        } catch (err) {
          reject(err);
        }
      });
      req.on('error', (err) => {
        // The caller's own abort is the caller's to recognise: its error goes back unchanged.
        if (init.signal?.aborted) reject(err);
        else if (signal?.aborted) reject(errors.unreachable(`${url.origin}${url.pathname} did not answer in time`, url));
        else {
          const why = (err as { code?: string }).code ?? err.message;
          if (connected && errors.lost)
            reject(errors.lost(`the connection to ${url.origin}${url.pathname} broke before it answered (${why})`, url));
          else reject(errors.unreachable(`${url.origin}${url.pathname} could not be reached (${why})`, url));
        }
      });
      req.once('socket', (socket) => {
        const ready = 'encrypted' in socket ? 'secureConnect' : 'connect';
        if (!socket.connecting) connected = true;
        else
          socket.once(ready, () => {
            connected = true;
          });
      });
      req.end(body);
    });
  };
}
