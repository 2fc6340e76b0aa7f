import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllowedHosts } from '../../core/network-policy.js';
import { upstreamEntrySchema } from '../../core/upstream-entry.js';
import { upstreamServices } from '../../features/connections/upstream-services.js';
import { createPool, migrate, type Pool } from '../../platform/database/database.js';
import { Keyring } from '../../platform/database/keyring.js';
import { upstreamOAuthFlow } from '../../providers/remote-mcp/oauth-flow.js';
import { OAuthFlowError } from '../../providers/sdk/oauth-client.js';
import { consentInCode } from '../support/consent-in-code.js';
import { type McpAuthWorld, SWITCHBOARD_ORIGIN, startMcpAuthWorld } from '../support/mcp-auth-world.js';

// An OAuth mix-up (RFC 9700 §4.4) across the authorization servers Switchboard discovers for
// upstream MCP servers. The attacker is a tenant administrator: their tenant's upstream server
// names their own authorization server, which forwards a member's browser to an honest one (the
// tests' oidc-provider, taking Client ID Metadata Documents and sending no RFC 9207 `iss`) with
// the state and PKCE challenge Switchboard gave it, hoping Switchboard then brings the honest
// server's code, and the verifier, to the attacker's token endpoint. The steps are the product's
// own: the upstream's OAuth flow as the connect link (begin) and the callback (finish) run it.

const keyring = new Keyring(new Map([['k1', randomBytes(32)]]), 'k1');
const config = { PUBLIC_BASE_URL: SWITCHBOARD_ORIGIN };
const CIMD_URL = `${SWITCHBOARD_ORIGIN}/oauth/client-metadata.json`;
let pool: Pool;
let schema: string;
let honest: McpAuthWorld;
let attacker: Awaited<ReturnType<typeof startAttacker>>;

beforeAll(async () => {
  schema = `mixup_${randomBytes(5).toString('hex')}`;
  await migrate({ url: inject('testDatabaseUrl'), schema });
  pool = createPool({ url: inject('testDatabaseUrl'), schema, poolMax: 3 });
  honest = await startMcpAuthWorld({ cimd: true, sendsIss: false });
  attacker = await startAttacker();
});
afterAll(async () => {
  await attacker?.close();
  await honest?.close();
  await pool?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool?.end();
});

/** The attacker's MCP server and authorization server, one origin: everything it is sent is kept. */
async function startAttacker() {
  const tokenRequests: URLSearchParams[] = [];
  let origin = '';
  const body = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = '';
      req.on('data', (chunk) => {
        text += chunk;
      });
      req.on('end', () => resolve(text));
    });
  const json = (res: ServerResponse, status: number, value: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/mcp') {
      res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"` }).end();
    } else if (path === '/.well-known/oauth-protected-resource/mcp') {
      json(res, 200, { resource: `${origin}/mcp`, authorization_servers: [origin] });
    } else if (path === '/.well-known/oauth-authorization-server') {
      // Everything a client could want, and no `iss` promised (so none is required of the callback).
      json(res, 200, {
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        registration_endpoint: `${origin}/register`,
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        client_id_metadata_document_supported: true,
      });
    } else if (path === '/register') {
      // Whatever Switchboard registers, it is told its client id is its public client at the honest server.
      await body(req);
      json(res, 201, { client_id: CIMD_URL, token_endpoint_auth_method: 'none' });
    } else if (path === '/token') {
      tokenRequests.push(new URLSearchParams(await body(req)));
      json(res, 400, { error: 'invalid_grant' });
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    mcpUrl: `${origin}/mcp`,
    tokenRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The upstream OAuth flow of a tenant's server, as providers/remote-mcp/provider.ts builds it. */
function tenantFlow(name: string, url: string) {
  const entry = upstreamEntrySchema.parse({ name, displayName: name, url, auth: { type: 'oauth2' } });
  if (entry.auth.type !== 'oauth2') throw new Error('an oauth2 entry');
  const { oauth } = upstreamServices(config, pool, keyring);
  return upstreamOAuthFlow(entry as typeof entry & { auth: typeof entry.auth }, {
    ...oauth,
    allowedHosts: parseAllowedHosts('127.0.0.1'),
    scope: `tenant:${randomBytes(4).toString('hex')}`,
  });
}

/** The honest server's token endpoint, asked by the attacker with whatever it was sent. */
async function redeemAtHonestServer(sent: URLSearchParams, redirectUri: string) {
  const res = await fetch(`${honest.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: sent.get('code') ?? '',
      code_verifier: sent.get('code_verifier') ?? '',
      client_id: CIMD_URL,
      redirect_uri: redirectUri,
      resource: honest.mcpUrl,
    }),
  });
  return { status: res.status, body: (await res.json()) as { access_token?: string } };
}

describe('attack: an OAuth mix-up through a tenant’s hostile upstream server', () => {
  it('attack: a tenant’s server whose authorization server forwards the member to an honest one gets no code and no token for the member', async () => {
    const flow = tenantFlow('hostile-notes', attacker.mcpUrl);
    // The member opens the connect link: Switchboard discovers the attacker's authorization server.
    const request = await flow.begin({ redirectUri: `${SWITCHBOARD_ORIGIN}/oauth/callback` });
    expect(request.url.origin).toBe(attacker.origin);
    const asked = request.url.searchParams;
    // The attacker's move: the member's browser goes on to the honest server with Switchboard's
    // state and PKCE challenge, as Switchboard's metadata-document client, to each redirect URI
    // it may try (the one it was given, and the one the document lists).
    const tries = [...new Set([asked.get('redirect_uri') ?? '', `${SWITCHBOARD_ORIGIN}/oauth/callback`])];
    const answers: { redirectUri: string; callback?: URL; refused?: unknown }[] = [];
    for (const redirectUri of tries) {
      const forwarded = new URL(`${honest.issuer}/auth`);
      forwarded.search = new URLSearchParams({
        client_id: CIMD_URL,
        redirect_uri: redirectUri,
        response_type: 'code',
        state: asked.get('state') ?? '',
        code_challenge: asked.get('code_challenge') ?? '',
        code_challenge_method: 'S256',
        scope: 'mcp:read',
        resource: honest.mcpUrl,
      }).toString();
      const callback = await consentInCode(forwarded, 'member-at-honest').catch((refused) => ({ refused }));
      answers.push(callback instanceof URL ? { redirectUri, callback } : { redirectUri, ...callback });
    }
    // The honest server sent a code (no `iss`) to Switchboard's callback for at least one of them.
    const delivered = answers.filter((a) => a.callback?.searchParams.get('code'));
    expect(delivered.length).toBeGreaterThan(0);
    const finished: unknown[] = [];
    for (const { callback } of delivered) {
      expect(callback?.searchParams.has('iss')).toBe(false);
      // Switchboard's callback for this attempt (the browser arrives at the URL the honest server chose).
      finished.push(
        await flow
          .finish(callback as URL, { codeVerifier: request.codeVerifier, expectedState: request.state, context: request.context })
          .catch((err) => err),
      );
    }
    // Whatever reached the attacker's token endpoint, redeemed at the honest server, gets no token.
    for (const sent of attacker.tokenRequests) {
      const redeemed = await redeemAtHonestServer(sent, sent.get('redirect_uri') ?? '');
      expect(redeemed.body.access_token, 'the attacker redeemed the member’s code').toBeUndefined();
    }
    // Nothing reached it at all: no code, no verifier; each callback is refused before any exchange.
    expect(attacker.tokenRequests).toEqual([]);
    for (const err of finished) {
      expect(err).toBeInstanceOf(OAuthFlowError);
      expect((err as OAuthFlowError).code).toBe('callback_mismatch');
    }
  }, 30_000);

  it('a tenant’s server never uses the operator’s client: at an authorization server taking metadata documents it registers a client of the tenant’s own, with a redirect URI for that issuer alone', async () => {
    const flow = tenantFlow('team-notes', honest.mcpUrl);
    const request = await flow.begin({ redirectUri: `${SWITCHBOARD_ORIGIN}/oauth/callback` });
    expect(request.url.origin).toBe(honest.issuer);
    const clientId = request.url.searchParams.get('client_id');
    expect(clientId).not.toBe(CIMD_URL);
    expect(request.context?.clientId).toBe(clientId);
    const redirectUri = request.url.searchParams.get('redirect_uri') ?? '';
    expect(redirectUri.startsWith(`${SWITCHBOARD_ORIGIN}/oauth/callback/`)).toBe(true);
    // The member consents; the code comes back to that redirect URI and is exchanged.
    const callback = await consentInCode(request.url, 'member-at-honest');
    expect(callback.href.startsWith(redirectUri)).toBe(true);
    const tokens = await flow.finish(callback, {
      codeVerifier: request.codeVerifier,
      expectedState: request.state,
      context: request.context,
    });
    expect(tokens.accessToken).toBeTruthy();
  }, 30_000);
});
