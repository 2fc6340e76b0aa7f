import { describe, expect, it } from 'vitest';
import { parseTenantOpenApi } from '../../providers/openapi/tenant.js';

const entry = (extra: Record<string, unknown>) =>
  JSON.stringify({ kind: 'openapi', name: 'pets', displayName: 'Pets', document: 'https://pets.example/openapi.json', ...extra });

describe("a tenant's OpenAPI entry", () => {
  it('is the operator entry plus "kind": "openapi", with defaults applied', () => {
    expect(parseTenantOpenApi(entry({}))).toEqual({
      kind: 'openapi',
      name: 'pets',
      displayName: 'Pets',
      document: 'https://pets.example/openapi.json',
      auth: { type: 'none' },
    });
  });

  it('is not one when the text is an upstream server entry or a catalog name', () => {
    expect(parseTenantOpenApi('{"name":"acme","displayName":"Acme","url":"https://mcp.acme.example/mcp"}')).toBeUndefined();
    expect(parseTenantOpenApi('deepwiki')).toBeUndefined();
  });

  it('refuses a file path, an unknown field, a stored sha and the operator’s OAuth clients, by field', () => {
    expect(() => parseTenantOpenApi(entry({ document: './openapi.json' }))).toThrow(/^document: expected the https URL/);
    expect(() => parseTenantOpenApi(entry({ document: '/etc/passwd' }))).toThrow(/^document: /);
    expect(() => parseTenantOpenApi(entry({ extra: 1 }))).toThrow(/extra/);
    expect(() => parseTenantOpenApi(entry({ documentSha256: 'a'.repeat(64) }))).toThrow(/documentSha256/);
    expect(() => parseTenantOpenApi(entry({ auth: { type: 'oauth2', app: 'github' } }))).toThrow(/^auth.type: "oauth2" is not offered/);
    expect(() => parseTenantOpenApi(entry({ displayName: 'a\u0000b' }))).toThrow(/displayName: U\+0000/);
  });
});
