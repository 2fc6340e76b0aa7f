import { describe, expect, it } from 'vitest';
import { insertAccount } from '../../features/accounts/store/accounts.js';
import { documentPath, loadDocumentFile } from '../../providers/openapi/config.js';
import { startWorld, type TestUser } from '../support/harness.js';
import { startFakeOpenApiServer } from '../support/openapi-fake-server.js';

/**
 * GitHub's whole REST API as an OpenAPI integration (issue 32), from GitHub's own published
 * description (@octokit/openapi), over the JSON API: the agent runs imported tools against a fake
 * GitHub built from the same document, which checks every request against it (method, path,
 * query parameters, body) over real HTTP. The account is connected with the deployment's GitHub
 * OAuth app (tokens the test authorization server issued; refreshed there on a 401).
 */

const doc = loadDocumentFile(documentPath('@octokit/openapi/generated/api.github.com.json'));
const github = await startFakeOpenApiServer(doc, { basePath: '/api/v3' });
const world = await startWorld({
  clients: { github: {} },
  env: {
    OPENAPI_INTEGRATIONS: JSON.stringify([
      {
        name: 'github-rest',
        displayName: 'GitHub REST API',
        document: '@octokit/openapi/generated/api.github.com.json',
        baseUrl: github.baseUrl,
        auth: { type: 'oauth2', app: 'github' },
      },
    ]),
  },
});
world.onStop(() => github.close());
const { stack } = world;

async function connectedUser(login: string): Promise<{ user: TestUser; accessToken: string; accountId: string }> {
  const user = await world.user();
  const tokens = await world.auth.issueTokens(login, world.clients.github!.clientId);
  const account = await insertAccount(stack.services.pool, stack.services.keyring, {
    tenantId: user.user.tenantId,
    ownerUserId: user.user.id,
    integration: 'github-rest',
    label: login,
    grantedScopes: ['repo', 'read:user'],
    accessExpiresAt: new Date(Date.now() + 3600_000),
    credential: { type: 'oauth2', accessToken: tokens.accessToken, refreshToken: tokens.refreshToken },
  });
  return { user, accessToken: tokens.accessToken, accountId: account.id };
}

const run = async (user: TestUser, tool: string, args: unknown) => {
  const { status, body } = await user.call('execute_tools', { executions: [{ tool, args }] });
  expect(status).toBe(200);
  return body.results[0];
};

describe('GitHub REST from its OpenAPI document', () => {
  it('all of its operations are tools, listed and searchable next to the hand-written ones', async () => {
    const registry = stack.services.registry;
    const imported = registry.tools().filter((t) => t.provider.manifest.name === 'github-rest');
    expect(imported.length).toBeGreaterThan(1000);
    expect(registry.toolByFlatName('github_get_repo')?.provider.manifest.name).toBe('github');
    const { user } = await connectedUser('searcher');
    const names = async (query: string) =>
      ((await user.call('search_tools', { query })).body.tools as { name: string }[]).map((t) => t.name);
    expect(await names('create a label for a repository')).toContain('github_rest_issues_create_label');
    expect(await names('list issues assigned to the authenticated user across repositories')).toContain(
      'github_rest_issues_list_for_authenticated_user',
    );
    const schema = await user.call('get_tool_schema', { tool: 'github_rest_issues_create' });
    expect(schema.status).toBe(200);
    expect(JSON.stringify(schema.body)).toContain('"owner"');
  });

  it('an agent runs imported tools; each request fits the document and carries the token', async () => {
    const { user, accessToken } = await connectedUser('octo-agent');
    const before = github.seen.length;
    expect(await run(user, 'github_rest_repos_get', { owner: 'octocat', repo: 'hello world' })).toEqual({
      result: { operationId: 'repos/get', path: { owner: 'octocat', repo: 'hello world' }, query: {}, body: null },
    });
    expect(
      await run(user, 'github_rest_issues_list_for_repo', {
        owner: 'octocat',
        repo: 'hello',
        state: 'open',
        labels: 'bug,ui',
        per_page: 5,
      }),
    ).toEqual({
      result: {
        operationId: 'issues/list-for-repo',
        path: { owner: 'octocat', repo: 'hello' },
        query: { state: 'open', labels: 'bug,ui', per_page: '5' },
        body: null,
      },
    });
    const created = await run(user, 'github_rest_issues_create', {
      owner: 'octocat',
      repo: 'hello',
      body: { title: 'Found a bug', body: 'Steps…', labels: ['bug'] },
    });
    expect(created.result).toMatchObject({ operationId: 'issues/create', body: { title: 'Found a bug', labels: ['bug'] } });
    const mine = github.seen.slice(before);
    expect(mine.map((r) => r.problem)).toEqual([undefined, undefined, undefined]);
    expect(mine.every((r) => r.authorization === `Bearer ${accessToken}`)).toBe(true);
    expect(mine[0].url).toBe('/api/v3/repos/octocat/hello%20world');
  });

  it('a 401 refreshes the token once (at the GitHub app’s token endpoint) and retries once', async () => {
    const { user, accessToken } = await connectedUser('octo-refresh');
    github.rejectToken(accessToken);
    const before = github.seen.length;
    expect(await run(user, 'github_rest_users_get_authenticated', {})).toMatchObject({
      result: { operationId: 'users/get-authenticated' },
    });
    const mine = github.seen.slice(before);
    expect(mine).toHaveLength(2);
    expect(mine[0].authorization).toBe(`Bearer ${accessToken}`);
    expect(mine[1].authorization).toMatch(/^Bearer /);
    expect(mine[1].authorization).not.toBe(`Bearer ${accessToken}`);
  });

  it("an argument cannot leave the operation's path, set Authorization, or skip approval", async () => {
    const { user } = await connectedUser('octo-attacker');
    const before = github.seen.length;
    for (const owner of ['..', '../../admin', 'a/b', 'a%2Fb', '%2e%2e', 'https://evil.example/x', 'a\\b']) {
      const answer = await run(user, 'github_rest_repos_get', { owner, repo: 'hello' });
      expect(answer.error, owner).toMatch(/^Invalid arguments for github_rest_repos_get: owner: /);
    }
    const withHeader = await run(user, 'github_rest_repos_get', { owner: 'o', repo: 'r', Authorization: 'Bearer stolen' });
    expect(withHeader.error).toMatch(/^Invalid arguments for github_rest_repos_get/);
    // DELETE is destructive: it waits for a person's approval, nothing is sent.
    expect(await run(user, 'github_rest_repos_delete', { owner: 'octocat', repo: 'hello' })).toMatchObject({ error: 'APPROVAL_REQUIRED' });
    expect(github.seen.slice(before)).toEqual([]);
  });
});
