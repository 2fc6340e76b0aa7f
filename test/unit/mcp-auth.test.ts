import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Keyring } from '../../platform/database/keyring.js';
import { clientMetadataDocument, isUsableClientIdUrl } from '../../providers/remote-mcp/oauth-client/client-metadata-document.js';
import { canonicalResource } from '../../providers/remote-mcp/oauth-client/discovery.js';
import {
  parseAuthorizationServerMetadata,
  parseProtectedResourceMetadata,
  sameIssuer,
} from '../../providers/remote-mcp/oauth-client/metadata.js';
import { stepUpScopes } from '../../providers/remote-mcp/oauth-client/step-up.js';
import { bearerChallenge, parseChallenges } from '../../providers/remote-mcp/oauth-client/www-authenticate.js';

describe('WWW-Authenticate', () => {
  it('reads resource_metadata, scope, error and error_description of the Bearer challenge, quoted or not', () => {
    expect(
      bearerChallenge(
        'Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", error_description="needs \\"write\\""',
      ),
    ).toEqual({
      error: 'insufficient_scope',
      scope: ['files:read', 'files:write'],
      resourceMetadata: 'https://mcp.example.com/.well-known/oauth-protected-resource',
      errorDescription: 'needs "write"',
    });
    expect(bearerChallenge('bearer scope=mcp:basic')).toEqual({ scope: ['mcp:basic'] });
  });

  it('a scope= inside a quoted URL is not the scope parameter; other schemes and garbage give nothing', () => {
    expect(bearerChallenge('Bearer resource_metadata="https://x.example/prm?scope=admin"')).toEqual({
      resourceMetadata: 'https://x.example/prm?scope=admin',
    });
    expect(bearerChallenge('Basic realm="x"')).toBeUndefined();
    expect(bearerChallenge('')).toBeUndefined();
    expect(bearerChallenge(null)).toBeUndefined();
    expect(bearerChallenge('Bearer')).toEqual({});
    expect(bearerChallenge('"unterminated')).toBeUndefined();
  });

  it('several challenges in one header: the Bearer one is read, the first value of a repeated parameter wins', () => {
    const header = 'Basic realm="a", Bearer scope="one", scope="two", DPoP algs="ES256"';
    expect(parseChallenges(header).map((c) => c.scheme)).toEqual(['basic', 'bearer', 'dpop']);
    expect(bearerChallenge(header)).toEqual({ scope: ['one'] });
  });
});

describe('step-up', () => {
  const header = (scope: string) => `Bearer error="insufficient_scope", scope="${scope}", error_description="Writing needs more"`;

  it('asks for the granted scopes and the challenged ones, and says why', () => {
    expect(stepUpScopes(header('files:read files:write'), ['files:read', 'profile'])).toEqual({
      scopes: ['files:read', 'profile', 'files:write'],
      reason: 'the server needs the scope files:write: Writing needs more',
    });
  });

  it('gives nothing when a step-up cannot help: no new scope, another error, no challenge (no endless loop)', () => {
    expect(stepUpScopes(header('files:read'), ['files:read'])).toBeUndefined();
    expect(stepUpScopes('Bearer error="invalid_token", scope="x"', [])).toBeUndefined();
    expect(stepUpScopes(null, [])).toBeUndefined();
  });

  it('follows no hostile challenge: more than 50 scopes, or scopes that are not scope tokens', () => {
    const many = Array.from({ length: 51 }, (_, i) => `s${i}`).join(' ');
    expect(stepUpScopes(header(many), [])).toBeUndefined();
    expect(stepUpScopes(header(Array.from({ length: 50 }, (_, i) => `s${i}`).join(' ')), [])?.scopes).toHaveLength(50);
    expect(stepUpScopes(header(`files:${'x'.repeat(300)}`), [])).toBeUndefined();
    expect(stepUpScopes(header('read café'), [])).toBeUndefined();
  });
});

describe('metadata checks', () => {
  const as = {
    issuer: 'https://auth.example.com/tenant1',
    authorization_endpoint: 'https://auth.example.com/tenant1/authorize',
    token_endpoint: 'https://auth.example.com/tenant1/token',
    code_challenge_methods_supported: ['S256'],
  };

  it('the authorization server must name the issuer it was fetched for and support PKCE S256', () => {
    expect(parseAuthorizationServerMetadata(as, as.issuer, 'doc').issuer).toBe(as.issuer);
    expect(() => parseAuthorizationServerMetadata({ ...as, issuer: 'https://evil.example' }, as.issuer, 'doc')).toThrow(
      expect.objectContaining({ code: 'issuer_mismatch' }),
    );
    expect(() => parseAuthorizationServerMetadata({ ...as, code_challenge_methods_supported: undefined }, as.issuer, 'doc')).toThrow(
      expect.objectContaining({ code: 'pkce_unsupported' }),
    );
    for (const endpoint of ['not a url', 'javascript:alert(1)', 'data:text/html,x', 'https://u:p@auth.example.com/authorize']) {
      expect(() => parseAuthorizationServerMetadata({ ...as, authorization_endpoint: endpoint }, as.issuer, 'doc')).toThrow(
        expect.objectContaining({ code: 'metadata_invalid' }),
      );
    }
    expect(sameIssuer('https://a.example', 'https://a.example/')).toBe(true);
    expect(sameIssuer('https://a.example/t1', 'https://a.example/t1/')).toBe(false);
  });

  it('protected resource metadata must name a resource and an authorization server; the resource must be this server', () => {
    expect(() => parseProtectedResourceMetadata({ authorization_servers: ['https://a'] }, 'doc')).toThrow(
      expect.objectContaining({ code: 'metadata_invalid' }),
    );
    expect(() => parseProtectedResourceMetadata({ resource: 'https://m.example/mcp', authorization_servers: [] }, 'doc')).toThrow(
      expect.objectContaining({ code: 'metadata_invalid' }),
    );
    const server = new URL('https://mcp.example.com/team/mcp');
    const prm = (resource: string) => ({ resource, authorization_servers: ['https://auth.example.com'] });
    expect(canonicalResource(server, prm('https://mcp.example.com/team/mcp'))).toBe('https://mcp.example.com/team/mcp');
    expect(canonicalResource(server, prm('https://mcp.example.com'))).toBe('https://mcp.example.com');
    for (const other of ['https://victim.example/team/mcp', 'https://mcp.example.com/other', 'http://mcp.example.com/team/mcp']) {
      expect(() => canonicalResource(server, prm(other))).toThrow(expect.objectContaining({ code: 'resource_mismatch' }));
    }
  });
});

describe('client metadata document', () => {
  it('is a public client whose client_id is its own https URL with the callback as its only redirect URI', () => {
    const doc = clientMetadataDocument({
      documentUrl: 'https://sb.example/oauth/client-metadata.json',
      publicBaseUrl: 'https://sb.example',
      redirectUri: 'https://sb.example/oauth/callback',
    });
    expect(doc).toMatchObject({
      client_id: 'https://sb.example/oauth/client-metadata.json',
      redirect_uris: ['https://sb.example/oauth/callback'],
      token_endpoint_auth_method: 'none',
    });
    expect(JSON.stringify(doc)).not.toContain('secret');
    expect(isUsableClientIdUrl(doc.client_id)).toBe(true);
    for (const bad of [
      'http://sb.example/c.json',
      'https://sb.example/',
      'https://u:p@sb.example/c.json',
      'https://sb.example/c.json#x',
      undefined,
    ]) {
      expect(isUsableClientIdUrl(bad)).toBe(false);
    }
  });
});

describe('keyring purpose client-registration', () => {
  it('client registrations have their own key: their ciphertext opens under no other purpose, and credentials not under theirs', () => {
    const keyring = new Keyring(new Map([['k', randomBytes(32)]]));
    const sealed = keyring.encrypt('client-secret', 'aad', 'client-registration');
    expect(keyring.decrypt(sealed, 'aad', 'client-registration')).toBe('client-secret');
    expect(() => keyring.decrypt(sealed, 'aad')).toThrow(expect.objectContaining({ code: 'bad_ciphertext' }));
    expect(() => keyring.decrypt(keyring.encrypt('token', 'aad'), 'aad', 'client-registration')).toThrow(
      expect.objectContaining({ code: 'bad_ciphertext' }),
    );
  });
});
