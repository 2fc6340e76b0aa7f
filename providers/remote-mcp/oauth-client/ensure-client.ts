import type { EgressOptions, GuardedFetch } from '../../sdk/guarded-fetch.js';
import type {
  ClientIdentity,
  ClientRegistrationStore,
  PreRegisteredClient,
  StoredRegistration,
  TokenEndpointAuthMethod,
} from './client-identity.js';
import { CLIENT_NAME, isUsableClientIdUrl } from './client-metadata-document.js';
import { mcpAuthFetch } from './egress.js';
import { type AuthorizationServerMetadata, readJsonObject, sameIssuer } from './metadata.js';
import { McpAuthError } from './oauth-errors.js';

interface EnsureClientOptions extends EgressOptions {
  /** The callback a dynamic registration is made with (core/urls.ts `issuerCallbackUrl`: the issuer's own). */
  redirectUri: string;
  preRegistered?: PreRegisteredClient;
  /** Switchboard's metadata document URL (core/urls.ts `clientMetadataDocumentUrl`); used only when https. */
  clientMetadataUrl?: string;
  /** Dynamic registrations; without it, dynamic registration is not attempted. */
  registrations?: ClientRegistrationStore;
  /** Register again even if a registration is stored (the AS answered `invalid_client`). */
  reregister?: boolean;
  /**
   * Ask the authorization server whether it still knows a stored registration (RFC 7592 read with
   * the registration access token) and register again when it does not — worth one request before
   * a human is sent to a consent page that would only say "unknown client".
   */
  verify?: boolean;
  /**
   * The client of an authorization already asked for (its code, refresh, revocation): the stored
   * registration whatever redirect URI it was made with, and never a new one — a registration made
   * now could not use that authorization's code or tokens.
   */
  recorded?: boolean;
  /** Scope sent with a dynamic registration (some servers limit a client to what it registered). */
  scopes?: string[];
  fetch?: GuardedFetch;
}

/**
 * The client Switchboard is at this authorization server, in the MCP spec's order: the operator's
 * pre-registered client; else its Client ID Metadata Document where the server advertises
 * `client_id_metadata_document_supported`; else a dynamic registration (RFC 7591), stored per
 * issuer and reused, registered again when it no longer fits (another redirect URI, an expired
 * secret) or the caller says the server forgot it.
 */
export async function ensureClient(as: AuthorizationServerMetadata, options: EnsureClientOptions): Promise<ClientIdentity> {
  const issuer = as.issuer;
  const pre = options.preRegistered;
  if (pre) {
    if (pre.issuer && !sameIssuer(pre.issuer, issuer)) {
      throw new McpAuthError('issuer_mismatch', `the pre-registered client belongs to ${pre.issuer}, not ${issuer}`);
    }
    return {
      issuer,
      clientId: pre.clientId,
      clientSecret: pre.clientSecret,
      tokenEndpointAuthMethod: pre.tokenEndpointAuthMethod ?? (pre.clientSecret ? pickSecretMethod(as) : 'none'),
      kind: 'pre-registered',
    };
  }
  if (as.client_id_metadata_document_supported === true && isUsableClientIdUrl(options.clientMetadataUrl)) {
    return { issuer, clientId: options.clientMetadataUrl, tokenEndpointAuthMethod: 'none', kind: 'metadata-document' };
  }
  if (!as.registration_endpoint || !options.registrations) {
    throw new McpAuthError(
      'registration_unavailable',
      `${issuer} offers no way to register Switchboard (no Client ID Metadata Document support, no registration endpoint): configure a pre-registered client`,
    );
  }
  const stored = await options.registrations.find(issuer);
  if (options.recorded) {
    if (!stored) throw new McpAuthError('invalid_grant', `Switchboard has no registration at ${issuer} any more; connect again`);
    return identityOf(stored);
  }
  if (stored && !options.reregister && fits(stored, options.redirectUri)) {
    if (!options.verify || (await stillRegistered(as, stored, options.fetch ?? mcpAuthFetch(options)))) return identityOf(stored);
  }
  const fresh = await register(as, options).catch((err) => {
    // Some servers refuse scopes at registration that they grant at authorization (oidc-provider:
    // scopes of a resource server are not "supported" ones); the scope is optional (RFC 7591 §2).
    if (!(err instanceof McpAuthError && err.status === 400 && options.scopes?.length && /invalid_client_metadata/.test(err.message)))
      throw err;
    return register(as, { ...options, scopes: undefined });
  });
  const kept = stored ? await options.registrations.replace(stored.clientId, fresh) : await options.registrations.save(fresh);
  return identityOf(kept);
}

function identityOf(r: StoredRegistration): ClientIdentity {
  return {
    issuer: r.issuer,
    clientId: r.clientId,
    clientSecret: r.clientSecret,
    tokenEndpointAuthMethod: r.tokenEndpointAuthMethod,
    kind: 'dynamic',
  };
}

/** A stored registration is still good: same redirect URI, secret not expired (with a minute's margin). */
function fits(r: StoredRegistration, redirectUri: string): boolean {
  const expired = !!r.clientSecretExpiresAt && r.clientSecretExpiresAt * 1000 < Date.now() + 60_000;
  return r.redirectUris.includes(redirectUri) && !expired;
}

/**
 * RFC 7592 read. Only a 401, 403 or 404 means forgotten; anything else (a 5xx, no answer) keeps
 * the registration. The registration access token goes only to the registration endpoint's origin.
 */
async function stillRegistered(as: AuthorizationServerMetadata, r: StoredRegistration, fetch: GuardedFetch): Promise<boolean> {
  if (!r.registrationClientUri || !r.registrationAccessToken || !URL.canParse(r.registrationClientUri)) return true;
  const uri = new URL(r.registrationClientUri);
  if (uri.origin !== new URL(as.registration_endpoint ?? as.issuer).origin) return true;
  try {
    const res = await fetch(uri, { headers: { authorization: `Bearer ${r.registrationAccessToken}`, accept: 'application/json' } });
    await res.body?.cancel().catch(() => {});
    return !(res.status === 401 || res.status === 403 || res.status === 404);
  } catch {
    return true;
  }
}

/** RFC 8414's default is client_secret_basic; post where that is all the server takes. */
function pickSecretMethod(as: AuthorizationServerMetadata): TokenEndpointAuthMethod {
  const supported = as.token_endpoint_auth_methods_supported;
  if (!supported || supported.includes('client_secret_basic')) return 'client_secret_basic';
  return supported.includes('client_secret_post') ? 'client_secret_post' : 'client_secret_basic';
}

function methodToRegister(as: AuthorizationServerMetadata): TokenEndpointAuthMethod {
  const supported = as.token_endpoint_auth_methods_supported;
  // A confidential client where the server allows one; a public client (PKCE only) otherwise.
  if (!supported || supported.includes('client_secret_basic')) return 'client_secret_basic';
  if (supported.includes('client_secret_post')) return 'client_secret_post';
  return 'none';
}

const KNOWN_METHODS = new Set<TokenEndpointAuthMethod>(['none', 'client_secret_basic', 'client_secret_post']);

/**
 * RFC 7591 registration. Not the MCP SDK's `registerClient`: its answer schema drops
 * `registration_access_token` and `registration_client_uri` (RFC 7592), which are kept here.
 */
async function register(as: AuthorizationServerMetadata, options: EnsureClientOptions): Promise<StoredRegistration> {
  const fetch = options.fetch ?? mcpAuthFetch(options);
  const requested = methodToRegister(as);
  const endpoint = as.registration_endpoint as string;
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      client_name: CLIENT_NAME,
      redirect_uris: [options.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: requested,
      ...(options.scopes?.length && { scope: options.scopes.join(' ') }),
    }),
  });
  const what = `the registration answer of ${as.issuer}`;
  if (res.status !== 201 && res.status !== 200) {
    const text = (await res.text().catch(() => '')).slice(0, 300);
    throw new McpAuthError('registration_failed', `${as.issuer} refused the registration (HTTP ${res.status}): ${text}`, res.status);
  }
  const answer = await readJsonObject(res, what);
  const text = (field: string) => (typeof answer[field] === 'string' && answer[field] ? (answer[field] as string) : undefined);
  const clientId = text('client_id');
  if (!clientId) throw new McpAuthError('registration_failed', `${what} has no client_id`);
  const secret = text('client_secret');
  const method = (text('token_endpoint_auth_method') as TokenEndpointAuthMethod | undefined) ?? (secret ? requested : 'none');
  if (!KNOWN_METHODS.has(method))
    throw new McpAuthError('registration_failed', `${as.issuer} registered an unsupported token endpoint auth method`);
  if (method !== 'none' && !secret)
    throw new McpAuthError('registration_failed', `${as.issuer} registered a confidential client without a secret`);
  const expiresAt = typeof answer.client_secret_expires_at === 'number' ? answer.client_secret_expires_at : undefined;
  const token = text('registration_access_token');
  const uri = text('registration_client_uri');
  return {
    issuer: as.issuer,
    clientId,
    ...(secret && { clientSecret: secret }),
    ...(expiresAt && { clientSecretExpiresAt: expiresAt }),
    ...(token && { registrationAccessToken: token }),
    ...(uri && { registrationClientUri: uri }),
    redirectUris: [options.redirectUri],
    tokenEndpointAuthMethod: method,
  };
}
