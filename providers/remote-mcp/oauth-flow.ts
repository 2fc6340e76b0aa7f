import type { AllowedHost } from '../../core/network-policy.js';
import type { OAuthContext } from '../../core/oauth-context.js';
import type { UpstreamEntry } from '../../core/upstream-entry.js';
import { OAuthFlowError } from '../sdk/oauth-client.js';
import { arrivedAt, type OAuthFlow } from '../sdk/oauth-flow.js';
import { authorizationServerMemory } from './authorization-server-memory.js';
import { authorizationRequest, type ClientRegistrationStore, exchangeCode, McpAuthError, refresh, revoke } from './oauth-client/index.js';
import { type OAuth2Auth, upstreamClient } from './upstream-client.js';

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
  const servers = authorizationServerMemory(entry.url, auth.issuer, egress);
  const clients = upstreamClient(auth, {
    registrations: options.registrationsFor(options.scope),
    operators: options.scope === 'operator',
    clientMetadataUrl: options.clientMetadataUrl,
    callbackUrl: options.callbackUrl,
    issuerCallbackUrl: options.issuerCallbackUrl,
    egress,
  });
  const contextOf = (context: OAuthContext | undefined): OAuthContext => {
    if (!context)
      throw new OAuthFlowError('invalid_request', `${entry.name}: the authorization has no recorded authorization server; connect again`);
    return context;
  };

  return {
    async begin({ scopes: extra }) {
      return translated(async () => {
        const found = await servers.discover();
        const scopes = union(auth.scopes ?? found.scopes, extra);
        const as = found.authorizationServer;
        const client = await clients.forConsent(as, scopes);
        const redirectUri = clients.redirectUriOf(client);
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
        const as = await servers.authorizationServer(context.issuer);
        const client = await clients.recorded(as, context);
        try {
          return await exchangeCode(as, client, callbackUrl, { ...checks, resource: context.resource, scopes: context.scopes }, egress);
        } catch (err) {
          // The server forgot Switchboard's registration: register again, so the next consent works.
          if (err instanceof McpAuthError && err.code === 'invalid_client' && client.kind === 'dynamic') {
            await clients.reregister(as).catch(() => {});
          }
          throw err;
        }
      });
    },

    async refresh(refreshToken, recorded) {
      const context = contextOf(recorded);
      return translated(async () => {
        const as = await servers.authorizationServer(context.issuer);
        return refresh(
          as,
          await clients.recorded(as, context),
          refreshToken,
          { resource: context.resource, scopes: context.scopes },
          egress,
        );
      });
    },

    async revoke(token, recorded) {
      if (!recorded) return false;
      return translated(async () => {
        const as = await servers.authorizationServer(recorded.issuer);
        return revoke(as, await clients.recorded(as, recorded), token, egress);
      });
    },

    consentOrigin: () => servers.consentOrigin(),
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
