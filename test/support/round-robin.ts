import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface RoundRobin {
  server: Server;
  url: string;
  /** How many requests went to each backend, in the order given. */
  served: number[];
  close(): Promise<void>;
}

/**
 * A load balancer in front of several HTTP servers, as a cluster deployment has one: each request
 * goes to the next backend in turn (not each connection, which a kept-alive client would pin to one
 * server), with its Host header as sent, so consecutive steps of one flow — a connect link, the
 * provider's callback, a wait — land on different processes. Responses stream through (SSE too).
 */
export async function startRoundRobin(port: number, backends: string[]): Promise<RoundRobin> {
  // `backends` may still be filling in (the balancer holds its port before the servers are up).
  const served: number[] = [];
  let next = 0;
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (backends.length === 0) return res.writeHead(503, { 'content-type': 'text/plain' }).end('no backend is up yet');
    const index = next++ % backends.length;
    served[index] = (served[index] ?? 0) + 1;
    const target = new URL(req.url ?? '/', backends[index]);
    const upstream = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
      answer.pipe(res);
    });
    upstream.on('error', (err) => {
      // A backend that died mid-request (the SIGKILL tests): the client sees its connection end, as behind a real balancer.
      if (res.headersSent) res.destroy(err);
      else res.writeHead(502, { 'content-type': 'text/plain' }).end(`backend ${backends[index]} failed: ${err.message}`);
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
