import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HTTP_LIMITS, listen, type RunningServer } from '../../bin/support/listen.js';
import { startWorld } from '../support/harness.js';
import { rawRequest } from '../support/raw-http.js';

/**
 * Finding 12 (server timeouts). With `requestTimeout = 0`, a client that opens connections and
 * never finishes sending a request holds each one for good (slowloris): enough of them and the
 * server has no sockets left for anyone. Each test plays that client over raw TCP.
 */

const world = await startWorld({ env: { GITHUB_CLIENT_ID: 'gh-timeouts', GITHUB_CLIENT_SECRET: 'gh-timeouts-secret' } });
const { stack } = world;
const alice = await world.user();

/** Opens a connection to `url`, runs `feed` on it, and resolves with how long the server kept it open and what it said. */
function holdOpen(url: string, feed: (socket: Socket) => void, giveUpMs: number): Promise<{ closedAfterMs: number; said: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const started = Date.now();
    let said = '';
    const socket = connect(Number(port), hostname, () => feed(socket));
    const giveUp = setTimeout(() => socket.destroy(), giveUpMs);
    socket.on('data', (d) => {
      said += d;
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve({ closedAfterMs: Date.now() - started, said });
    });
  });
}

/** Writes `chunks` one every `everyMs` until the socket closes: a client that never finishes. */
function trickle(socket: Socket, first: string, next: () => string, everyMs: number) {
  socket.write(first);
  const timer = setInterval(() => socket.writable && socket.write(next()), everyMs);
  socket.on('close', () => clearInterval(timer));
}

describe('finding 12: HTTP server timeouts', () => {
  const bound = HTTP_LIMITS.headersTimeoutMs + 2 * HTTP_LIMITS.checkIntervalMs + 1_000;

  it('finding 12: a slowloris client that never finishes its headers is cut off', async () => {
    const { host } = new URL(stack.baseUrl);
    const result = await holdOpen(
      stack.baseUrl,
      (s) => trickle(s, `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n`, () => `X-Slow-${Date.now()}: a\r\n`, 500),
      30_000,
    );
    console.log(`[http-timeouts] headers never finished: closed after ${result.closedAfterMs} ms (${result.said.split('\r\n')[0]})`);
    expect(result.closedAfterMs).toBeLessThan(bound);
    expect(result.said).toMatch(/^HTTP\/1\.1 408/);
  }, 40_000);

  it('finding 12: a connection that never sends a byte is closed too', async () => {
    const result = await holdOpen(stack.baseUrl, () => {}, 30_000);
    expect(result.closedAfterMs).toBeLessThan(bound);
  }, 40_000);

  it('finding 12: a body sent a byte at a time is cut off at the request timeout, with 408', async () => {
    let server: RunningServer | undefined;
    try {
      // The real limits are 10 s / 30 s; the same code with short ones keeps this test short.
      server = await listen(stack.services, 0, { headersTimeoutMs: 500, requestTimeoutMs: 1_500, checkIntervalMs: 200 });
      // A second server of the same stack: it answers for the stack's PUBLIC_BASE_URL host.
      const { host } = new URL(stack.baseUrl);
      const head = `POST /v1/tools/list_integrations HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${alice.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`;
      const result = await holdOpen(server.url, (s) => trickle(s, head, () => ' ', 100), 20_000);
      expect(result.said).toMatch(/^HTTP\/1\.1 408/);
      expect(result.closedAfterMs).toBeLessThan(1_500 + 1_000);
    } finally {
      await server?.close();
    }
  });

  it('finding 12: a wait_for_connection that outlasts the request timeout still gets its answer (JSON API and MCP)', async () => {
    let server: RunningServer | undefined;
    try {
      server = await listen(stack.services, 0, { headersTimeoutMs: 500, requestTimeoutMs: 1_000, checkIntervalMs: 200 });
      const host = new URL(stack.baseUrl).host;
      const call = (path: string, body: unknown, extra: Record<string, string> = {}) =>
        rawRequest(`${server!.url}${path}`, {
          method: 'POST',
          headers: { host, authorization: `Bearer ${alice.apiKey}`, 'content-type': 'application/json', ...extra },
          body: JSON.stringify(body),
        });
      const connectionId = JSON.parse((await call('/v1/tools/connect', { integration: 'github' })).text).connectionId;
      const started = Date.now();
      const api = await call('/v1/tools/wait_for_connection', { connectionId, timeoutSec: 3 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
      expect(api.status, api.text).toBe(200);
      expect(JSON.parse(api.text)).toEqual({ status: 'TIMEOUT' });

      const second = JSON.parse((await call('/v1/tools/connect', { integration: 'github' })).text).connectionId;
      const mcp = await call(
        '/mcp',
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'wait_for_connection', arguments: { connectionId: second, timeoutSec: 3 } },
        },
        { accept: 'application/json, text/event-stream' },
      );
      expect(mcp.status, mcp.text).toBe(200);
      expect(mcp.text).toContain('TIMEOUT');
    } finally {
      await server?.close();
    }
  });
});
