import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { github } from '../../providers/builtin/github/index.js';
import { linear } from '../../providers/builtin/linear/index.js';
import { guardedFetch } from '../../providers/sdk/guarded-fetch.js';
import { ResponseTooLarge } from '../../providers/sdk/http.js';
import type { Credential, Provider } from '../../providers/sdk/index.js';
import { createToolContext } from '../../providers/sdk/tool-context.js';
import { startWorld } from '../support/harness.js';

/**
 * Finding 16 over real HTTP: a service (hostile, or broken) that answers an endless body. The
 * tool context stops reading at the cap and hangs up, instead of buffering until memory runs out.
 */

const world = await startWorld({ clients: { github: {} }, apis: true, stack: false });
const { apis } = world;
const LINEAR_KEY = 'lin_api_size_0123456789';
const CAP = 256 * 1024;
apis.state.linear.grantKey(LINEAR_KEY, { name: 'Lin Size', email: 'lin@size.example' });
const token = await world.accessToken('github', 'octocat');

async function runCapped(provider: Provider, mount: string, credential: Credential, name: string, args: Record<string, unknown>) {
  const tool = provider.tools.find((t) => t.name === name)!;
  const ctx = createToolContext({
    provider,
    credential,
    apiBaseUrl: `${apis.baseUrl}/${mount}`,
    signal: AbortSignal.timeout(5_000),
    logger: { info() {}, warn() {} },
    caller: { tenantId: 'tenant-1', userId: 'user-1' },
    maxResponseBytes: CAP,
  });
  const started = Date.now();
  const outcome = await tool.run(tool.input.parse(args), ctx).then(
    () => undefined,
    (err: unknown) => err,
  );
  return { outcome, ms: Date.now() - started };
}

describe('finding 16: provider response size', () => {
  it.each([
    ['github', '/github/user/repos', () => runCapped(github, 'github', { type: 'oauth2', accessToken: token }, 'list_repos', {})],
    ['linear', '/linear/graphql', () => runCapped(linear, 'linear', { type: 'apikey', fields: { apiKey: LINEAR_KEY } }, 'list_teams', {})],
  ])('finding 16: an endless %s answer stops at the cap, promptly, and the connection is let go', async (_, path, call) => {
    apis.behave.set(path, { endless: true, times: 1 });
    const abandoned = apis.abandoned;
    const sentBefore = apis.endlessBytesSent;
    const { outcome, ms } = await call();
    expect(outcome).toBeInstanceOf(ResponseTooLarge);
    expect((outcome as Error).message).toBe(`The provider's response was larger than ${CAP} bytes; Switchboard stopped reading it`);
    expect(ms).toBeLessThan(5000);
    // The client hung up: the service stops sending soon after the cap (plus what sat in socket buffers).
    await expect.poll(() => apis.abandoned).toBe(abandoned + 1);
    await new Promise((r) => setTimeout(r, 200));
    const sent = apis.endlessBytesSent - sentBefore;
    await new Promise((r) => setTimeout(r, 300));
    expect(apis.endlessBytesSent - sentBefore).toBe(sent);
    expect(sent).toBeLessThan(CAP + 16 * 1024 * 1024);
  });

  it('finding 16: a declared Content-Length over the cap is refused before the body is read', async () => {
    const big = Array.from({ length: 400 }, (_, i) => ({ full_name: `o/r${i}`, description: 'x'.repeat(1000) }));
    apis.behave.set('/github/user/repos', { status: 200, body: big, times: 1 });
    const { outcome } = await runCapped(github, 'github', { type: 'oauth2', accessToken: token }, 'list_repos', {});
    expect(outcome).toBeInstanceOf(ResponseTooLarge);
  });

  it('answers under the cap read as before', async () => {
    const { outcome } = await runCapped(github, 'github', { type: 'oauth2', accessToken: token }, 'get_authenticated_user', {});
    expect(outcome).toBeUndefined();
  });
});

/**
 * capResponse's fast path (a declared Content-Length within the cap, no content encoding, is
 * returned without the counting stream) leans on the HTTP parser reading exactly that many bytes.
 * A hostile service lies about the length every way HTTP allows; neither client Switchboard uses
 * (fetch for provider tools, node:http for guardedFetch) ever hands more than the declared length
 * (never more than the cap) to whoever reads the body.
 */
describe('capResponse fast path against a service that lies about Content-Length', () => {
  const JUNK = 2 * 1024 * 1024;
  const head = (lines: string[]) => `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n${lines.join('\r\n')}\r\n\r\n`;
  const smuggled = 'HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n{"smuggled":42}\n';
  /** Each path is one lie; the socket stays open (keep-alive) unless the lie needs it closed. */
  const lies: Record<string, (sock: import('node:net').Socket) => void> = {
    // More body than declared: the rest is junk, then a whole second response for the next request.
    longer: (s) => {
      s.write(`${head(['Content-Length: 7'])}{"a":1}`);
      s.write(Buffer.alloc(JUNK, 0x78));
    },
    smuggle: (s) => s.write(`${head(['Content-Length: 7'])}{"a":1}${smuggled}`),
    // Less body than declared, then the connection closes.
    shorter: (s) => s.end(`${head(['Content-Length: 100'])}{"a":1}`),
    'duplicate-same': (s) => s.write(`${head(['Content-Length: 7', 'Content-Length: 7'])}{"a":1}`),
    'duplicate-conflicting': (s) => s.write(`${head(['Content-Length: 7', `Content-Length: ${JUNK}`])}{"a":1}${'x'.repeat(1000)}`),
    // A small declared length beside an endless chunked body (request-smuggling's CL.TE, answered).
    'cl-te': (s) => endlessChunks(s, head(['Content-Length: 7', 'Transfer-Encoding: chunked'])),
    'te-cl': (s) => endlessChunks(s, head(['Transfer-Encoding: chunked', 'Content-Length: 7'])),
    'cl-te-identity': (s) => {
      s.write(head(['Content-Length: 7', 'Transfer-Encoding: identity']));
      s.write(Buffer.alloc(JUNK, 0x78));
    },
    // A small compressed body that fetch inflates far past the cap (its declared length is the compressed one).
    bomb: (s) => {
      const packed = gzipSync(Buffer.alloc(8 * CAP, 0x20));
      s.write(head([`Content-Length: ${packed.length}`, 'Content-Encoding: gzip']));
      s.write(packed);
    },
    honest: (s) => s.write(`${head(['Content-Length: 9'])}{"ok":1}\n`),
  };
  const endlessChunks = (s: import('node:net').Socket, first: string) => {
    s.write(first);
    const chunk = `${(64 * 1024).toString(16)}\r\n${'y'.repeat(64 * 1024)}\r\n`;
    const pump = () => {
      while (!s.destroyed && s.write(chunk)) {}
      if (!s.destroyed) s.once('drain', pump);
    };
    s.on('error', () => {});
    pump();
  };

  const connections: import('node:net').Socket[] = [];
  let base = '';
  const hostile = net.createServer((sock) => {
    connections.push(sock);
    sock.on('error', () => {});
    let buffered = '';
    sock.on('data', (d) => {
      buffered += d.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const path = buffered.slice(0, end).split(' ')[1].split('/').pop() ?? '';
      buffered = '';
      (lies[path] ?? lies.honest)(sock);
    });
  });
  beforeAll(async () => {
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(hostile.address() as import('node:net').AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const c of connections) c.destroy();
    await new Promise((r) => hostile.close(r));
  });

  const context = () =>
    createToolContext({
      provider: github,
      credential: { type: 'oauth2', accessToken: 'gho_lying_server_0123456789' },
      apiBaseUrl: `${base}/api`,
      signal: AbortSignal.timeout(10_000),
      logger: { info() {}, warn() {} },
      caller: { tenantId: 'tenant-1', userId: 'user-1' },
      maxResponseBytes: CAP,
    });
  const guarded = () =>
    guardedFetch({
      allowedHosts: [{ host: '127.0.0.1' }],
      maxResponseBytes: CAP,
      timeoutMs: 10_000,
      errors: { refused: (why) => new Error(why), unreachable: (m) => new Error(m), tooLarge: (n) => new ResponseTooLarge(n) },
    });
  /** What reading the body hands the caller: its bytes, or the error. */
  const read = async (get: () => Promise<Response>) => {
    try {
      const res = await get();
      return { bytes: (await res.arrayBuffer()).byteLength };
    } catch (err) {
      return { error: err as Error };
    }
  };

  for (const [client, get] of [
    ['tool context fetch (undici)', (path: string) => context().fetch(path)],
    ['guardedFetch (node:http)', (path: string) => guarded()(`${base}/api/${path}`)],
  ] as const) {
    it(`${client}: a longer body than declared reads only the declared bytes; every other lie fails, never more than the cap`, async () => {
      const longer = await read(() => get('longer'));
      expect(longer).toEqual({ bytes: 7 });
      for (const lie of ['shorter', 'duplicate-same', 'duplicate-conflicting', 'cl-te', 'te-cl', 'cl-te-identity']) {
        const outcome = await read(() => get(lie));
        expect(outcome.error, `${client} ${lie}: ${JSON.stringify(outcome)}`).toBeInstanceOf(Error);
      }
    });

    it(`${client}: a gzip bomb within the declared length is counted as it inflates`, async () => {
      const bomb = await read(() => get('bomb'));
      // fetch inflates it and stops at the cap; node:http hands over the compressed bytes as they are.
      if (client.startsWith('tool')) expect(bomb.error).toBeInstanceOf(ResponseTooLarge);
      else expect(bomb.bytes).toBeLessThan(CAP);
    });

    it(`${client}: a connection reused after a lying answer never serves the bytes smuggled behind it`, async () => {
      for (let i = 0; i < 3; i++) {
        const lied = await get('smuggle');
        expect(await lied.json()).toEqual({ a: 1 });
        const next = await get('honest');
        expect(await next.json()).toEqual({ ok: 1 });
      }
    });
  }
});
