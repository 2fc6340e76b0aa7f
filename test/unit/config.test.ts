import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';
import { builtinProviders } from '../../providers/index.js';
import { providerEnvSpec } from '../../providers/sdk.js';

const specs = builtinProviders.map((p) => providerEnvSpec(p.manifest));
const key = Buffer.alloc(32, 7).toString('base64');

function problemsOf(env: Record<string, string>) {
  try {
    loadConfig(env, specs);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('config schema', () => {
  it('applies every default on an empty environment', () => {
    const config = loadConfig({}, specs);
    expect(config.PORT).toBe(3000);
    expect(config.PUBLIC_BASE_URL).toBe('http://localhost:3000');
    expect(config.DATABASE_URL).toBe('postgres://postgres@127.0.0.1:5432/switchboard');
    expect(config.CONNECTIONS_TOOL_TIMEOUT_MS).toBe(30000);
    expect(config.CONNECTIONS_TOOL_RESULT_MAX_BYTES).toBe(32768);
    expect(config.TEMPORAL_ADDRESS).toBeUndefined();
    expect(config.WORKER_MAX_CACHED_WORKFLOWS).toBe(1000);
    expect(config.providers.github).toEqual({ clientId: undefined, clientSecret: undefined, urls: {} });
  });

  it('names the variable and what it expects', () => {
    expect(problemsOf({ PORT: 'eighty' })).toEqual([{ variable: 'PORT', message: expect.stringMatching(/number/i) }]);
    expect(problemsOf({ PORT: '70000' })[0].variable).toBe('PORT');
    expect(problemsOf({ LOG_LEVEL: 'loud' })[0]).toMatchObject({ variable: 'LOG_LEVEL' });
    expect(problemsOf({ GITHUB_API_BASE_URL: 'not a url' })[0].variable).toBe('GITHUB_API_BASE_URL');
    expect(problemsOf({ DATABASE_SCHEMA: 'Robert; DROP' })[0].variable).toBe('DATABASE_SCHEMA');
    expect(problemsOf({ WORKER_MAX_CACHED_WORKFLOWS: '0' })[0].variable).toBe('WORKER_MAX_CACHED_WORKFLOWS');
  });

  it('reports every bad variable at once, in a readable message', () => {
    try {
      loadConfig({ PORT: 'x', CONNECTIONS_TOOL_TIMEOUT_MS: '-5' }, specs);
      throw new Error('expected failure');
    } catch (err) {
      const message = (err as Error).message;
      expect(message).toContain('PORT:');
      expect(message).toContain('CONNECTIONS_TOOL_TIMEOUT_MS:');
    }
  });

  it('validates the keyring and the active key id', () => {
    expect(problemsOf({ ENCRYPTION_KEYS: 'k1:short' })[0]).toMatchObject({
      variable: 'ENCRYPTION_KEYS',
      message: expect.stringContaining('32 bytes'),
    });
    expect(problemsOf({ ENCRYPTION_KEYS: `k1:${key}`, ENCRYPTION_ACTIVE_KEY_ID: 'k2' })[0]).toMatchObject({
      variable: 'ENCRYPTION_ACTIVE_KEY_ID',
    });
    const config = loadConfig({ ENCRYPTION_KEYS: `k1:${key}, k2:${key}`, ENCRYPTION_ACTIVE_KEY_ID: 'k2' }, specs);
    expect([...(config.ENCRYPTION_KEYS?.keys() ?? [])]).toEqual(['k1', 'k2']);
  });

  it('requires the portal OIDC settings together', () => {
    expect(problemsOf({ PORTAL_OIDC_ISSUER: 'https://id.example.com' })[0].variable).toBe('PORTAL_OIDC_ISSUER');
  });

  it('reads provider credentials and URL overrides by their prefix', () => {
    const config = loadConfig(
      {
        GITHUB_CLIENT_ID: 'id',
        GITHUB_CLIENT_SECRET: 's',
        GITHUB_API_BASE_URL: 'https://ghe.example.com/api/v3',
        ATLASSIAN_JIRA_TOKEN_URL: 'http://127.0.0.1:9/token',
      },
      specs,
    );
    expect(config.providers.github).toEqual({
      clientId: 'id',
      clientSecret: 's',
      urls: { API_BASE_URL: 'https://ghe.example.com/api/v3' },
    });
    expect(config.providers['atlassian-jira'].urls.TOKEN_URL).toBe('http://127.0.0.1:9/token');
  });
});
