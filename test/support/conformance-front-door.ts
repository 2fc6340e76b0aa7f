import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';
import { createTestUser, startStack } from './harness.js';

/**
 * The conformance suite's client sends no Authorization header (it has no option for one) and
 * speaks to a `localhost` URL. This stand-in for a public front door adds the user's API key, and
 * maps its own name (`localhost:<port>`, as Host and as Origin) to Switchboard's PUBLIC_BASE_URL;
 * any other Host or Origin passes unchanged, so the suite's DNS-rebinding requests reach
 * Switchboard as sent. `url` is the /mcp the suite is pointed at.
 */
export async function startConformanceFrontDoor(baseUrl: string, apiKey: string): Promise<{ url: string; close(): Promise<void> }> {
  const own = new URL(baseUrl);
  const proxy: Server = createServer((req, res) => {
    const front = `localhost:${(proxy.address() as AddressInfo).port}`;
    const headers = { ...req.headers, authorization: `Bearer ${apiKey}` };
    if (headers.host === front) headers.host = own.host;
    if (headers.origin === `http://${front}`) headers.origin = own.origin;
    const upstream = request({ host: own.hostname, port: own.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
  return {
    url: `http://localhost:${(proxy.address() as AddressInfo).port}/mcp`,
    async close() {
      proxy.closeAllConnections();
      await new Promise((done) => proxy.close(done));
    },
  };
}

/**
 * What the suite's server scenarios run against: a whole Switchboard for the file, a user, and the
 * front door carrying that user's key (`url`), all stopped after the file's tests.
 */
export async function startConformanceTarget(): Promise<{ url: string }> {
  const stack = await startStack();
  const user = await createTestUser(stack);
  const frontDoor = await startConformanceFrontDoor(stack.baseUrl, user.apiKey);
  afterAll(async () => {
    await frontDoor.close();
    await stack.close();
  });
  return { url: frontDoor.url };
}
