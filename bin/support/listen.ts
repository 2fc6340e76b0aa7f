import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceContext } from '../../features/context.js';
import { createApp } from '../../surfaces/http/app.js';
import { createOperatorApp } from '../../surfaces/operator/operator-app.js';

/**
 * The HTTP server's limits. Node measures `requestTimeout` and `headersTimeout` while it *receives*
 * a request (headers, then body); once the request is in, the response may take as long as it
 * needs. So a `wait_for_connection` of up to 900 s, or an MCP answer streamed over SSE for
 * minutes, is not cut by them — only a client that is slow to *send* is. For the same reason no
 * socket inactivity timeout (`server.timeout`) is set: a JSON API wait sends nothing for minutes.
 */
export const HTTP_LIMITS = {
  /** Headers must arrive within this (a slowloris never finishes them; a real client sends them in one packet). */
  headersTimeoutMs: 10_000,
  /** The whole request, body included (bodies are at most 4 MB: 30 s is ~140 kB/s). */
  requestTimeoutMs: 30_000,
  /** An idle kept-alive connection closes after this; above load balancers' usual 60 s, so they close first. */
  keepAliveTimeoutMs: 65_000,
  /** How often Node checks the two timeouts above; its default (30 s) would let a 10 s limit run to 40 s. */
  checkIntervalMs: 1_000,
  /** Node's default, written down so a change of default does not raise it. */
  maxHeaderSize: 16 * 1024,
} as const;

export type HttpLimits = { -readonly [K in keyof typeof HTTP_LIMITS]: number };

export interface RunningServer {
  server: Server;
  url: string;
  /** The operator port (/metrics, /healthz, /readyz) when METRICS_PORT is set. */
  operator?: { server: Server; url: string };
  close(): Promise<void>;
}

/**
 * Serves the app on HOST:PORT (PORT 0 picks a free port, for tests), and the operator app on
 * METRICS_HOST:METRICS_PORT when that is set. `limits` overrides HTTP_LIMITS (tests only).
 */
export async function listen(ctx: ServiceContext, port = ctx.config.PORT, limits: Partial<HttpLimits> = {}): Promise<RunningServer> {
  const server = limitedServer(createApp(ctx), { ...HTTP_LIMITS, ...limits }, ctx.config.HTTP_MAX_CONNECTIONS);
  const actualPort = await bind(server, port, ctx.config.HOST);
  ctx.logger.info({ port: actualPort }, 'HTTP server listening');
  const operator = ctx.config.METRICS_PORT ? await listenOperator(ctx) : undefined;
  return {
    server,
    url: `http://${urlHost(ctx.config.HOST)}:${actualPort}`,
    operator,
    close: async () => {
      await Promise.all([stop(server), operator && stop(operator.server)]);
    },
  };
}

/** The operator port alone (a worker process): /metrics, /healthz and /readyz on METRICS_HOST:METRICS_PORT. */
export async function listenOperator(ctx: ServiceContext, port = ctx.config.METRICS_PORT ?? 0): Promise<{ server: Server; url: string }> {
  const server = limitedServer(createOperatorApp(ctx), HTTP_LIMITS, 100);
  const actualPort = await bind(server, port, ctx.config.METRICS_HOST);
  const url = `http://${urlHost(ctx.config.METRICS_HOST)}:${actualPort}`;
  ctx.logger.info({ port: actualPort, url: `${url}/metrics` }, 'operator port listening (metrics, health)');
  return { server, url };
}

function limitedServer(app: ReturnType<typeof createApp>, limits: HttpLimits, maxConnections: number): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
      maxHeaderSize: limits.maxHeaderSize,
    },
    app,
  );
  server.maxConnections = maxConnections;
  // Node starts headersTimeout at a request's first byte: a connection that never sends one would
  // stay open for good. Give it the same time to start, and lift that once a request has arrived.
  server.on('connection', (socket) => socket.setTimeout(limits.headersTimeoutMs));
  server.on('request', (req) => req.socket.setTimeout(0));
  return server;
}

async function bind(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return (server.address() as AddressInfo).port;
}

const urlHost = (host: string) => (host.includes(':') ? `[${host}]` : host);

const stop = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
