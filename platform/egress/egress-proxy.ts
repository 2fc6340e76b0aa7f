import { EventEmitter } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { EgressPolicy } from './egress-policy.js';

/** Set on the proxy's refusals (and stripped from upstream answers), so the engine can tell them apart. */
export const REFUSED_HEADER = 'x-switchboard-refused';

/** Headers that describe one hop, never forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
  REFUSED_HEADER,
]);

/** A response (plain HTTP) or a tunnel (HTTPS, WebSocket) the proxy cut for its size. */
export interface OversizeEvent {
  /** `host:port`, port always present. */
  authority: string;
  /** Plain HTTP: the URL of the response. */
  url?: string;
  /** Bytes seen (or declared) when it was cut. */
  bytes: number;
}

export interface EgressProxy {
  /** `http://127.0.0.1:<port>`, for chromium's --proxy-server. */
  url: string;
  /** Emits `oversize` with an OversizeEvent. */
  events: EventEmitter;
  close(): Promise<void>;
}

export interface EgressProxyOptions {
  /** A plain HTTP response larger than this (declared or streamed) is cut. */
  maxResponseBytes: number;
  /** An HTTPS or WebSocket tunnel that carries more than this (all its responses together) is cut. */
  maxTunnelBytes: number;
}

/** `host:port` of a URL, with the scheme's default port spelled out. */
export function authorityOf(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80)}`;
}

/** `host:port` or `[v6]:port` of a CONNECT request. */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  const port = Number(match[3]);
  return port >= 1 && port <= 65535 ? { host: match[1] ?? match[2], port } : undefined;
}

const headerSafe = (text: string) => encodeURIComponent(text).slice(0, 500);

/**
 * A local forward proxy every chromium connection goes through (plain HTTP, and CONNECT for
 * HTTPS and WebSockets). It asks the policy about the target host, then connects to exactly the
 * address the policy resolved and checked: redirects, subresources, preconnects and sockets the
 * page's own `page.route` never sees are held to the same rule, and DNS cannot rebind in between.
 * It also stops oversized downloads at network speed, before chromium buffers them.
 */
export async function startEgressProxy(
  policy: EgressPolicy,
  options: EgressProxyOptions,
  logger: Pick<Logger, 'debug' | 'warn'>,
): Promise<EgressProxy> {
  const sockets = new Set<Duplex>();
  const events = new EventEmitter();
  const server = http.createServer();
  const oversize = (event: OversizeEvent) => {
    logger.debug(event, 'browser download cut for its size');
    events.emit('oversize', event);
  };
  const proxy: ProxyContext = { policy, options, logger, sockets, oversize };

  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_err, socket) => socket.destroy());

  server.on('request', (req, res) => forwardRequest(proxy, req, res));

  server.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => tunnel(proxy, req, client, head));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.on('error', (err) => logger.warn({ err: err.message }, 'browser egress proxy error'));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    events,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** CONNECT names IPv6 hosts without brackets once parsed; URLs keep them. */
const normalizeBracket = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/** What the proxy's two handlers share. */
interface ProxyContext {
  policy: EgressPolicy;
  options: EgressProxyOptions;
  logger: Pick<Logger, 'debug' | 'warn'>;
  /** Every open socket, so close() ends them all. */
  sockets: Set<Duplex>;
  oversize(event: OversizeEvent): void;
}

/** A plain-HTTP request: forwarded to the address the policy resolved, its answer cut at the size bound. */
async function forwardRequest(proxy: ProxyContext, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  let target: URL;
  try {
    target = new URL(req.url ?? '');
  } catch {
    res.writeHead(400).end();
    return;
  }
  if (target.protocol !== 'http:') {
    res.writeHead(400).end();
    return;
  }
  const port = target.port ? Number(target.port) : 80;
  const resolution = await proxy.policy.resolve(target.hostname, port);
  if (!resolution.ok) {
    proxy.logger.debug({ host: target.host, reason: resolution.reason }, 'browser egress refused');
    res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', [REFUSED_HEADER]: headerSafe(resolution.reason) });
    res.end(`Switchboard refused ${target.host}: ${resolution.reason}\n`);
    return;
  }
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
  const url = target.href;
  const authority = authorityOf(target);
  const upstream = http.request(
    {
      host: resolution.address,
      family: resolution.family,
      port,
      method: req.method,
      path: `${target.pathname}${target.search}`,
      headers,
      setHost: false,
      agent: false,
    },
    (answer) => {
      const declared = Number(answer.headers['content-length']);
      if (declared > proxy.options.maxResponseBytes) {
        answer.destroy();
        proxy.oversize({ authority, url, bytes: declared });
        res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' }).end('Response too large\n');
        return;
      }
      const raw: string[] = [];
      for (let i = 0; i < answer.rawHeaders.length; i += 2) {
        if (!HOP_BY_HOP.has(answer.rawHeaders[i].toLowerCase())) raw.push(answer.rawHeaders[i], answer.rawHeaders[i + 1]);
      }
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, raw);
      let bytes = 0;
      // Registered before pipe: an oversized chunk is never written.
      answer.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > proxy.options.maxResponseBytes) {
          answer.unpipe(res);
          answer.destroy();
          res.destroy();
          proxy.oversize({ authority, url, bytes });
        }
      });
      answer.pipe(res);
      answer.once('error', () => res.destroy());
    },
  );
  upstream.once('error', (err) => {
    if (res.headersSent) res.destroy();
    else res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' }).end(`Bad gateway: ${err.message}\n`);
  });
  res.once('close', () => upstream.destroy());
  req.pipe(upstream);
}

/** A CONNECT (HTTPS, WebSockets): a tunnel to the address the policy resolved, cut at the tunnel's size bound. */
async function tunnel(proxy: ProxyContext, req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
  client.once('error', () => client.destroy());
  const target = parseAuthority(req.url ?? '');
  if (!target) {
    client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    return;
  }
  const resolution = await proxy.policy.resolve(target.host, target.port);
  if (!resolution.ok) {
    proxy.logger.debug({ host: req.url, reason: resolution.reason }, 'browser egress refused');
    client.end(`HTTP/1.1 403 Forbidden\r\n${REFUSED_HEADER}: ${headerSafe(resolution.reason)}\r\ncontent-length: 0\r\n\r\n`);
    return;
  }
  if (client.destroyed) return;
  const upstream = net.connect({ host: resolution.address, family: resolution.family, port: target.port });
  proxy.sockets.add(upstream);
  let connected = false;
  let bytes = 0;
  upstream.once('connect', () => {
    connected = true;
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) upstream.write(head);
    upstream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > proxy.options.maxTunnelBytes) {
        upstream.destroy();
        client.destroy();
        proxy.oversize({ authority: `${normalizeBracket(target.host)}:${target.port}`, bytes });
      }
    });
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.once('error', () => {
    if (!connected && !client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
    else client.destroy();
  });
  upstream.once('close', () => {
    proxy.sockets.delete(upstream);
    client.destroy();
  });
  client.once('close', () => upstream.destroy());
}
