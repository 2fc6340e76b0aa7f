import { McpAuthError } from './oauth-errors.js';

/** RFC 9728 protected resource metadata: the fields Switchboard reads. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
}

/** RFC 8414 / OpenID Connect discovery metadata: the fields Switchboard reads (others are kept). */
export interface AuthorizationServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  registration_endpoint?: string;
  revocation_endpoint?: string;
  jwks_uri?: string;
  code_challenge_methods_supported: string[];
  scopes_supported?: string[];
  response_types_supported?: string[];
  token_endpoint_auth_methods_supported?: string[];
  client_id_metadata_document_supported?: boolean;
  authorization_response_iss_parameter_supported?: boolean;
  [field: string]: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');
const invalid = (what: string, why: string) => new McpAuthError('metadata_invalid', `${what}: ${why}`);

/** Reads a JSON object from a metadata answer; anything else is `metadata_invalid`. */
export async function readJsonObject(res: Response, what: string): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(await res.text());
  } catch (err) {
    if (err instanceof McpAuthError) throw err;
    if ((err as { code?: string }).code === 'response_too_large') {
      throw new McpAuthError('response_too_large', `${what} is larger than Switchboard reads`);
    }
    throw invalid(what, 'not JSON');
  }
  if (!isObject(value)) throw invalid(what, 'not a JSON object');
  return value;
}

export function parseProtectedResourceMetadata(doc: Record<string, unknown>, what: string): ProtectedResourceMetadata {
  if (typeof doc.resource !== 'string' || !URL.canParse(doc.resource)) throw invalid(what, '`resource` is missing or not a URL');
  if (!strings(doc.authorization_servers) || doc.authorization_servers.length === 0) {
    throw invalid(what, '`authorization_servers` names no authorization server');
  }
  if (doc.scopes_supported !== undefined && !strings(doc.scopes_supported))
    throw invalid(what, '`scopes_supported` is not a list of strings');
  return {
    resource: doc.resource,
    authorization_servers: doc.authorization_servers,
    ...(doc.scopes_supported !== undefined && { scopes_supported: doc.scopes_supported as string[] }),
  };
}

/**
 * Checks what Switchboard relies on: the issuer it was fetched for (RFC 8414 §3.3 — a document
 * served for one issuer cannot speak for another), the two endpoints, and PKCE S256, without which
 * the MCP authorization spec says to refuse.
 */
export function parseAuthorizationServerMetadata(
  doc: Record<string, unknown>,
  expectedIssuer: string,
  what: string,
): AuthorizationServerMetadata {
  if (typeof doc.issuer !== 'string' || !sameIssuer(doc.issuer, expectedIssuer)) {
    throw new McpAuthError('issuer_mismatch', `${what} names issuer ${String(doc.issuer).slice(0, 200)}, not ${expectedIssuer}`);
  }
  for (const field of ['authorization_endpoint', 'token_endpoint'] as const) {
    if (!isWebUrl(doc[field])) throw invalid(what, `\`${field}\` is missing or not an http(s) URL`);
  }
  for (const field of ['registration_endpoint', 'revocation_endpoint', 'jwks_uri'] as const) {
    if (doc[field] !== undefined && !isWebUrl(doc[field])) throw invalid(what, `\`${field}\` is not an http(s) URL`);
  }
  const methods = doc.code_challenge_methods_supported;
  if (!strings(methods) || !methods.includes('S256')) {
    throw new McpAuthError(
      'pkce_unsupported',
      `${what} does not advertise PKCE S256 (code_challenge_methods_supported); the MCP authorization spec forbids going on`,
    );
  }
  if (strings(doc.response_types_supported) && !doc.response_types_supported.includes('code')) {
    throw invalid(what, 'the authorization code flow is not supported (response_types_supported)');
  }
  return doc as AuthorizationServerMetadata;
}

/**
 * An http(s) URL without credentials. The authorization endpoint is where a human's browser is sent:
 * never a `javascript:` or `data:` URL, whatever the metadata says (what Switchboard itself fetches
 * is checked again, with addresses, by the guarded fetch).
 */
function isWebUrl(value: unknown): value is string {
  if (typeof value !== 'string' || !URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
}

/** Issuer identifiers compare as URLs (a bare origin with or without its `/`), else exactly. */
export function sameIssuer(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}
