import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { demoAuthorizationServer } from './authorization-server.js';
import { DemoState } from './demo-state.js';
import { type DemoIntegration, demoIntegration } from './integration.js';
import { demoMcpServer } from './mcp-server.js';
import { signInAndConsent } from './sign-in-and-consent.js';
import { TaskBoard } from './task-board.js';

/**
 * Access tokens live 90 seconds: Switchboard refreshes a token with less than a minute left, so
 * a call made 30 seconds or more after the last refresh runs on a new one — visible in a first
 * session (`whoami` counts the refreshes) without waiting long.
 */
export const DEMO_ACCESS_TOKEN_TTL_SEC = 90;

export interface DemoOptions {
  /** The port on 127.0.0.1 (DEMO_PORT); 0 picks a free one (tests). */
  port: number;
  /** Where the demo keeps its state across restarts (npm start: the data directory); unset, in memory. */
  stateFile?: string;
  accessTokenTtlSec?: number;
  /** Where its lines for the terminal go (sign-ins, consents, tokens, refreshes, revocations). */
  log?: (line: string) => void;
}

export interface RunningDemo {
  /** `http://127.0.0.1:<port>`: the authorization server's issuer and the MCP server's origin. */
  origin: string;
  mcpUrl: string;
  /** The entry and network exception Switchboard registers the demo with. */
  integration: DemoIntegration;
  close(): Promise<void>;
}

/**
 * The demo integration `npm start` serves in development (DEMO_INTEGRATION): an OAuth 2
 * authorization server (authorization-server.ts, with the pages of sign-in-and-consent.ts) and a
 * remote MCP server behind it (mcp-server.ts), on one loopback port. Switchboard reaches it as a
 * remote MCP server like any other, by discovery; nothing in Switchboard knows it is a demo
 * beyond its name and the narrow network exception (integration.ts).
 */
export async function startDemo(options: DemoOptions): Promise<RunningDemo> {
  const log = options.log ?? (() => {});
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(`the demo's port ${options.port} is in use: set DEMO_PORT to a free port, or DEMO_INTEGRATION=off`)
          : err,
      ),
    );
    server.listen(options.port, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const mcpUrl = `${origin}/mcp`;
  const state = new DemoState(options.stateFile);
  const provider = demoAuthorizationServer({
    issuer: origin,
    mcpUrl,
    accessTokenTtlSec: options.accessTokenTtlSec ?? DEMO_ACCESS_TOKEN_TTL_SEC,
    state,
    log,
  });
  const app = express();
  app.disable('x-powered-by');
  // Loopback names only: a web page that rebinds its own name to 127.0.0.1 is not answered (DNS rebinding).
  const ownHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  app.use((req, res, next) => {
    if (ownHosts.has(String(req.headers.host))) return next();
    res.status(421).type('text').send('Misdirected request: the demo answers to 127.0.0.1 only');
  });
  app.use(signInAndConsent(provider, log));
  app.use(demoMcpServer({ provider, issuer: origin, mcpUrl, board: new TaskBoard(state), state }));
  app.use(provider.callback());
  server.on('request', app);
  return {
    origin,
    mcpUrl,
    integration: demoIntegration(mcpUrl),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
