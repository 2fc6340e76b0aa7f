import { createServer, request, type Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { conformanceTools, runConformance } from '../support/conformance.js';
import { createTestUser, startStack, startWorld } from '../support/harness.js';
import { freePort } from '../support/ports.js';
import { rawRequest } from '../support/raw-http.js';

/**
 * Finding 10 (DNS rebinding). Mallory's page at http://rebind.test:<port>/ re-resolves its own
 * name to 127.0.0.1 and then calls "its own" origin: the browser sends Mallory's name as Host,
 * and with CODEC_AUTH=none (what `npm start` sets) the codec endpoint would be one fetch away.
 * Every route must refuse a Host that is not PUBLIC_BASE_URL's, and an Origin that is not ours.
 */

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'rebind-test', version: '1' } },
});
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

const world = await startWorld({
  worker: false,
  env: { CODEC_AUTH: 'none' },
  browserArgs: ['--host-resolver-rules=MAP rebind.test 127.0.0.1'],
});
const { stack } = world;
const alice = await world.user();
const browser = await world.browser();

describe('finding 10: Host and Origin allow-list', () => {
  const port = () => new URL(stack.baseUrl).port;

  it('finding 10: a Host that is not PUBLIC_BASE_URL’s is refused with 421 on every route, before any handler runs', async () => {
    const bearer = { authorization: `Bearer ${alice.apiKey}` };
    const routes: { method: string; path: string; headers?: Record<string, string>; body?: string }[] = [
      { method: 'GET', path: '/healthz' },
      { method: 'GET', path: '/readyz' },
      { method: 'GET', path: '/openapi.json' },
      { method: 'GET', path: '/portal' },
      { method: 'GET', path: '/connect/github' },
      { method: 'GET', path: '/oauth/callback?state=x&code=y' },
      { method: 'POST', path: '/codec/decode', headers: { 'content-type': 'application/json' }, body: '{"payloads":[]}' },
      { method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, ...bearer }, body: INITIALIZE },
      { method: 'POST', path: '/v1/tools/list_integrations', headers: { 'content-type': 'application/json', ...bearer }, body: '{}' },
      { method: 'GET', path: '/no-such-route' },
    ];
    for (const route of routes) {
      const url = `${stack.baseUrl}${route.path}`;
      const ours = await rawRequest(url, {
        method: route.method,
        headers: { ...route.headers, host: `127.0.0.1:${port()}` },
        body: route.body,
      });
      expect(ours.status, `${route.method} ${route.path} with our Host`).not.toBe(421);
      for (const host of [`rebind.test:${port()}`, 'rebind.test', `evil.example.com:${port()}`, `127.0.0.1.nip.io:${port()}`]) {
        const res = await rawRequest(url, { method: route.method, headers: { ...route.headers, host }, body: route.body });
        expect(res.status, `${route.method} ${route.path} with Host ${host}: ${res.text}`).toBe(421);
        expect(res.text).toContain('PUBLIC_BASE_URL');
        expect(res.text).not.toMatch(/"payloads"|"protocolVersion"|openapi|integrations/);
      }
    }
  });

  it('finding 10: both loopback spellings of a loopback PUBLIC_BASE_URL work; other ports and hosts do not', async () => {
    for (const host of [`127.0.0.1:${port()}`, `localhost:${port()}`, `[::1]:${port()}`, `LOCALHOST:${port()}`]) {
      expect((await rawRequest(`${stack.baseUrl}/healthz`, { headers: { host } })).status, host).toBe(200);
    }
    for (const host of [`localhost:${Number(port()) + 1}`, '127.0.0.1', `127.0.0.2:${port()}`, `user@127.0.0.1:${port()}`]) {
      expect((await rawRequest(`${stack.baseUrl}/healthz`, { headers: { host } })).status, host).toBe(421);
    }
  });

  it('finding 10: an Origin that is not ours is refused with 403; Temporal UI’s origins may call /codec only', async () => {
    const call = (path: string, origin: string, method = 'POST', body = '{}') =>
      rawRequest(`${stack.baseUrl}${path}`, {
        method,
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${alice.apiKey}`,
          origin,
          ...(path === '/mcp' ? MCP_HEADERS : {}),
        },
        body: method === 'OPTIONS' ? undefined : body,
      });
    for (const origin of ['http://evil.example.com', `http://rebind.test:${port()}`, 'null', `https://127.0.0.1:${port()}`]) {
      const res = await call('/v1/tools/list_integrations', origin);
      expect(res.status, `${origin}: ${res.text}`).toBe(403);
      expect(JSON.parse(res.text).error).toContain('are refused');
      expect((await call('/mcp', origin, 'POST', INITIALIZE)).status).toBe(403);
      expect((await call('/codec/decode', origin, 'POST', '{"payloads":[]}')).status).toBe(403);
    }
    for (const origin of [`http://127.0.0.1:${port()}`, `http://localhost:${port()}`]) {
      expect((await call('/v1/tools/list_integrations', origin)).status, origin).toBe(200);
    }
    // The local Temporal UI decodes payloads from its own origin, and may do nothing else here.
    const ui = 'http://localhost:8233';
    expect((await call('/codec/decode', ui, 'OPTIONS')).status).toBe(204);
    expect((await call('/codec/decode', ui, 'POST', '{"payloads":[]}')).status).toBe(200);
    expect((await call('/mcp', ui, 'POST', INITIALIZE)).status).toBe(403);
    expect((await call('/v1/tools/list_integrations', ui)).status).toBe(403);
  });
});

describe('finding 10: in a real browser', () => {
  it('finding 10: a page whose name rebinds to 127.0.0.1 reads nothing from /codec/decode, /mcp or any page', async () => {
    // Mallory's server answers first at rebind.test:<port>; then her name points at the port where
    // Switchboard listens (here the same 127.0.0.1:<port>, once her server is gone): the page's
    // later requests are same-origin for the browser, and reach Switchboard with Host rebind.test.
    const port = await freePort();
    const mallory = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>cats</title><p>Cute cats</p>');
    });
    await new Promise<void>((resolve) => mallory.listen(port, '127.0.0.1', resolve));
    const page = await browser.newPage();
    const victim = await (async () => {
      try {
        await page.goto(`http://rebind.test:${port}/`);
        expect(await page.title()).toBe('cats');
      } finally {
        await closeServer(mallory);
      }
      return startStack({ worker: false, env: { PORT: String(port), CODEC_AUTH: 'none' } });
    })();
    try {
      const seen = await page.evaluate(async (init) => {
        const read = async (path: string, options?: RequestInit) => {
          try {
            const res = await fetch(path, options);
            return { path, status: res.status, text: await res.text() };
          } catch (err) {
            return { path, status: 0, text: String(err) };
          }
        };
        return [
          await read('/codec/decode', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"payloads":[]}' }),
          await read('/mcp', {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: init,
          }),
          await read('/openapi.json'),
          await read('/readyz'),
          await read('/portal'),
        ];
      }, INITIALIZE);
      for (const { path, status, text } of seen) {
        expect(status, `${path}: ${text}`).toBe(421);
        expect(text).toContain(`This server does not answer for`);
        expect(text).not.toMatch(/"payloads"|"protocolVersion"|"openapi"|"temporal"/);
      }
      // The same browser on Switchboard's own address is served as usual.
      const own = await browser.newPage();
      expect((await own.goto(`http://127.0.0.1:${port}/healthz`))?.status()).toBe(200);
      await own.close();
    } finally {
      await page.close();
      await victim.close();
    }
  });

  it('finding 10: a page of another local origin cannot call /mcp or /codec/decode', async () => {
    const attackerPort = await freePort();
    const target = stack.baseUrl;
    const attacker = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>other site</title>');
    });
    await new Promise<void>((resolve) => attacker.listen(attackerPort, '127.0.0.1', resolve));
    const page = await browser.newPage();
    try {
      await page.goto(`http://localhost:${attackerPort}/`);
      const logsBefore = stack.logs.lines.length;
      // Simple requests (no preflight): the only kind a page can send another origin with a body it chose.
      await page.evaluate(
        async ({ target, init }) => {
          for (const path of ['/mcp', '/codec/decode']) {
            await fetch(`${target}${path}`, {
              method: 'POST',
              mode: 'no-cors',
              headers: { 'content-type': 'text/plain' },
              body: init,
            }).catch(() => {});
          }
        },
        { target, init: INITIALIZE },
      );
      // The browser shows the page nothing (an opaque or blocked answer); the server's log says what it answered.
      const answered = () =>
        stack.logs.lines
          .slice(logsBefore)
          .flatMap((line) => {
            try {
              return [JSON.parse(line)];
            } catch {
              return [];
            }
          })
          .filter((entry) => entry.msg === 'request')
          .map((entry) => `${entry.method} ${entry.path} ${entry.status}`);
      await expect.poll(answered).toEqual(['POST /mcp 403', 'POST /codec/decode 403']);
      const refusals = stack.logs.lines.slice(logsBefore).filter((line) => line.includes('refused Host or Origin'));
      expect(refusals.join('')).toContain(`http://localhost:${attackerPort}`);
    } finally {
      await page.close();
      await closeServer(attacker);
    }
  });
});

/**
 * A front door that adds the bearer key the conformance CLI cannot send, and passes everything
 * else — the Host and Origin the CLI chose above all — through unchanged.
 */
function bearerProxy(target: string, key: string): Server {
  return createServer((req, res) => {
    const upstream = request(
      `${target}${req.url}`,
      { method: req.method, headers: { ...req.headers, authorization: `Bearer ${key}` }, setHost: false },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
}

describe('finding 10: the official MCP conformance suite', () => {
  it('finding 10: the dns-rebinding-protection server scenario of @modelcontextprotocol/conformance passes', async () => {
    const proxyPort = await freePort();
    // The proxy is the address clients use, so it is PUBLIC_BASE_URL; Switchboard listens behind it.
    const front = await startStack({ worker: false, env: { PUBLIC_BASE_URL: `http://127.0.0.1:${proxyPort}` } });
    const user = await createTestUser(front);
    const proxy = bearerProxy(front.baseUrl, user.apiKey);
    await new Promise<void>((resolve) => proxy.listen(proxyPort, '127.0.0.1', resolve));
    try {
      const run = await runConformance(conformanceTools(), [
        'server',
        '--url',
        `http://127.0.0.1:${proxyPort}/mcp`,
        '--scenario',
        'dns-rebinding-protection',
      ]);
      expect(run.passed, run.text).toBe(true);
      expect(run.text).toMatch(/localhost-host-rebinding-rejected[^\n]*SUCCESS/);
      expect(run.text).toMatch(/localhost-host-valid-accepted[^\n]*SUCCESS/);
      expect(run.text).toContain('Passed: 2/2, 0 failed');
    } finally {
      await closeServer(proxy);
      await front.close();
    }
  });
});
