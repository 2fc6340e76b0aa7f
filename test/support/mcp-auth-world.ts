import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import express from 'express';
import Provider, { errors } from 'oidc-provider';
import { z } from 'zod';
import { accessTokenVerifier } from '../../demo/access-token-verifier.js';
import { serveClientMetadata } from '../../surfaces/http/oauth/client-metadata.js';
import { answerStatelessMcp } from '../../surfaces/mcp/stateless-transport.js';
import { freePort } from './ports.js';

/**
 * An upstream MCP server protected the way the MCP authorization spec (2025-11-25) says, for the
 * tests of providers/remote-mcp/oauth-client:
 * - an authorization server (oidc-provider) with dynamic registration, Client ID Metadata
 *   Documents, RFC 8707 resource indicators (opaque tokens whose audience is the MCP server),
 *   RFC 9207 `iss`, PKCE required, rotating refresh tokens, and a pre-registered client;
 * - an MCP server built with the official SDK (Streamable HTTP) that verifies every bearer token
 *   with that server (audience, scope, expiry), answers 401 with `WWW-Authenticate: Bearer
 *   resource_metadata=…, scope="mcp:read"` and a 403 `insufficient_scope` for `write_note`
 *   without `mcp:write`, and serves its RFC 9728 metadata at the path-inserted well-known URL;
 * - Switchboard's client metadata document route (surfaces/http/oauth/client-metadata.ts) at a local
 *   port standing in for `https://switchboard.test`, which the authorization server's fetch of
 *   `https://switchboard.test/...` reaches (the draft requires https client ids).
 */

export const SWITCHBOARD_ORIGIN = 'https://switchboard.test';
export const CALLBACK = `${SWITCHBOARD_ORIGIN}/oauth/callback`;
export const PRE_REGISTERED = { clientId: 'pre-registered', clientSecret: 'pre-registered-secret-not-real' };

export interface McpAuthWorld {
  issuer: string;
  provider: Provider;
  /** The MCP endpoint (`http://127.0.0.1:<port>/mcp`). */
  mcpUrl: string;
  /** Token grants the authorization server answered, by grant type. */
  grants: Record<string, number>;
  /** Dynamic registrations the authorization server accepted. */
  registrations: number;
  /** Times the authorization server fetched Switchboard's client metadata document. */
  metadataDocumentFetches: number;
  /** What the server's protected resource metadata names as its authorization servers (a test may change it). */
  authorizationServers: string[];
  close(): Promise<void>;
}

const listen = async (server: Server, port = 0) => {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};
const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

export async function startMcpAuthWorld(
  options: {
    cimd?: boolean;
    accessTokenTtlSec?: number;
    /** false: an authorization server without RFC 9207 — no `iss` on its callbacks, none advertised. */
    sendsIss?: boolean;
  } = {},
): Promise<McpAuthWorld> {
  const asPort = await freePort();
  const issuer = `http://127.0.0.1:${asPort}`;
  const mcpServerHttp = createServer();
  const mcpPort = await listen(mcpServerHttp);
  const mcpUrl = `http://127.0.0.1:${mcpPort}/mcp`;
  const metadataUrl = `http://127.0.0.1:${mcpPort}/.well-known/oauth-protected-resource/mcp`;

  const switchboardApp = express();
  switchboardApp.get('/oauth/client-metadata.json', serveClientMetadata({ PUBLIC_BASE_URL: SWITCHBOARD_ORIGIN }));
  const switchboardHttp = createServer(switchboardApp);
  const switchboardPort = await listen(switchboardHttp);

  const world = { grants: {} as Record<string, number>, registrations: 0, metadataDocumentFetches: 0, authorizationServers: [issuer] };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: PRE_REGISTERED.clientId,
        client_secret: PRE_REGISTERED.clientSecret,
        redirect_uris: [CALLBACK],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    scopes: ['offline_access'],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      // So a test can make the server forget a client (DELETE with its registration access token).
      registrationManagement: { enabled: true },
      revocation: { enabled: true },
      clientIdMetadataDocument: { enabled: options.cimd ?? true, ack: 'draft-02' },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? mcpUrl,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (indicator !== mcpUrl) throw new errors.InvalidTarget();
          return {
            scope: 'mcp:read mcp:write',
            audience: mcpUrl,
            accessTokenFormat: 'opaque',
            accessTokenTTL: options.accessTokenTtlSec ?? 3600,
          };
        },
      },
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: { AuthorizationCode: 60, RefreshToken: 3600, Grant: 3600, Interaction: 600, Session: 3600, IdToken: 3600 },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    cookies: { keys: ['mcp-auth-test-cookie-key-not-a-secret'] },
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session?.grantIdFor(ctx.oidc.client!.clientId);
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    // The client metadata document lives at https://switchboard.test: reach the local route instead
    // (and without oidc-provider's own special-use-address guard, which would refuse 127.0.0.1).
    fetch: async (url: string | URL | Request, init?: RequestInit) => {
      const target = new URL(url instanceof Request ? url.url : url);
      if (target.origin !== SWITCHBOARD_ORIGIN) throw new Error(`the test authorization server fetches nothing but ${SWITCHBOARD_ORIGIN}`);
      world.metadataDocumentFetches++;
      const { dispatcher: _ignored, ...rest } = (init ?? {}) as RequestInit & { dispatcher?: unknown };
      return fetch(`http://127.0.0.1:${switchboardPort}${target.pathname}`, rest);
    },
  });
  provider.proxy = false;
  if (options.sendsIss === false) {
    provider.use(async (ctx, next) => {
      await next();
      if (ctx.path.startsWith('/.well-known/') && ctx.body && typeof ctx.body === 'object') {
        delete (ctx.body as Record<string, unknown>).authorization_response_iss_parameter_supported;
      }
      const location = ctx.response.get('location');
      if (location?.startsWith(SWITCHBOARD_ORIGIN)) {
        const callback = new URL(location);
        callback.searchParams.delete('iss');
        ctx.response.set('location', callback.href);
      }
    });
  }
  provider.on('server_error', () => {});
  provider.on('grant.success', (ctx) => {
    const type = String(ctx.oidc.params?.grant_type);
    world.grants[type] = (world.grants[type] ?? 0) + 1;
  });
  provider.on('registration_create.success', () => {
    world.registrations++;
  });
  const asHttp = createServer(provider.callback());
  await listen(asHttp, asPort);

  mcpServerHttp.on(
    'request',
    mcpApp(provider, mcpUrl, metadataUrl, () => world.authorizationServers),
  );

  return Object.assign(world, {
    issuer,
    provider,
    mcpUrl,
    close: async () => {
      await Promise.all([closeServer(asHttp), closeServer(mcpServerHttp), closeServer(switchboardHttp)]);
    },
  });
}

/** The MCP server: its metadata, bearer checks (the SDK's middleware) and two tools. */
function mcpApp(provider: Provider, mcpUrl: string, metadataUrl: string, authorizationServers: () => string[]): express.Express {
  const app = express();
  app.get('/.well-known/oauth-protected-resource/mcp', (_req, res) => {
    res.json({ resource: mcpUrl, authorization_servers: authorizationServers(), scopes_supported: ['mcp:read', 'mcp:write'] });
  });
  const verifier = accessTokenVerifier(provider, (found) => ({ subject: found.accountId }));
  app.use(express.json());
  app.post(
    '/mcp',
    requireBearerAuth({ verifier, requiredScopes: ['mcp:read'], resourceMetadataUrl: metadataUrl, expectedResource: new URL(mcpUrl) }),
    (req, res, next) => {
      const wantsWrite = req.body?.method === 'tools/call' && req.body?.params?.name === 'write_note';
      if (wantsWrite && !req.auth?.scopes.includes('mcp:write')) {
        res
          .status(403)
          .set(
            'WWW-Authenticate',
            `Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="${metadataUrl}", error_description="Writing notes needs mcp:write"`,
          )
          .json({ error: 'insufficient_scope' });
        return;
      }
      next();
    },
    async (req, res) => {
      const server = new McpServer({ name: 'notes', version: '1.0.0' });
      const subject = String(req.auth?.extra?.subject ?? '');
      server.registerTool(
        'whoami',
        { description: 'Who the token is for', inputSchema: {}, annotations: { readOnlyHint: true } },
        async () => ({
          content: [{ type: 'text', text: subject }],
        }),
      );
      server.registerTool(
        'write_note',
        { description: 'Writes a note', inputSchema: { text: z.string() }, annotations: { destructiveHint: false } },
        async ({ text }) => ({
          content: [{ type: 'text', text: `noted for ${subject}: ${text}` }],
        }),
      );
      await answerStatelessMcp(server, req, res, { json: true });
    },
  );
  return app;
}
