import { createServer, type RequestListener, type Server } from 'node:http';
import { freePort } from './ports.js';

/** A plain HTTP server on 127.0.0.1 that a test plays a part with: another origin, a hostile page, a slow upstream. */
export interface LocalServer {
  server: Server;
  port: number;
  url: string;
  /** Stops listening and drops open connections (a streaming answer would otherwise keep it open). */
  close(): Promise<void>;
}

export async function startLocalServer(handler: RequestListener, port?: number): Promise<LocalServer> {
  const server = createServer(handler);
  const listenOn = port ?? (await freePort());
  await new Promise<void>((resolve) => server.listen(listenOn, '127.0.0.1', resolve));
  return {
    server,
    port: listenOn,
    url: `http://127.0.0.1:${listenOn}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
