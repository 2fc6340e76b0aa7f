import { createServer, type Server } from 'node:http';
import { createApp } from '../../server/app.js';
import type { ServiceContext } from '../../server/context.js';

export interface RunningServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Serves the app on HOST:PORT (PORT 0 picks a free port, for tests). */
export async function listen(ctx: ServiceContext, port = ctx.config.PORT): Promise<RunningServer> {
  const server = createServer(createApp(ctx));
  // Long waits (wait_for_connection up to 900 s) must outlive Node's default socket timeouts.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, ctx.config.HOST, resolve);
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  ctx.logger.info({ port: actualPort }, 'HTTP server listening');
  return {
    server,
    url: `http://${ctx.config.HOST}:${actualPort}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
