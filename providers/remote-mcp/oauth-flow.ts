import { setTimeout } from 'node:timers/promises';
import type { AllowedHost } from '../../core/network-policy.js';
import type { OAuthContext } from '../../core/oauth-context.js';
import type { UpstreamEntry } from '../../core/upstream-entry.js';
import { OAuthFlowError } from '../sdk/oauth-client.js';
import { arrivedAt, type OAuthFlow } from '../sdk/oauth-flow.js';
import {
  type AuthorizationServerMetadata,
  authorizationRequest,
  type ClientIdentity,
  type ClientRegistrationStore,
  discoverAuthorization,
  ensureClient,
  exchangeCode,
  fetchAuthorizationServerMetadata,
  McpAuthError,
  refresh,
  revoke,
} from './oauth-client/index.js';

/** What an upstream's OAuth needs from the deployment (bin/support/services.ts builds it). */
export interface UpstreamOAuthOptions {
  /**
   * Dynamic client registrations of one scope (`operator`, or a tenant's `tenant:<id>`), stored per
   * issuer (platform/database/mcp-client-registrations.ts): a tenant's server never uses the operator's client.
   */
  registrationsFor(scope: string): ClientRegistrationStore;
  /**
   * Switchboard's Client ID Metadata Document URL (core/urls.ts); used only where it is https, and
   * only for the operator's servers: it is one client at every authorization server.
   */
  clientMetadataUrl: string;
  /**
   * The shared OAuth callback (core/urls.ts `oauthCallbackUrl`): the redirect URI of the operator's
   * own clients — the metadata document's, and a client the operator registered by hand.
   */
  callbackUrl: string;
  /** The callback of one issuer (core/urls.ts `issuerCallbackUrl`): the redirect URI of every other client. */
  issuerCallbackUrl(issuer: string): string;
}

/** Authorization server metadata is read again after this (refreshes reuse it meanwhile). */
const METADATA_TTL_MS = 10 * 60_000;
/** A portal page waits at most this for the consent origin of a server nobody connected yet… */
const ORIGIN_DISCOVERY_MS = 5_000;
/** …and after a failed discovery does not try again for this long. */
const ORIGIN_RETRY_MS = 30_000;

type OAuth2Auth = Extract<UpstreamEntry['auth'], { type: 'oauth2' }>;

/**
 * The OAuth of one upstream MCP server, as the MCP authorization spec (2025-11-25) says, on the
 * flows of providers/remote-mcp/oauth-client: every consent discovers the server's authorization server afresh
 * (a server may move it), ensures Switchboard's client there (pre-registered, metadata document,
 * or a stored dynamic registration, checked with the server first), and asks with PKCE S256, the
 * RFC 8707 resource and the scopes. The callback and every refresh go to the issuer, client and
 * resource that consent was asked with (the OAuthContext kept with the attempt and the credential),
 * never to whatever the server names later: a server that changes its metadata between consent and
 * callback cannot have a code or refresh token sent somewhere else.
 */
export function upstreamOAuthFlow(
  entry: UpstreamEntry & { auth: OAuth2Auth },
  options: UpstreamOAuthOptions & { allowedHosts: readonly AllowedHost[]; scope: string },
): OAuthFlow {
  const auth = entry.auth;
  const egress = { allowedHosts: options.allowedHosts };
  const operators = options.scope === 'operator';
  const registrations = options.registrationsFor(options.scope);
  /**
   * How Switchboard's client is found at an issuer. Dynamic registrations carry that issuer's own
   * callback. The metadata document is offered only for the operator's servers: a tenant's server
   * gets a registration of the tenant's own, never the client (and the consents) of the deployment.
   */
  const clientOptions = (issuer: string) => ({
    ...egress,
    redirectUri: options.issuerCallbackUrl(issuer),
    ...(operators && { clientMetadataUrl: options.clientMetadataUrl }),
    registrations,
  });
  /**
   * Where the code comes back: the issuer's own callback, except for the operator's own clients
   * (registered by hand with the shared callback, or the metadata document, which lists that one).
   * A tenant's client named in its entry takes its issuer's callback too, so no flow of a tenant's
   * server ever ends at the callback the deployment's clients share.
   */
  const redirectUriOf = (client: ClientIdentity) =>
    operators && client.kind !== 'dynamic' ? options.callbackUrl : options.issuerCallbackUrl(client.issuer);
  const preRegistered = auth.clientId
    ? { clientId: auth.clientId, clientSecret: auth.clientSecret, ...(auth.issuer && { issuer: auth.issuer }) }
    : undefined;
  const metadata = new Map<string, { as: AuthorizationServerMetadata; at: number }>();
  let origin: string | undefined;
  let originFailedAt = Number.NEGATIVE_INFINITY;

  const remember = (as: AuthorizationServerMetadata) => {
    metadata.set(as.issuer, { as, at: Date.now() });
    if (as.authorization_endpoint && URL.canParse(as.authorization_endpoint)) origin = new URL(as.authorization_endpoint).origin;
  };
  const authorizationServer = async (issuer: string): Promise<AuthorizationServerMetadata> => {
    const known = metadata.get(issuer);
    if (known && Date.now() - known.at < METADATA_TTL_MS) return known.as;
    const as = await fetchAuthorizationServerMetadata(issuer, egress);
    remember(as);
    return as;
  };
  /** The client the context was asked with; another one (re-registered since) cannot use its code or tokens. */
  const clientOf = async (as: AuthorizationServerMetadata, context: OAuthContext): Promise<ClientIdentity> => {
    const client = await ensureClient(as, { ...clientOptions(as.issuer), preRegistered, recorded: true });
    if (client.clientId !== context.clientId) {
      throw new OAuthFlowError('invalid_grant', `Switchboard's client at ${as.issuer} changed since this authorization; connect again`);
    }
    return client;
  };
  const contextOf = (context: OAuthContext | undefined): OAuthContext => {
    if (!context)
      throw new OAuthFlowError('invalid_request', `${entry.name}: the authorization has no recorded authorization server; connect again`);
    return context;
  };

  return {
    async begin({ scopes: extra }) {
      return translated(async () => {
        const found = await discoverAuthorization(entry.url, { ...egress, expectedIssuer: auth.issuer });
        remember(found.authorizationServer);
        const scopes = union(auth.scopes ?? found.scopes, extra);
        const as = found.authorizationServer;
        const client = await ensureClient(as, { ...clientOptions(as.issuer), preRegistered, verify: true, scopes });
        const redirectUri = redirectUriOf(client);
        const request = await authorizationRequest(as, client, { redirectUri, resource: found.resource, scopes });
        const context: OAuthContext = {
          issuer: as.issuer,
          resource: found.resource,
          clientId: client.clientId,
          redirectUri,
          ...(scopes && { scopes }),
        };
        return { ...request, context };
      });
    },

    async finish(callbackUrl, checks) {
      const context = contextOf(checks.context);
      // A code that came back to another callback than this consent's was sent for another
      // authorization server's flow (a mix-up): it is exchanged nowhere, least of all here.
      if (!arrivedAt(callbackUrl, context.redirectUri ?? options.callbackUrl)) {
        throw new OAuthFlowError(
          'callback_mismatch',
          `${entry.name}: the sign-in came back to the callback of another authorization server than ${context.issuer}; nothing was exchanged`,
        );
      }
      return translated(async () => {
        const as = await authorizationServer(context.issuer);
        const client = await clientOf(as, context);
        try {
          return await exchangeCode(as, client, callbackUrl, { ...checks, resource: context.resource, scopes: context.scopes }, egress);
        } catch (err) {
          // The server forgot Switchboard's registration: register again, so the next consent works.
          if (err instanceof McpAuthError && err.code === 'invalid_client' && client.kind === 'dynamic') {
            await ensureClient(as, { ...clientOptions(as.issuer), reregister: true }).catch(() => {});
          }
          throw err;
        }
      });
    },

    async refresh(refreshToken, recorded) {
      const context = contextOf(recorded);
      return translated(async () => {
        const as = await authorizationServer(context.issuer);
        return refresh(as, await clientOf(as, context), refreshToken, { resource: context.resource, scopes: context.scopes }, egress);
      });
    },

    async revoke(token, recorded) {
      if (!recorded) return false;
      return translated(async () => {
        const as = await authorizationServer(recorded.issuer);
        return revoke(as, await clientOf(as, recorded), token, egress);
      });
    },

    async consentOrigin() {
      // Learned by any discovery; a portal page showing the Connect button runs one (bounded, and not
      // again for a while after a failure) when no consent has been asked for since the start.
      if (origin || Date.now() - originFailedAt < ORIGIN_RETRY_MS) return origin;
      const discovery = discoverAuthorization(entry.url, { ...egress, expectedIssuer: auth.issuer }).then(
        (found) => remember(found.authorizationServer),
        () => {
          originFailedAt = Date.now();
        },
      );
      await Promise.race([discovery, setTimeout(ORIGIN_DISCOVERY_MS, undefined, { ref: false })]);
      return origin;
    },
  };
}

function union(base: string[] | undefined, extra: string[] | undefined): string[] | undefined {
  const all = [...(base ?? []), ...(extra ?? [])];
  return all.length ? [...new Set(all)] : undefined;
}

/** McpAuthErrors as the OAuthFlowErrors every OAuth caller branches on (same codes, same secret-free messages). */
async function translated<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof McpAuthError) throw new OAuthFlowError(err.code, err.message, err.status);
    throw err;
  }
}
