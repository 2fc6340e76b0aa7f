import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigError, loadConfig } from '../../core/config.js';
import { KNOWN_PLACEHOLDER_SECRETS } from '../../core/secret-checks.js';
import { TokenSigner } from '../../core/signed-tokens.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { providerEnvSpec } from '../../providers/sdk/index.js';

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

  it('finding 5: CHROMIUM_RUN_AS never names root (uid or gid 0): chromium would run as root without its sandbox', () => {
    for (const value of ['0:0', '0:65534', '65534:0', '00:1000']) {
      expect(problemsOf({ CHROMIUM_RUN_AS: value }), value).toEqual([
        { variable: 'CHROMIUM_RUN_AS', message: expect.stringMatching(/root/i) },
      ]);
    }
    expect(loadConfig({ CHROMIUM_RUN_AS: '10001:10001' }, specs).CHROMIUM_RUN_AS).toEqual({ uid: 10001, gid: 10001 });
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

describe('the demo integration (issue 20)', () => {
  it('is off unless asked for, and refused in production with a message that names it', () => {
    expect(loadConfig({}, specs)).toMatchObject({ DEMO_INTEGRATION: false, DEMO_PORT: 3100 });
    expect(loadConfig({ DEMO_INTEGRATION: 'on', DEMO_PORT: '3999' }, specs)).toMatchObject({ DEMO_INTEGRATION: true, DEMO_PORT: 3999 });
    expect(problemsOf({ DEMO_INTEGRATION: 'yes' })[0].variable).toBe('DEMO_INTEGRATION');
    const production = {
      NODE_ENV: 'production',
      ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      PORTAL_SIGNING_SECRET: randomBytes(32).toString('base64url'),
    };
    expect(loadConfig(production, specs).DEMO_INTEGRATION).toBe(false);
    expect(problemsOf({ ...production, DEMO_INTEGRATION: 'on' })).toEqual([
      { variable: 'DEMO_INTEGRATION', message: expect.stringMatching(/^"on" is refused in production/) },
    ]);
  });
});

describe('finding 15: production refuses to start without real secrets', () => {
  const realSecret = randomBytes(32).toString('base64url');
  const realKeys = `k1:${randomBytes(32).toString('base64')}`;
  const production = (env: Record<string, string>) => ({
    NODE_ENV: 'production',
    PORTAL_SIGNING_SECRET: realSecret,
    ENCRYPTION_KEYS: realKeys,
    ...env,
  });
  const variables = (env: Record<string, string>) => problemsOf(env).map((p) => p.variable);

  it('finding 15: an operator who forgot PORTAL_SIGNING_SECRET or ENCRYPTION_KEYS gets a ConfigError naming each', () => {
    const { PORTAL_SIGNING_SECRET: _s, ENCRYPTION_KEYS: _k, ...neither } = production({});
    const problems = problemsOf(neither);
    expect(problems.map((p) => p.variable).sort()).toEqual(['ENCRYPTION_KEYS', 'PORTAL_SIGNING_SECRET']);
    expect(problems.every((p) => /required in production/.test(p.message))).toBe(true);
    expect(variables(production({ PORTAL_SIGNING_SECRET: '' }))).toEqual(['PORTAL_SIGNING_SECRET']);
    expect(variables(production({ PORTAL_SIGNING_SECRET: 'short-secret' }))).toEqual(['PORTAL_SIGNING_SECRET']);
    expect(variables(production({ ENCRYPTION_KEYS: '' }))).toEqual(['ENCRYPTION_KEYS']);
    // Real secrets start.
    expect(loadConfig(production({}), specs).PORTAL_SIGNING_SECRET).toBe(realSecret);
  });

  it('finding 15: the placeholder secrets of docker-compose.yml and guessable ones are refused in production', () => {
    const compose = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'), { merge: true });
    const shipped = compose.services.server.environment as Record<string, string>;
    // Whatever docker-compose.yml ships literally (not `${VAR}` from the operator's shell) never passes.
    for (const variable of ['PORTAL_SIGNING_SECRET', 'ENCRYPTION_KEYS']) {
      const value = shipped[variable];
      if (typeof value === 'string' && !value.includes('${')) expect(variables(production({ [variable]: value }))).toEqual([variable]);
    }
    for (const placeholder of KNOWN_PLACEHOLDER_SECRETS) {
      const variable = placeholder.startsWith('k1:') ? 'ENCRYPTION_KEYS' : 'PORTAL_SIGNING_SECRET';
      expect(variables(production({ [variable]: placeholder })), placeholder).toEqual([variable]);
    }
    const refused = (value: string) => problemsOf(production({ PORTAL_SIGNING_SECRET: value }))[0];
    expect(refused('CHANGE-ME-0123456789abcdefghijklmnopqrstuvwxyz').message).toMatch(/placeholder/);
    expect(refused('replace-me-with-a-long-random-string-of-characters').message).toMatch(/placeholder/);
    expect(refused('a'.repeat(40)).message).toMatch(/not random/);
    // A key of one repeated byte is not a key.
    expect(problemsOf(production({ ENCRYPTION_KEYS: `k1:${key}` }))[0]).toMatchObject({
      variable: 'ENCRYPTION_KEYS',
      message: expect.stringMatching(/not random/),
    });
  });

  it('finding 15: development keeps its defaults but never accepts an empty or short signing secret', () => {
    expect(loadConfig({}, specs).PORTAL_SIGNING_SECRET).toBeUndefined();
    expect(variables({ PORTAL_SIGNING_SECRET: '' })).toEqual(['PORTAL_SIGNING_SECRET']);
    expect(variables({ NODE_ENV: 'test', PORTAL_SIGNING_SECRET: 'x'.repeat(31) })).toEqual(['PORTAL_SIGNING_SECRET']);
  });

  it('finding 15: the secret docker-compose.yml publishes is refused in every mode, not only when NODE_ENV says production', () => {
    // An operator who copies the compose environment but forgets NODE_ENV=production (the default
    // is development) would otherwise sign sessions with a secret anyone can read in the repository.
    for (const placeholder of KNOWN_PLACEHOLDER_SECRETS.filter((p) => !p.includes(':'))) {
      for (const NODE_ENV of [undefined, 'development', 'test']) {
        expect(variables({ ...(NODE_ENV && { NODE_ENV }), PORTAL_SIGNING_SECRET: placeholder }), `${NODE_ENV}`).toEqual([
          'PORTAL_SIGNING_SECRET',
        ]);
      }
    }
  });

  it('finding 15: nothing signs with an empty or short key: TokenSigner refuses it, and its CSRF key is derived from it', () => {
    for (const secret of ['', 'x'.repeat(31), undefined as unknown as string]) {
      expect(() => new TokenSigner(secret)).toThrow(/at least 32 characters \(PORTAL_SIGNING_SECRET\)/);
    }
    const a = new TokenSigner(randomBytes(32).toString('hex'));
    const b = new TokenSigner(randomBytes(32).toString('hex'));
    expect(a.mac('portal-csrf', 'session')).not.toBe(b.mac('portal-csrf', 'session'));
    expect(a.mac('portal-csrf', 'session')).not.toBe(a.mac('other', 'session'));
  });

  it('reads SEARCH_DEBUG as 0 or 1, and names it when it is anything else', () => {
    expect(loadConfig({}, specs).SEARCH_DEBUG).toBe(false);
    expect(loadConfig({ SEARCH_DEBUG: '1' }, specs).SEARCH_DEBUG).toBe(true);
    expect(problemsOf({ SEARCH_DEBUG: 'yes' }).map((p) => p.variable)).toEqual(['SEARCH_DEBUG']);
  });
});
