import type { OAuthContext } from '../../core/oauth-context.js';
import type { UpstreamEntry } from '../../core/upstream-entry.js';
import { OAuthFlowError } from '../sdk/oauth-client.js';
import {
  type AuthorizationServerMetadata,
  type ClientIdentity,
  type ClientRegistrationStore,
  type EgressOptions,
  ensureClient,
} from './oauth-client/index.js';

/** The auth of an upstream entry that signs in with OAuth. */
export type OAuth2Auth = Extract<UpstreamEntry['auth'], { type: 'oauth2' }>;

interface UpstreamClientOptions {
  /** The dynamic registrations of the upstream's scope (the operator's, or its tenant's). */
  registrations: ClientRegistrationStore;
  /** Whether the upstream is one of the operator's servers (else a tenant's). */
  operators: boolean;
  /** Switchboard's Client ID Metadata Document URL (offered for the operator's servers only). */
  clientMetadataUrl: string;
  /** The shared OAuth callback of the operator's own clients. */
  callbackUrl: string;
  /** The callback of one issuer: the redirect URI of every other client. */
  issuerCallbackUrl(issuer: string): string;
  egress: EgressOptions;
}

/** Switchboard's client at an upstream's authorization servers, for each step of the flow. */
interface UpstreamClient {
  /** The client a new consent is asked with, a stored registration checked with the server first. */
  forConsent(as: AuthorizationServerMetadata, scopes: string[] | undefined): Promise<ClientIdentity>;
  /** The client the context was asked with; another one (re-registered since) cannot use its code or tokens. */
  recorded(as: AuthorizationServerMetadata, context: OAuthContext): Promise<ClientIdentity>;
  /** Registers again (the server forgot Switchboard's registration), so the next consent works. */
  reregister(as: AuthorizationServerMetadata): Promise<unknown>;
  /** Where the code of a consent asked with this client comes back. */
  redirectUriOf(client: ClientIdentity): string;
}

export function upstreamClient(auth: OAuth2Auth, options: UpstreamClientOptions): UpstreamClient {
  const { operators, egress, registrations } = options;
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
  const preRegistered = auth.clientId
    ? { clientId: auth.clientId, clientSecret: auth.clientSecret, ...(auth.issuer && { issuer: auth.issuer }) }
    : undefined;

  return {
    forConsent: (as, scopes) => ensureClient(as, { ...clientOptions(as.issuer), preRegistered, verify: true, scopes }),

    async recorded(as, context) {
      const client = await ensureClient(as, { ...clientOptions(as.issuer), preRegistered, recorded: true });
      if (client.clientId !== context.clientId) {
        throw new OAuthFlowError('invalid_grant', `Switchboard's client at ${as.issuer} changed since this authorization; connect again`);
      }
      return client;
    },

    reregister: (as) => ensureClient(as, { ...clientOptions(as.issuer), reregister: true }),

    /**
     * The issuer's own callback, except for the operator's own clients (registered by hand with the
     * shared callback, or the metadata document, which lists that one). A tenant's client named in
     * its entry takes its issuer's callback too, so no flow of a tenant's server ever ends at the
     * callback the deployment's clients share.
     */
    redirectUriOf: (client) => (operators && client.kind !== 'dynamic' ? options.callbackUrl : options.issuerCallbackUrl(client.issuer)),
  };
}
