import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeApis, startFakeApis } from '../support/fake-apis.js';
import { connectGithubAccount } from '../support/github-account.js';
import { createTestUser, type Stack, startStack, type TestUser } from '../support/harness.js';
import { startAuthServer, type TestAuthServer } from '../support/oauth-server.js';
import { freePort } from '../support/ports.js';

const github = { clientId: 'gh-src', clientSecret: 'gh-src-secret-0123456789', redirectUris: ['http://127.0.0.1/cb'] };

let auth: TestAuthServer;
let apis: FakeApis;
let remote: Stack;
let here: Stack;
let remoteUser: TestUser;
let localUser: TestUser;

async function connect(stack: Stack, user: TestUser, login: string) {
  return (await connectGithubAccount(stack, auth, github.clientId, user, login)).account;
}

beforeAll(async () => {
  auth = await startAuthServer([github]);
  apis = await startFakeApis((token) => auth.subjectOf(token));
  const env = { ...auth.envFor('GITHUB', github), GITHUB_API_BASE_URL: `${apis.baseUrl}/github` };
  remote = await startStack({ env });
  remoteUser = await createTestUser(remote);
  await connect(remote, remoteUser, 'remote-octo');
  const closedPort = await freePort();
  here = await startStack({
    env: {
      ...env,
      SOURCE_NAME: 'eu',
      SOURCE_TIMEOUT_MS: '3000',
      SWITCHBOARD_SOURCES: JSON.stringify([
        { name: 'us', url: remote.baseUrl, apiKey: remoteUser.apiKey },
        { name: 'down', url: `http://127.0.0.1:${closedPort}`, apiKey: 'sbk_none' },
      ]),
    },
  });
  localUser = await createTestUser(here);
  await connect(here, localUser, 'local-octo');
}, 180_000);

afterAll(async () => {
  await here?.close();
  await remote?.close();
  await apis?.close();
  await auth?.close();
});

describe('remote and composite sources', () => {
  it('search merges every source with <source>: prefixes and names the unavailable ones', async () => {
    const { body } = await localUser.call('connections_search', { query: 'authenticated user', limit: 4 });
    expect(body.ok).toBe(true);
    expect(body.unavailable).toEqual(['down']);
    const names = body.results.map((r: { name: string }) => r.name);
    expect(names.slice(0, 2)).toEqual(['eu:github__get_authenticated_user', 'us:github__get_authenticated_user']);
    const [eu, us] = body.results;
    expect(eu.accounts).toEqual([expect.objectContaining({ id: expect.stringMatching(/^eu:acc_/), label: 'local-octo' })]);
    expect(us.accounts).toEqual([expect.objectContaining({ id: expect.stringMatching(/^us:acc_/), label: 'remote-octo' })]);
  });

  it('execution is routed by prefix, accounts included', async () => {
    const run = (name: string, account?: string) =>
      localUser.call('connections_execute', { name, arguments: {}, ...(account && { account }) }).then((r) => r.body);
    expect(await run('eu:github__get_authenticated_user')).toMatchObject({ ok: true, result: { login: 'local-octo' } });
    expect(await run('us:github__get_authenticated_user')).toMatchObject({ ok: true, result: { login: 'remote-octo' } });
    const { body } = await localUser.call('connections_search', { query: 'authenticated user', limit: 2 });
    const usAccount = body.results[1].accounts[0].id;
    expect(await run('us:github__get_authenticated_user', usAccount)).toMatchObject({ ok: true, result: { login: 'remote-octo' } });
    expect(await run('eu:github__get_authenticated_user', usAccount)).toMatchObject({ ok: false, error: { code: 'not_connected' } });
    expect(await run('github__get_authenticated_user')).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await run('down:github__get_authenticated_user')).toMatchObject({
      ok: false,
      error: { code: 'tool_failed', message: expect.stringContaining('down') },
    });
  });

  it('an instance without sources keeps plain names', async () => {
    const { body } = await remoteUser.call('connections_search', { query: 'authenticated user', limit: 1 });
    expect(body.results[0].name).toBe('github__get_authenticated_user');
    expect(body.unavailable).toBeUndefined();
  });
});
