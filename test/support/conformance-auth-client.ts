/**
 * The client the official MCP conformance suite launches for each `client --suite auth` scenario
 * (`… <server-url>`, scenario name in MCP_CONFORMANCE_SCENARIO, pre-registered credentials in
 * MCP_CONFORMANCE_CONTEXT). It runs Switchboard's own discovery, registration and token code
 * (providers/remote-mcp/oauth-client) and talks MCP with the official SDK client: every request carries the bearer
 * token; a 401 starts an authorization, a 403 `insufficient_scope` a step-up (at most two), and the
 * suite's authorization endpoint answers straight with a redirect to the callback.
 *
 * Run: node --import tsx test/support/conformance-auth-client.ts <server-url>
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parseAllowedHosts } from '../../core/network-policy.js';
import {
  authorizationRequest,
  type ClientRegistrationStore,
  discoverAuthorization,
  ensureClient,
  exchangeCode,
  mcpAuthFetch,
  type StoredRegistration,
  stepUpScopes,
  type TokenSet,
} from '../../providers/remote-mcp/oauth-client/index.js';

/** The suite's fixed client id URL for its CIMD scenario. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
const REDIRECT_URI = 'http://localhost:3000/callback';
const MAX_STEP_UPS = 2;

const serverUrl = process.argv[process.argv.length - 1];
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as { client_id?: string; client_secret?: string };
// The suite's servers are on this machine: the operator's allow-list is how a test reaches them.
const egress = { allowedHosts: parseAllowedHosts('localhost,127.0.0.1') };
const http = mcpAuthFetch(egress);

const stored = new Map<string, StoredRegistration>();
const registrations: ClientRegistrationStore = {
  find: async (issuer) => stored.get(issuer),
  async save(r) {
    if (!stored.has(r.issuer)) stored.set(r.issuer, r);
    return stored.get(r.issuer) as StoredRegistration;
  },
  async replace(_previous, r) {
    stored.set(r.issuer, r);
    return r;
  },
};

let tokens: TokenSet | undefined;
let stepUps = 0;

async function authorize(challenge: string | null, scopes?: string[]): Promise<void> {
  const found = await discoverAuthorization(serverUrl, { ...egress, challenge });
  const as = found.authorizationServer;
  const client = await ensureClient(as, {
    ...egress,
    redirectUri: REDIRECT_URI,
    clientMetadataUrl: CLIENT_METADATA_URL,
    registrations,
    ...(context.client_id && { preRegistered: { clientId: context.client_id, clientSecret: context.client_secret } }),
  });
  const wanted = scopes ?? found.scopes;
  const request = await authorizationRequest(as, client, { redirectUri: REDIRECT_URI, resource: found.resource, scopes: wanted });
  const consent = await http(request.url, { redirect: 'manual' });
  const location = consent.headers.get('location');
  if (!location) throw new Error(`the authorization endpoint answered ${consent.status} without a redirect`);
  tokens = await exchangeCode(
    as,
    client,
    new URL(location),
    { codeVerifier: request.codeVerifier, expectedState: request.state, resource: found.resource, scopes: wanted },
    egress,
  );
}

/** The MCP transport's fetch: the bearer on every request, authorization on 401, step-up on 403. */
async function authedFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const send = () => {
    const headers = new Headers(init.headers);
    if (tokens) headers.set('authorization', `Bearer ${tokens.accessToken}`);
    return fetch(input, { ...init, headers });
  };
  let res = await send();
  if (res.status === 401) {
    await authorize(res.headers.get('www-authenticate'));
    res = await send();
  }
  while (res.status === 403 && stepUps < MAX_STEP_UPS) {
    const stepUp = stepUpScopes(res.headers.get('www-authenticate'), tokens?.scopes ?? []);
    if (!stepUp) break;
    stepUps++;
    await authorize(res.headers.get('www-authenticate'), stepUp.scopes);
    res = await send();
  }
  return res;
}

async function main() {
  const client = new Client({ name: 'switchboard-conformance-auth', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { fetch: authedFetch }));
  const { tools } = await client.listTools();
  if (tools[0]) await client.callTool({ name: tools[0].name, arguments: {} });
  await client.close();
}

main().then(
  () => process.exit(0),
  (err: { code?: string; message?: string }) => {
    process.stderr.write(`${err.code ?? 'error'}: ${err.message}\n`);
    process.exit(1);
  },
);
