import { randomBytes } from 'node:crypto';
import { createServer, get as httpGet, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllowedHosts } from '../../core/network-policy.js';
import { createPool, migrate, type Pool } from '../../platform/database/database.js';
import { Keyring } from '../../platform/database/keyring.js';
import {
  clientRegistrationStore,
  findClientRegistration,
  resealClientRegistrations,
} from '../../platform/database/mcp-client-registrations.js';
import {
  authorizationRequest,
  type ClientIdentity,
  type DiscoveredAuthorization,
  discoverAuthorization,
  ensureClient,
  exchangeCode,
  McpAuthError,
  mcpAuthFetch,
  refresh,
  stepUpScopes,
} from '../../providers/remote-mcp/oauth-client/index.js';
import { consentInCode } from '../support/consent-in-code.js';
import { startStack } from '../support/harness.js';
import { CALLBACK, type McpAuthWorld, PRE_REGISTERED, SWITCHBOARD_ORIGIN, startMcpAuthWorld } from '../support/mcp-auth-world.js';

const CIMD_URL = `${SWITCHBOARD_ORIGIN}/oauth/client-metadata.json`;
const keyringEntries = new Map([
  ['k1', randomBytes(32)],
  ['k2', randomBytes(32)],
]);
const keyring = new Keyring(keyringEntries, 'k1');
let pool: Pool;
let schema: string;

beforeAll(async () => {
  schema = `mcpauth_${randomBytes(5).toString('hex')}`;
  await migrate({ url: inject('testDatabaseUrl'), schema });
  pool = createPool({ url: inject('testDatabaseUrl'), schema, poolMax: 3 });
});
afterAll(async () => {
  await pool?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool?.end();
});

/** The authorization server is on 127.0.0.1: the operator's allow-list names it, as a test must. */
// The test's MCP server is on loopback too: these tests of discovery itself let its own host through.
const egressFor = (world: McpAuthWorld) => ({ allowedHosts: parseAllowedHosts(new URL(world.issuer).host), trustServerHost: true });

/** A tool call on the MCP server with a bearer token, through the official SDK client. */
async function callTool(world: McpAuthWorld, accessToken: string, name: string, args: Record<string, unknown> = {}) {
  const client = new Client({ name: 'mcp-auth-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(world.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${accessToken}` } } }),
  );
  try {
    const result = await client.callTool({ name, arguments: args });
    return (result.content as { text: string }[])[0].text;
  } finally {
    await client.close();
  }
}

/** Authorize (consent as `login`) and exchange: what connect + callback will do. */
async function connect(world: McpAuthWorld, found: DiscoveredAuthorization, client: ClientIdentity, login: string, scopes = found.scopes) {
  const request = await authorizationRequest(found.authorizationServer, client, {
    redirectUri: CALLBACK,
    resource: found.resource,
    scopes,
  });
  const callback = await consentInCode(request.url, login);
  const tokens = await exchangeCode(
    found.authorizationServer,
    client,
    callback,
    { codeVerifier: request.codeVerifier, expectedState: request.state, resource: found.resource, scopes },
    egressFor(world),
  );
  return { request, callback, tokens };
}

const rejection = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (err) {
    return err as McpAuthError;
  }
  throw new Error('expected a rejection');
};

describe('upstream MCP OAuth against a real authorization server and an MCP server built with the official SDK', () => {
  let world: McpAuthWorld;
  beforeAll(async () => {
    world = await startMcpAuthWorld({ cimd: false });
  });
  afterAll(() => world?.close());

  it('discovers, registers dynamically once per issuer, authorizes with PKCE + resource, calls the server, steps up and refreshes', async () => {
    const found = await discoverAuthorization(world.mcpUrl, egressFor(world));
    expect(found.resource).toBe(world.mcpUrl);
    expect(found.authorizationServer.issuer).toBe(world.issuer);
    expect(found.resourceMetadataUrl).toMatch(/\/\.well-known\/oauth-protected-resource\/mcp$/);
    // The 401's scope wins over scopes_supported (least privilege first).
    expect(found.scopes).toEqual(['mcp:read']);

    const registrations = clientRegistrationStore(pool, keyring);
    const client = await ensureClient(found.authorizationServer, { redirectUri: CALLBACK, registrations, ...egressFor(world) });
    expect(client.kind).toBe('dynamic');
    expect(client.clientSecret).toBeTruthy();
    const again = await ensureClient(found.authorizationServer, { redirectUri: CALLBACK, registrations, ...egressFor(world) });
    expect(again.clientId).toBe(client.clientId);
    expect(world.registrations).toBe(1);
    // Sealed at rest: the row holds neither the secret nor the registration access token.
    const { rows } = await pool.query('SELECT * FROM mcp_client_registrations');
    expect(JSON.stringify(rows)).not.toContain(client.clientSecret as string);
    const stored = await findClientRegistration(pool, keyring, world.issuer);
    expect(stored?.registrationAccessToken).toBeTruthy();
    expect(JSON.stringify(rows)).not.toContain(stored?.registrationAccessToken as string);
    // After a key rotation, `keys reseal` moves the registration to the new key; it still opens.
    const rotated = new Keyring(keyringEntries, 'k2');
    expect(await resealClientRegistrations(pool, rotated)).toBe(1);
    expect((await findClientRegistration(pool, rotated, world.issuer))?.clientSecret).toBe(client.clientSecret);
    expect(await resealClientRegistrations(pool, rotated)).toBe(0);
    expect(await resealClientRegistrations(pool, keyring)).toBe(1);

    const { request, callback, tokens } = await connect(world, found, client, 'alice');
    expect(request.url.searchParams.get('resource')).toBe(world.mcpUrl);
    expect(request.url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(request.url.searchParams.get('scope')).toBe('mcp:read');
    expect(callback.searchParams.get('iss')).toBe(world.issuer);
    expect(await callTool(world, tokens.accessToken, 'whoami')).toBe('alice');

    // write_note needs mcp:write: the server's 403 says so, and a new authorization with the wider set works.
    const denied = await fetch(world.mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_note', arguments: { text: 'hi' } } }),
    });
    expect(denied.status).toBe(403);
    const stepUp = stepUpScopes(denied.headers.get('www-authenticate'), tokens.scopes);
    expect(stepUp?.scopes.sort()).toEqual(['mcp:read', 'mcp:write']);
    expect(stepUp?.reason).toContain('mcp:write');
    const wider = await connect(world, found, client, 'alice', stepUp?.scopes);
    expect(await callTool(world, wider.tokens.accessToken, 'write_note', { text: 'hi' })).toBe('noted for alice: hi');

    // Refresh with resource: a new token for the same server; the rotated refresh token is spent.
    const refreshed = await refresh(
      found.authorizationServer,
      client,
      tokens.refreshToken as string,
      { resource: found.resource },
      egressFor(world),
    );
    expect(refreshed.accessToken).not.toBe(tokens.accessToken);
    expect(await callTool(world, refreshed.accessToken, 'whoami')).toBe('alice');
    const spent = await rejection(
      refresh(found.authorizationServer, client, tokens.refreshToken as string, { resource: found.resource }, egressFor(world)),
    );
    expect(spent.code).toBe('invalid_grant');
  });

  it('registers again when told the server forgot the client, or when the redirect URI changed', async () => {
    const found = await discoverAuthorization(world.mcpUrl, egressFor(world));
    const registrations = clientRegistrationStore(pool, keyring);
    const first = await ensureClient(found.authorizationServer, { redirectUri: CALLBACK, registrations, ...egressFor(world) });
    const forced = await ensureClient(found.authorizationServer, {
      redirectUri: CALLBACK,
      registrations,
      reregister: true,
      ...egressFor(world),
    });
    expect(forced.clientId).not.toBe(first.clientId);
    expect((await registrations.find(world.issuer))?.clientId).toBe(forced.clientId);
    const moved = await ensureClient(found.authorizationServer, {
      redirectUri: `${SWITCHBOARD_ORIGIN}/elsewhere/oauth/callback`,
      registrations,
      ...egressFor(world),
    });
    expect(moved.clientId).not.toBe(forced.clientId);
    expect((await registrations.find(world.issuer))?.redirectUris).toEqual([`${SWITCHBOARD_ORIGIN}/elsewhere/oauth/callback`]);
    // A process still holding the replaced client id replaces nothing: it gets the newest registration.
    const stale = await registrations.replace(first.clientId, { ...(await registrations.find(world.issuer))!, clientId: 'stale' });
    expect(stale.clientId).toBe(moved.clientId);
    expect(world.registrations).toBeGreaterThanOrEqual(3);
  });

  it('a registration the authorization server forgot is found out before consent (RFC 7592 read) and registered again', async () => {
    const found = await discoverAuthorization(world.mcpUrl, egressFor(world));
    const registrations = clientRegistrationStore(pool, keyring);
    const known = await ensureClient(found.authorizationServer, {
      redirectUri: CALLBACK,
      registrations,
      verify: true,
      ...egressFor(world),
    });
    expect(
      (await ensureClient(found.authorizationServer, { redirectUri: CALLBACK, registrations, verify: true, ...egressFor(world) })).clientId,
    ).toBe(known.clientId);
    const stored = await registrations.find(world.issuer);
    const forget = await fetch(stored?.registrationClientUri as string, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${stored?.registrationAccessToken}` },
    });
    expect(forget.status).toBe(204);
    const fresh = await ensureClient(found.authorizationServer, {
      redirectUri: CALLBACK,
      registrations,
      verify: true,
      ...egressFor(world),
    });
    expect(fresh.clientId).not.toBe(known.clientId);
    const { tokens } = await connect(world, found, fresh, 'erin');
    expect(await callTool(world, tokens.accessToken, 'whoami')).toBe('erin');
  });

  it('a pre-registered client is used first, and only with the issuer it names', async () => {
    const found = await discoverAuthorization(world.mcpUrl, egressFor(world));
    const client = await ensureClient(found.authorizationServer, {
      redirectUri: CALLBACK,
      preRegistered: { ...PRE_REGISTERED, issuer: world.issuer },
      registrations: clientRegistrationStore(pool, keyring),
    });
    expect(client).toMatchObject({
      kind: 'pre-registered',
      clientId: PRE_REGISTERED.clientId,
      tokenEndpointAuthMethod: 'client_secret_basic',
    });
    const { tokens } = await connect(world, found, client, 'carol');
    expect(await callTool(world, tokens.accessToken, 'whoami')).toBe('carol');

    const elsewhere = await rejection(
      ensureClient(found.authorizationServer, {
        redirectUri: CALLBACK,
        preRegistered: { ...PRE_REGISTERED, issuer: 'https://auth.example.com' },
      }),
    );
    expect(elsewhere.code).toBe('issuer_mismatch');
    const notNamed = await rejection(
      discoverAuthorization(world.mcpUrl, { ...egressFor(world), expectedIssuer: 'https://auth.example.com' }),
    );
    expect(notNamed.code).toBe('issuer_mismatch');
  });

  it('attack: a callback whose iss is not the issuer (a mix-up) exchanges nothing', async () => {
    const found = await discoverAuthorization(world.mcpUrl, egressFor(world));
    const client = await ensureClient(found.authorizationServer, {
      redirectUri: CALLBACK,
      registrations: clientRegistrationStore(pool, keyring),
      ...egressFor(world),
    });
    const request = await authorizationRequest(found.authorizationServer, client, {
      redirectUri: CALLBACK,
      resource: found.resource,
      scopes: found.scopes,
    });
    const callback = await consentInCode(request.url, 'mallory-victim');
    const before = world.grants.authorization_code ?? 0;
    for (const iss of ['https://evil.example', null]) {
      const forged = new URL(callback);
      if (iss) forged.searchParams.set('iss', iss);
      else forged.searchParams.delete('iss');
      const err = await rejection(
        exchangeCode(
          found.authorizationServer,
          client,
          forged,
          { codeVerifier: request.codeVerifier, expectedState: request.state, resource: found.resource },
          egressFor(world),
        ),
      );
      expect(err).toBeInstanceOf(McpAuthError);
      expect(err.code).toBe('callback_mismatch');
    }
    const wrongState = await rejection(
      exchangeCode(
        found.authorizationServer,
        client,
        callback,
        { codeVerifier: request.codeVerifier, expectedState: 'another-state', resource: found.resource },
        egressFor(world),
      ),
    );
    expect(wrongState.code).toBe('callback_mismatch');
    expect(world.grants.authorization_code ?? 0).toBe(before);
  });
});

describe('Client ID Metadata Document', () => {
  let world: McpAuthWorld;
  beforeAll(async () => {
    world = await startMcpAuthWorld({ cimd: true });
  });
  afterAll(() => world?.close());

  it('where the server supports it, Switchboard is its metadata document URL: no registration, the server fetches /oauth/client-metadata.json', async () => {
    const found = await discoverAuthorization(world.mcpUrl, egressFor(world));
    expect(found.authorizationServer.client_id_metadata_document_supported).toBe(true);
    const client = await ensureClient(found.authorizationServer, {
      redirectUri: CALLBACK,
      clientMetadataUrl: CIMD_URL,
      registrations: clientRegistrationStore(pool, keyring),
    });
    expect(client).toMatchObject({ kind: 'metadata-document', clientId: CIMD_URL, tokenEndpointAuthMethod: 'none' });
    const { tokens } = await connect(world, found, client, 'dana');
    expect(await callTool(world, tokens.accessToken, 'whoami')).toBe('dana');
    expect(world.metadataDocumentFetches).toBeGreaterThan(0);
    expect(world.registrations).toBe(0);
    const refreshed = await refresh(
      found.authorizationServer,
      client,
      tokens.refreshToken as string,
      { resource: found.resource },
      egressFor(world),
    );
    expect(await callTool(world, refreshed.accessToken, 'whoami')).toBe('dana');
  });

  it('an http client id (a PUBLIC_BASE_URL without TLS) is not a metadata document: dynamic registration instead', async () => {
    const found = await discoverAuthorization(world.mcpUrl, egressFor(world));
    const client = await ensureClient(found.authorizationServer, {
      redirectUri: CALLBACK,
      clientMetadataUrl: 'http://127.0.0.1:1/oauth/client-metadata.json',
      registrations: clientRegistrationStore(pool, keyring),
      ...egressFor(world),
    });
    expect(client.kind).toBe('dynamic');
  });
});

describe('GET /oauth/client-metadata.json', () => {
  it('serves Switchboard’s client metadata document from configuration: its own URL as client_id, the callback as the only redirect URI', async () => {
    const stack = await startStack({ worker: false });
    try {
      const res = await fetch(`${stack.baseUrl}/oauth/client-metadata.json`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(res.headers.get('cache-control')).toContain('max-age');
      expect(await res.json()).toEqual({
        client_id: `${stack.baseUrl}/oauth/client-metadata.json`,
        client_name: 'Switchboard',
        client_uri: stack.baseUrl,
        redirect_uris: [`${stack.baseUrl}/oauth/callback`],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      });
      // A Host the request chose changes nothing: a foreign one is refused like on every route.
      const port = new URL(stack.baseUrl).port;
      const foreign = await new Promise<number>((resolve, reject) => {
        httpGet({ host: '127.0.0.1', port, path: '/oauth/client-metadata.json', headers: { host: 'evil.example' } }, (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        }).on('error', reject);
      });
      expect(foreign).toBe(421);
    } finally {
      await stack.close();
    }
  });
});

/** A hostile server: each path answers what the test says; every hit is counted. */
async function hostile(routes: Record<string, (req: IncomingMessage, res: ServerResponse, origin: string) => void>) {
  const hits: string[] = [];
  let origin = '';
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const route = routes[(req.url ?? '').split('?')[0]];
    if (route) route(req, res, origin);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    hits,
    allowed: parseAllowedHosts(new URL(origin).host),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const json = (body: unknown) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};
const challenge = (metadataUrl: string) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${metadataUrl}"` }).end();
};

describe('attacks: metadata from a hostile MCP server or authorization server', () => {
  it('attack: protected resource metadata naming an authorization server on a private or metadata address is never fetched', async () => {
    const canary = await hostile({});
    for (const as of [canary.origin, 'http://169.254.169.254', 'https://10.0.0.7', 'https://metadata.google.internal']) {
      const mcp = await hostile({
        '/mcp': (req, res) => challenge(`${mcp.origin}/prm`)(req, res),
        '/prm': (req, res) => json({ resource: `${mcp.origin}/mcp`, authorization_servers: [as] })(req, res),
      });
      const err = await rejection(discoverAuthorization(`${mcp.origin}/mcp`, { trustServerHost: true }));
      expect(err.code).toBe('egress_refused');
      await mcp.close();
    }
    expect(canary.hits).toEqual([]);
    await canary.close();
  });

  it('attack: resource_metadata on another origin, and metadata for another resource, are refused', async () => {
    const other = await hostile({
      '/prm': json({ resource: 'https://victim.example/mcp', authorization_servers: ['https://auth.example'] }),
    });
    const mcp = await hostile({
      '/mcp': (req, res) => challenge(`${other.origin}/prm`)(req, res),
      '/.well-known/oauth-protected-resource/mcp': json({
        resource: 'https://victim.example/mcp',
        authorization_servers: ['https://auth.example'],
      }),
    });
    const elsewhere = await rejection(discoverAuthorization(`${mcp.origin}/mcp`, { allowedHosts: other.allowed, trustServerHost: true }));
    expect(elsewhere.code).toBe('resource_mismatch');
    expect(other.hits).toEqual([]);
    // Without a challenge, the well-known document names another resource: no token is ever asked for it.
    const foreign = await rejection(discoverAuthorization(`${mcp.origin}/mcp`, { challenge: 'Bearer realm="x"', trustServerHost: true }));
    expect(foreign.code).toBe('resource_mismatch');
    await Promise.all([mcp.close(), other.close()]);
  });

  it('attack: an authorization server whose metadata names another issuer, or no PKCE S256, is refused', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ issuer: 'https://evil.example' }, 'issuer_mismatch'],
      [{ code_challenge_methods_supported: undefined }, 'pkce_unsupported'],
      [{ code_challenge_methods_supported: ['plain'] }, 'pkce_unsupported'],
    ];
    for (const [override, code] of cases) {
      const as = await hostile({
        '/.well-known/oauth-authorization-server': (req, res) =>
          json({
            issuer: as.origin,
            authorization_endpoint: `${as.origin}/authorize`,
            token_endpoint: `${as.origin}/token`,
            code_challenge_methods_supported: ['S256'],
            ...override,
          })(req, res),
      });
      const mcp = await hostile({
        '/mcp': (req, res) => challenge(`${mcp.origin}/.well-known/oauth-protected-resource/mcp`)(req, res),
        '/.well-known/oauth-protected-resource/mcp': (req, res) =>
          json({ resource: `${mcp.origin}/mcp`, authorization_servers: [as.origin] })(req, res),
      });
      const err = await rejection(discoverAuthorization(`${mcp.origin}/mcp`, { allowedHosts: as.allowed, trustServerHost: true }));
      expect(err.code).toBe(code);
      await Promise.all([mcp.close(), as.close()]);
    }
  });

  it('attack: an endless metadata document stops at the cap, promptly', async () => {
    const mcp = await hostile({
      '/mcp': (req, res) => challenge(`${mcp.origin}/prm`)(req, res),
      '/prm': (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"resource":"');
        const chunk = 'a'.repeat(64 * 1024);
        const pump = () => {
          while (res.write(chunk)) {}
          res.once('drain', pump);
        };
        pump();
        res.on('close', () => res.removeAllListeners('drain'));
      },
    });
    const started = Date.now();
    const err = await rejection(discoverAuthorization(`${mcp.origin}/mcp`, { maxResponseBytes: 256 * 1024, trustServerHost: true }));
    expect(err.code).toBe('response_too_large');
    expect(Date.now() - started).toBeLessThan(5_000);
    await mcp.close();
  });

  it('attack: a name that resolves to loopback (DNS rebinding) is refused, and the connection goes to the address checked', async () => {
    const canary = await hostile({ '/x': json({}) });
    const rebinding = mcpAuthFetch({ lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
    const err = await rejection(rebinding(`https://rebind.example:${new URL(canary.origin).port}/x`));
    expect(err.code).toBe('egress_refused');
    expect(canary.hits).toEqual([]);
    // Plain http and credentials in URLs are refused off the allow-list.
    expect((await rejection(mcpAuthFetch()('http://example.com/x'))).code).toBe('egress_refused');
    expect((await rejection(mcpAuthFetch({ allowedHosts: canary.allowed })(`http://user:pw@${new URL(canary.origin).host}/x`))).code).toBe(
      'egress_refused',
    );
    // Redirects are answered, never followed.
    const redirector = await hostile({ '/r': (_req, res) => res.writeHead(302, { location: `${canary.origin}/x` }).end() });
    const res = await mcpAuthFetch({ allowedHosts: redirector.allowed })(`${redirector.origin}/r`);
    expect(res.status).toBe(302);
    expect(canary.hits).toEqual([]);
    await Promise.all([canary.close(), redirector.close()]);
  });
});
