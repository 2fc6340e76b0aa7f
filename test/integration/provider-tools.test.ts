import { describe, expect, it } from 'vitest';
import { atlassianJira } from '../../providers/builtin/atlassian-jira/index.js';
import { github } from '../../providers/builtin/github/index.js';
import { linear } from '../../providers/builtin/linear/index.js';
import { slack } from '../../providers/builtin/slack/index.js';
import { ProviderHttpError } from '../../providers/sdk/http.js';
import type { Provider } from '../../providers/sdk/index.js';
import { createToolContext } from '../../providers/sdk/tool-context.js';
import { startWorld } from '../support/harness.js';

/**
 * Every tool of the GitHub, Jira and Slack catalogs, run against the fake services over real
 * HTTP with access tokens the test authorization server really issued.
 */

const world = await startWorld({ clients: { github: {}, jira: { rotateRefreshTokens: true }, slack: {} }, apis: true, stack: false });
const { apis } = world;
const tokens: Record<string, string> = {
  github: await world.accessToken('github', 'octocat'),
  'atlassian-jira': await world.accessToken('jira', 'jo'),
  slack: await world.accessToken('slack', 'jo'),
};
const called = new Set<string>();
const mount: Record<string, string> = { github: 'github', 'atlassian-jira': 'jira', slack: 'slack' };

const contextFor = (provider: Provider, token = tokens[provider.manifest.name]) =>
  createToolContext({
    provider,
    credential: { type: 'oauth2', accessToken: token },
    apiBaseUrl: `${apis.baseUrl}/${mount[provider.manifest.name]}`,
    signal: AbortSignal.timeout(10_000),
    logger: { info() {}, warn() {} },
    caller: { tenantId: 'tenant-1', userId: 'user-1' },
  });

/** Parses `args` with the tool's schema, as the server does, and runs it. */
async function run(provider: Provider, name: string, args: Record<string, unknown> = {}, token?: string): Promise<any> {
  const tool = provider.tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${provider.manifest.name}.${name}`);
  called.add(`${provider.manifest.toolPrefix}_${name}`);
  return tool.run(tool.input.parse(args), contextFor(provider, token));
}

/** The ProviderHttpError a call fails with. */
async function failure(call: Promise<unknown>): Promise<ProviderHttpError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderHttpError);
  return err as ProviderHttpError;
}

const repo = { owner: 'octocat', repo: 'hello-world' };

describe('github', () => {
  it('get_authenticated_user and list_repos answer slim shapes', async () => {
    expect(await run(github, 'get_authenticated_user')).toEqual({
      login: 'octocat',
      name: 'octocat',
      email: 'octocat@example.com',
      html_url: 'https://github.com/octocat',
    });
    const repos = await run(github, 'list_repos', { perPage: 2 });
    expect(repos).toHaveLength(2);
    expect(Object.keys(repos[0]).sort()).toEqual(['default_branch', 'description', 'full_name', 'private', 'updated_at']);
  });

  it('get_repo, list_branches, list_commits', async () => {
    const details = await run(github, 'get_repo', repo);
    expect(details).toMatchObject({
      full_name: 'octocat/hello-world',
      private: false,
      default_branch: 'main',
      visibility: 'public',
      topics: ['demo'],
    });
    expect(details).not.toHaveProperty('owner');
    expect((await failure(run(github, 'get_repo', { owner: 'octocat', repo: 'nope' }))).status).toBe(404);

    const branches = await run(github, 'list_branches', repo);
    expect(branches).toEqual(
      expect.arrayContaining([
        { name: 'main', sha: expect.stringMatching(/^[0-9a-f]{40}$/), protected: true },
        { name: 'feature/greeting', sha: expect.stringMatching(/^[0-9a-f]{40}$/), protected: false },
      ]),
    );
    expect(await run(github, 'list_branches', { ...repo, protectedOnly: true })).toHaveLength(1);

    const onMain = await run(github, 'list_commits', repo);
    expect(onMain).toEqual([
      {
        sha: expect.any(String),
        message: 'Initial commit',
        author: 'octocat',
        date: expect.any(String),
        html_url: expect.stringContaining('/commit/'),
      },
    ]);
    const onFeature = await run(github, 'list_commits', { ...repo, sha: 'feature/greeting' });
    expect(onFeature.map((c: { message: string }) => c.message)).toEqual(['Greet with enthusiasm', 'Initial commit']);
    expect(await run(github, 'list_commits', { ...repo, sha: 'feature/greeting', path: 'README.md' })).toHaveLength(1);
  });

  it('get_file_contents decodes base64 text, flags binary files and lists directories', async () => {
    const readme = await run(github, 'get_file_contents', { ...repo, path: 'README.md' });
    expect(readme).toEqual({
      type: 'file',
      path: 'README.md',
      sha: expect.stringMatching(/^[0-9a-f]{40}$/),
      size: Buffer.byteLength('# Hello World\n\nThis is a demo repository. Grüße!\n'),
      html_url: 'https://github.com/octocat/hello-world/blob/main/README.md',
      content: '# Hello World\n\nThis is a demo repository. Grüße!\n',
    });
    expect(await run(github, 'get_file_contents', { ...repo, path: 'docs/logo.png' })).toMatchObject({ content: null, binary: true });
    const root = await run(github, 'get_file_contents', repo);
    expect(root).toEqual({
      type: 'dir',
      path: '',
      entries: [
        { name: 'README.md', path: 'README.md', type: 'file', size: expect.any(Number) },
        { name: 'docs', path: 'docs', type: 'dir', size: 0 },
        { name: 'src', path: 'src', type: 'dir', size: 0 },
      ],
    });
    const onBranch = await run(github, 'get_file_contents', { ...repo, path: 'src/index.ts', ref: 'feature/greeting' });
    expect(onBranch.content).toContain("+ '!'");
    expect((await failure(run(github, 'get_file_contents', { ...repo, path: 'missing.txt' }))).status).toBe(404);
  });

  it('create_or_update_file commits base64 content; updating needs the current sha', async () => {
    const text = 'Notes — with ünïcödé\n';
    const created = await run(github, 'create_or_update_file', { ...repo, path: 'docs/notes.md', content: text, message: 'Add notes' });
    expect(created).toEqual({
      path: 'docs/notes.md',
      sha: expect.stringMatching(/^[0-9a-f]{40}$/),
      html_url: expect.stringContaining('/blob/main/docs/notes.md'),
      commit: { sha: expect.stringMatching(/^[0-9a-f]{40}$/), message: 'Add notes', html_url: expect.stringContaining('/commit/') },
    });
    const fake = apis.state.github.repos.get('octocat/hello-world')!;
    const head = fake.commits.get(fake.branches.get('main')!)!;
    expect(head.tree.get('docs/notes.md')?.toString('utf8')).toBe(text);
    expect((await run(github, 'get_file_contents', { ...repo, path: 'docs/notes.md' })).content).toBe(text);

    const noSha = await failure(run(github, 'create_or_update_file', { ...repo, path: 'docs/notes.md', content: 'v2', message: 'Edit' }));
    expect(noSha.status).toBe(422);
    expect(noSha.body).toContain('sha');
    const stale = await failure(
      run(github, 'create_or_update_file', { ...repo, path: 'docs/notes.md', content: 'v2', message: 'Edit', sha: 'f'.repeat(40) }),
    );
    expect(stale.status).toBe(409);
    const updated = await run(github, 'create_or_update_file', {
      ...repo,
      path: 'docs/notes.md',
      content: 'v2',
      message: 'Edit',
      sha: created.sha,
    });
    expect(updated.sha).not.toBe(created.sha);
    expect((await run(github, 'list_commits', { ...repo, path: 'docs/notes.md' })).map((c: { message: string }) => c.message)).toEqual([
      'Edit',
      'Add notes',
    ]);
  });

  it('issues: list, create, get, update, comment', async () => {
    const open = await run(github, 'list_issues', repo);
    expect(open.map((i: { number: number }) => i.number)).toEqual([3, 1]);
    expect(open[0]).toEqual({
      number: 3,
      title: 'Improve greeting',
      state: 'open',
      user: 'octocat',
      labels: [],
      comments: 0,
      is_pull_request: true,
      html_url: 'https://github.com/octocat/hello-world/pull/3',
      updated_at: expect.any(String),
    });
    expect((await run(github, 'list_issues', { ...repo, labels: 'bug' })).map((i: { number: number }) => i.number)).toEqual([1]);
    expect((await run(github, 'list_issues', { ...repo, state: 'closed' })).map((i: { title: string }) => i.title)).toEqual([
      'Add dark mode',
    ]);

    const created = await run(github, 'create_issue', {
      ...repo,
      title: 'Flaky test',
      body: 'It fails on CI.',
      labels: ['bug', 'ci'],
      assignees: ['octocat'],
    });
    expect(created).toMatchObject({
      number: 4,
      title: 'Flaky test',
      state: 'open',
      labels: ['bug', 'ci'],
      assignees: ['octocat'],
      is_pull_request: false,
    });
    expect(apis.state.github.repos.get('octocat/hello-world')!.issues[3]).toMatchObject({ title: 'Flaky test', user: 'octocat' });
    expect(await run(github, 'get_issue', { ...repo, issueNumber: 4 })).toEqual({
      number: 4,
      title: 'Flaky test',
      state: 'open',
      user: 'octocat',
      labels: ['bug', 'ci'],
      comments: 0,
      is_pull_request: false,
      html_url: 'https://github.com/octocat/hello-world/issues/4',
      updated_at: expect.any(String),
      body: 'It fails on CI.',
      state_reason: null,
      assignees: ['octocat'],
      created_at: expect.any(String),
      closed_at: null,
    });

    const comment = await run(github, 'comment_on_issue', { ...repo, issueNumber: 4, body: 'Looking into it.' });
    expect(comment).toEqual({
      id: expect.any(Number),
      html_url: expect.stringMatching(/\/issues\/4#issuecomment-\d+$/),
      user: 'octocat',
      created_at: expect.any(String),
    });
    const closed = await run(github, 'update_issue', {
      ...repo,
      issueNumber: 4,
      state: 'closed',
      stateReason: 'not_planned',
      labels: ['wontfix'],
    });
    expect(closed).toMatchObject({ state: 'closed', state_reason: 'not_planned', labels: ['wontfix'], comments: 1, title: 'Flaky test' });
    expect(closed.closed_at).toEqual(expect.any(String));
    expect((await failure(run(github, 'get_issue', { ...repo, issueNumber: 99 }))).status).toBe(404);
  });

  it('pull requests: list, get, create, merge (destructive, guarded by sha)', async () => {
    expect(await run(github, 'list_pull_requests', repo)).toEqual([
      {
        number: 3,
        title: 'Improve greeting',
        state: 'open',
        draft: false,
        user: 'octocat',
        head: 'feature/greeting',
        base: 'main',
        html_url: 'https://github.com/octocat/hello-world/pull/3',
        updated_at: expect.any(String),
      },
    ]);
    const pr = await run(github, 'get_pull_request', { ...repo, pullNumber: 3 });
    expect(pr).toMatchObject({ number: 3, merged: false, mergeable: true, mergeable_state: 'clean', changed_files: 1, body: 'Fixes #1' });
    expect(pr.head_sha).toMatch(/^[0-9a-f]{40}$/);

    // A new branch (no tool creates branches), a commit on it, then a pull request from it.
    const fake = apis.state.github.repos.get('octocat/hello-world')!;
    fake.branches.set('docs-typo', fake.branches.get('main')!);
    await run(github, 'create_or_update_file', {
      ...repo,
      path: 'CONTRIBUTING.md',
      content: 'Be kind.\n',
      message: 'Add CONTRIBUTING',
      branch: 'docs-typo',
    });
    const opened = await run(github, 'create_pull_request', {
      ...repo,
      title: 'Contributing guide',
      head: 'docs-typo',
      base: 'main',
      body: 'Adds a guide',
    });
    expect(opened).toMatchObject({ number: 5, state: 'open', head: 'docs-typo', base: 'main', draft: false, merged: false });
    expect((await failure(run(github, 'create_pull_request', { ...repo, title: 'Again', head: 'docs-typo', base: 'main' }))).status).toBe(
      422,
    );

    const moved = await failure(run(github, 'merge_pull_request', { ...repo, pullNumber: 3, sha: '0'.repeat(40) }));
    expect(moved.status).toBe(409);
    expect(await run(github, 'merge_pull_request', { ...repo, pullNumber: 3, sha: pr.head_sha, mergeMethod: 'squash' })).toEqual({
      merged: true,
      sha: expect.stringMatching(/^[0-9a-f]{40}$/),
      message: 'Pull Request successfully merged',
    });
    expect(await run(github, 'get_pull_request', { ...repo, pullNumber: 3 })).toMatchObject({
      state: 'closed',
      merged: true,
      merged_at: expect.any(String),
    });
    expect((await run(github, 'get_file_contents', { ...repo, path: 'src/index.ts' })).content).toContain("+ '!'");
    expect((await failure(run(github, 'merge_pull_request', { ...repo, pullNumber: 3 }))).status).toBe(405);
    expect((await run(github, 'list_pull_requests', { ...repo, state: 'all' })).map((p: { number: number }) => p.number)).toEqual([5, 3]);
  });

  it('search_code and search_issues', async () => {
    const code = await run(github, 'search_code', { query: 'greet repo:octocat/hello-world' });
    expect(code).toEqual({
      total_count: 1,
      incomplete_results: false,
      items: [
        {
          repository: 'octocat/hello-world',
          path: 'src/index.ts',
          name: 'index.ts',
          sha: expect.stringMatching(/^[0-9a-f]{40}$/),
          html_url: 'https://github.com/octocat/hello-world/blob/main/src/index.ts',
        },
      ],
    });
    expect((await run(github, 'search_code', { query: 'nothing-matches-this repo:octocat/hello-world' })).items).toEqual([]);

    const found = await run(github, 'search_issues', { query: 'repo:octocat/hello-world is:issue is:open bug' });
    expect(found.total_count).toBe(1);
    expect(found.items[0]).toMatchObject({
      repository: 'octocat/hello-world',
      number: 1,
      title: 'Found a bug',
      labels: ['bug'],
      is_pull_request: false,
    });
    const prs = await run(github, 'search_issues', { query: 'repo:octocat/hello-world is:pr', sort: 'created', order: 'asc' });
    expect(prs.items.map((i: { number: number }) => i.number)).toEqual([3, 5]);
  });

  it('a token the authorization server did not issue fails with ProviderHttpError 401', async () => {
    const err = await failure(run(github, 'get_authenticated_user', {}, 'gho_not-a-real-token'));
    expect(err.status).toBe(401);
    expect(err.body).toContain('Bad credentials');
  });

  it('identify names the account by its numeric id and login', async () => {
    const who = await github.identify!(contextFor(github));
    expect(who).toEqual({ externalId: expect.stringMatching(/^\d+$/), label: 'octocat' });
  });
});

describe('jira', () => {
  const siteId = () => apis.state.jira.site.id;
  const restPath = (p: string) => `/jira/ex/jira/${siteId()}/rest/api/3${p}`;

  it('discovers the cloudId from accessible-resources when none is given, skipping non-Jira sites', async () => {
    const before = apis.requests.length;
    const page = await run(atlassianJira, 'list_projects');
    const paths = apis.requests.slice(before).map((r) => r.path);
    expect(paths).toEqual(['/jira/oauth/token/accessible-resources', restPath('/project/search')]);
    expect(page).toEqual({
      projects: [
        { id: '10000', key: 'DEMO', name: 'Demo', projectTypeKey: 'software', issueTypes: ['Task', 'Bug', 'Story', 'Epic', 'Subtask'] },
        {
          id: '10001',
          key: 'OPS',
          name: 'Operations',
          projectTypeKey: 'software',
          issueTypes: ['Task', 'Bug', 'Story', 'Epic', 'Subtask'],
        },
      ],
      total: 2,
      isLast: true,
      startAt: 0,
    });

    const again = apis.requests.length;
    expect(
      (await run(atlassianJira, 'list_projects', { cloudId: siteId(), query: 'oper' })).projects.map((p: { key: string }) => p.key),
    ).toEqual(['OPS']);
    expect(apis.requests.slice(again).map((r) => r.path)).toEqual([restPath('/project/search')]);
    expect((await failure(run(atlassianJira, 'list_projects', { cloudId: 'not-a-site' }))).status).toBe(404);
  });

  it('search_issues runs JQL through the enhanced search and pages with nextPageToken', async () => {
    const all = await run(atlassianJira, 'search_issues', { jql: 'project = DEMO ORDER BY created ASC' });
    expect(all).toEqual({
      issues: [
        {
          key: 'DEMO-1',
          id: expect.any(String),
          summary: 'Login page crashes on Safari',
          status: 'In Progress',
          issueType: 'Bug',
          priority: 'High',
          assignee: 'Alice Example',
          updated: expect.any(String),
        },
        {
          key: 'DEMO-2',
          id: expect.any(String),
          summary: 'Write onboarding docs',
          status: 'To Do',
          issueType: 'Task',
          priority: 'Medium',
          assignee: null,
          updated: expect.any(String),
        },
      ],
      nextPageToken: null,
      isLast: true,
    });
    const first = await run(atlassianJira, 'search_issues', { jql: 'project = DEMO ORDER BY created ASC', maxResults: 1 });
    expect(first).toMatchObject({ issues: [{ key: 'DEMO-1' }], isLast: false, nextPageToken: expect.any(String) });
    const second = await run(atlassianJira, 'search_issues', {
      jql: 'project = DEMO ORDER BY created ASC',
      maxResults: 1,
      nextPageToken: first.nextPageToken,
    });
    expect(second).toMatchObject({ issues: [{ key: 'DEMO-2' }], isLast: true, nextPageToken: null });
    expect((await run(atlassianJira, 'search_issues', { jql: 'statusCategory = Done' })).issues.map((i: { key: string }) => i.key)).toEqual(
      ['OPS-1'],
    );

    const bad = await failure(run(atlassianJira, 'search_issues', { jql: 'colour = blue' }));
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).errorMessages[0]).toContain("Field 'colour' does not exist");
    expect((await failure(run(atlassianJira, 'search_issues', { jql: 'ORDER BY created DESC' }))).body).toContain('Unbounded JQL');
  });

  it('get_issue reads the ADF description and comments as text', async () => {
    expect(await run(atlassianJira, 'get_issue', { issueKey: 'DEMO-1' })).toEqual({
      key: 'DEMO-1',
      id: expect.any(String),
      summary: 'Login page crashes on Safari',
      status: 'In Progress',
      statusCategory: 'In Progress',
      issueType: 'Bug',
      priority: 'High',
      assignee: { accountId: expect.stringMatching(/^712020:/), displayName: 'Alice Example' },
      reporter: { accountId: expect.stringMatching(/^712020:/), displayName: 'Alice Example' },
      labels: ['frontend'],
      project: { key: 'DEMO', name: 'Demo' },
      parent: null,
      description: 'Steps: open the login page in Safari 17.',
      created: expect.any(String),
      updated: expect.any(String),
      commentCount: 1,
      comments: [{ id: expect.any(String), author: 'Alice Example', created: expect.any(String), body: 'Reproduced on macOS 14.' }],
    });
    expect((await failure(run(atlassianJira, 'get_issue', { issueKey: 'DEMO-99' }))).status).toBe(404);
  });

  it('create_issue, update_issue and add_comment change the issue, with text sent as ADF', async () => {
    const description = 'What happens:\nthe export times out.\n\nExpected: it finishes.';
    const created = await run(atlassianJira, 'create_issue', {
      projectKey: 'DEMO',
      summary: 'Export times out',
      description,
      issueType: 'Bug',
      labels: ['export'],
    });
    expect(created).toEqual({ id: expect.any(String), key: 'DEMO-3' });
    expect(apis.state.jira.issues.get('DEMO-3')?.description).toMatchObject({
      type: 'doc',
      version: 1,
      content: [{ type: 'paragraph' }, { type: 'paragraph' }],
    });
    expect(await run(atlassianJira, 'get_issue', { issueKey: 'DEMO-3' })).toMatchObject({
      summary: 'Export times out',
      issueType: 'Bug',
      status: 'To Do',
      labels: ['export'],
      reporter: { displayName: 'jo' },
      description,
    });
    const invalid = await failure(run(atlassianJira, 'create_issue', { projectKey: 'NOPE', summary: 'x', issueType: 'Gizmo' }));
    expect(JSON.parse(invalid.body).errors).toEqual({ project: 'valid project is required', issuetype: 'Specify a valid issue type' });

    expect(
      await run(atlassianJira, 'update_issue', { issueKey: 'DEMO-3', summary: 'Export times out for large files', priority: 'Highest' }),
    ).toEqual({
      key: 'DEMO-3',
      updated: ['summary', 'priority'],
    });
    expect(await run(atlassianJira, 'get_issue', { issueKey: 'DEMO-3' })).toMatchObject({
      summary: 'Export times out for large files',
      priority: 'Highest',
    });

    expect(await run(atlassianJira, 'add_comment', { issueKey: 'DEMO-3', body: 'Seen on 2 GB files.' })).toEqual({
      id: expect.any(String),
      author: 'jo',
      created: expect.any(String),
    });
    expect(await run(atlassianJira, 'get_issue', { issueKey: 'DEMO-3' })).toMatchObject({
      commentCount: 1,
      comments: [{ author: 'jo', body: 'Seen on 2 GB files.' }],
    });
  });

  it('list_transitions and transition_issue move the issue, by id or by name', async () => {
    const { transitions } = await run(atlassianJira, 'list_transitions', { issueKey: 'DEMO-3' });
    expect(transitions).toEqual([
      { id: '21', name: 'In Progress', toStatus: 'In Progress', toCategory: 'In Progress' },
      { id: '31', name: 'Done', toStatus: 'Done', toCategory: 'Done' },
    ]);
    expect(await run(atlassianJira, 'transition_issue', { issueKey: 'DEMO-3', transition: '21' })).toEqual({
      key: 'DEMO-3',
      transitionId: '21',
      toStatus: 'In Progress',
    });
    expect(await run(atlassianJira, 'transition_issue', { issueKey: 'DEMO-3', transition: 'done', comment: 'Fixed in 2.4' })).toEqual({
      key: 'DEMO-3',
      transitionId: '31',
      toStatus: 'Done',
    });
    expect(await run(atlassianJira, 'get_issue', { issueKey: 'DEMO-3' })).toMatchObject({
      status: 'Done',
      statusCategory: 'Done',
      commentCount: 2,
    });
    const unavailable = await failure(run(atlassianJira, 'transition_issue', { issueKey: 'DEMO-3', transition: 'Done' }));
    expect(unavailable.status).toBe(400);
    expect(unavailable.body).toContain('available: 11 "To Do", 21 "In Progress"');
  });

  it('assign_issue assigns to "me", to an accountId, or unassigns', async () => {
    const jo = apis.state.jira.accountIdOf('jo');
    expect(await run(atlassianJira, 'assign_issue', { issueKey: 'DEMO-2', accountId: 'me' })).toEqual({
      key: 'DEMO-2',
      assignee: { accountId: jo, displayName: 'jo' },
    });
    expect(
      (await run(atlassianJira, 'search_issues', { jql: 'assignee = currentUser()' })).issues.map((i: { key: string }) => i.key),
    ).toEqual(['DEMO-2']);
    const alice = apis.state.jira.accountIdOf('Alice Example');
    await run(atlassianJira, 'assign_issue', { issueKey: 'DEMO-2', accountId: alice });
    expect((await run(atlassianJira, 'get_issue', { issueKey: 'DEMO-2' })).assignee).toEqual({
      accountId: alice,
      displayName: 'Alice Example',
    });
    expect(await run(atlassianJira, 'assign_issue', { issueKey: 'DEMO-2', accountId: null })).toEqual({ key: 'DEMO-2', assignee: null });
    expect(apis.state.jira.issues.get('DEMO-2')?.assignee).toBeNull();
    expect((await failure(run(atlassianJira, 'assign_issue', { issueKey: 'DEMO-2', accountId: 'no-such-account' }))).status).toBe(400);
  });

  it('identify names the account by site and accountId; a bad token fails with 401', async () => {
    expect(await atlassianJira.identify!(contextFor(atlassianJira))).toEqual({
      externalId: `${siteId()}:${apis.state.jira.accountIdOf('jo')}`,
      label: 'jo@acme',
    });
    expect((await failure(run(atlassianJira, 'get_issue', { issueKey: 'DEMO-1', cloudId: siteId() }, 'not-a-real-token'))).status).toBe(
      401,
    );
    expect((await failure(run(atlassianJira, 'list_projects', {}, 'not-a-real-token'))).status).toBe(401);
  });
});

describe('slack', () => {
  const general = 'C0GENERAL01';

  it('list_channels lists public channels, with cursors', async () => {
    const all = await run(slack, 'list_channels');
    expect(all.nextCursor).toBeNull();
    expect(all.channels.map((c: { name: string }) => c.name)).toEqual(['general', 'random', 'old-project']);
    expect(all.channels[0]).toEqual({
      id: general,
      name: 'general',
      is_private: false,
      is_archived: false,
      is_member: false,
      num_members: 1,
      topic: 'Company-wide announcements',
      purpose: 'This channel is for team-wide communication.',
    });
    expect((await run(slack, 'list_channels', { excludeArchived: true })).channels).toHaveLength(2);
    const first = await run(slack, 'list_channels', { limit: 2 });
    expect(first.nextCursor).toEqual(expect.any(String));
    const rest = await run(slack, 'list_channels', { limit: 2, cursor: first.nextCursor });
    expect(rest).toEqual({ channels: [expect.objectContaining({ name: 'old-project', is_archived: true })], nextCursor: null });
  });

  it('send_message posts JSON with a charset; get_channel_history shows it newest first', async () => {
    const before = apis.requests.length;
    const sent = await run(slack, 'send_message', { channel: '#general', text: 'Release *2.4* is out' });
    expect(sent).toEqual({ channel: general, ts: expect.stringMatching(/^\d+\.\d{6}$/), text: 'Release *2.4* is out' });
    expect(apis.requests.slice(before)).toEqual([
      { method: 'POST', path: '/slack/chat.postMessage', subject: 'jo', contentType: 'application/json; charset=utf-8', credential: true },
    ]);
    const history = await run(slack, 'get_channel_history', { channel: general });
    expect(history).toEqual({
      messages: [
        { ts: sent.ts, user: apis.state.slack.userIdOf('jo'), text: 'Release *2.4* is out' },
        { ts: expect.any(String), user: expect.any(String), text: 'The deploy of v2.3 is done :rocket:' },
        { ts: expect.any(String), user: expect.any(String), text: 'Welcome to Acme!' },
      ],
      hasMore: false,
      nextCursor: null,
    });
    expect(apis.requests.at(-1)).toMatchObject({ method: 'GET', path: '/slack/conversations.history' });

    const reply = await run(slack, 'send_message', { channel: general, text: 'Changelog in thread', threadTs: sent.ts });
    expect(reply).toMatchObject({ channel: general, thread_ts: sent.ts });
    const paged = await run(slack, 'get_channel_history', { channel: general, limit: 1 });
    expect(paged).toMatchObject({
      messages: [{ ts: sent.ts, reply_count: 1, thread_ts: sent.ts }],
      hasMore: true,
      nextCursor: expect.any(String),
    });
    const older = await run(slack, 'get_channel_history', { channel: general, limit: 1, cursor: paged.nextCursor });
    expect(older.messages[0].text).toBe('The deploy of v2.3 is done :rocket:');
  });

  it('update_message edits only the connection’s own messages', async () => {
    const sent = await run(slack, 'send_message', { channel: 'C0RANDOM001', text: 'Lunch at 1?' });
    expect(await run(slack, 'update_message', { channel: 'C0RANDOM001', ts: sent.ts, text: 'Lunch at 1:30?' })).toEqual({
      channel: 'C0RANDOM001',
      ts: sent.ts,
      text: 'Lunch at 1:30?',
    });
    expect(apis.state.slack.channels[1].messages.find((m) => m.ts === sent.ts)?.text).toBe('Lunch at 1:30?');
    const alicesTs = apis.state.slack.channels[1].messages[0].ts;
    const err = await failure(run(slack, 'update_message', { channel: 'C0RANDOM001', ts: alicesTs, text: 'hijacked' }));
    expect([err.status, err.body]).toEqual([400, 'cant_update_message']);
  });

  it('add_reaction strips colons and refuses a duplicate', async () => {
    const [latest] = (await run(slack, 'get_channel_history', { channel: general, limit: 1 })).messages;
    expect(await run(slack, 'add_reaction', { channel: general, ts: latest.ts, name: ':eyes:' })).toEqual({
      channel: general,
      ts: latest.ts,
      name: 'eyes',
    });
    expect((await run(slack, 'get_channel_history', { channel: general, limit: 1 })).messages[0].reactions).toEqual([
      { name: 'eyes', count: 1 },
    ]);
    const again = await failure(run(slack, 'add_reaction', { channel: general, ts: latest.ts, name: 'eyes' }));
    expect([again.status, again.body]).toEqual([400, 'already_reacted']);
    const gone = await failure(run(slack, 'add_reaction', { channel: general, ts: '1.000001', name: 'eyes' }));
    expect([gone.status, gone.body]).toEqual([404, 'message_not_found']);
  });

  it('search_messages returns slim matches with permalinks', async () => {
    const found = await run(slack, 'search_messages', { query: 'deploy in:#general' });
    expect(found).toEqual({
      total: 1,
      page: 1,
      pages: 1,
      matches: [
        {
          channel: { id: general, name: 'general' },
          ts: expect.any(String),
          user: apis.state.slack.userIdOf('alice'),
          username: 'alice',
          text: 'The deploy of v2.3 is done :rocket:',
          permalink: expect.stringMatching(/^https:\/\/acme\.slack\.com\/archives\/C0GENERAL01\/p\d+$/),
        },
      ],
    });
    expect((await run(slack, 'search_messages', { query: 'deploy in:#random' })).total).toBe(0);
  });

  it('get_user_info returns a slim profile', async () => {
    expect(await run(slack, 'get_user_info', { user: apis.state.slack.userIdOf('alice') })).toEqual({
      id: apis.state.slack.userIdOf('alice'),
      name: 'alice',
      real_name: 'Alice Example',
      display_name: 'alice',
      title: 'Engineering Manager',
      email: null,
      tz: 'Europe/Berlin',
      is_bot: false,
      is_admin: true,
      deleted: false,
    });
  });

  it('maps ok:false answers to ProviderHttpErrors with HTTP-like statuses', async () => {
    const expectError = async (call: Promise<unknown>, status: number, body: string) => {
      const err = await failure(call);
      expect([err.status, err.body]).toEqual([status, body]);
    };
    await expectError(run(slack, 'get_user_info', { user: 'U000NOBODY' }), 404, 'user_not_found');
    await expectError(run(slack, 'get_channel_history', { channel: 'C0SECRET001' }), 404, 'channel_not_found');
    await expectError(run(slack, 'send_message', { channel: 'C0ARCHIVE01', text: 'hello?' }), 400, 'is_archived');
    await expectError(run(slack, 'list_channels', {}, 'xoxp-not-a-real-token'), 401, 'invalid_auth');
    // Slack answers a rate limit with HTTP 429, and some gateways with HTTP 200 and ok:false.
    apis.behave.set('/slack/users.info', { status: 200, body: { ok: false, error: 'ratelimited' }, times: 1 });
    await expectError(run(slack, 'get_user_info', { user: 'U1' }), 429, 'ratelimited');
    apis.behave.set('/slack/users.info', { status: 429, body: { ok: false, error: 'ratelimited' }, times: 1 });
    expect((await failure(run(slack, 'get_user_info', { user: 'U1' }))).status).toBe(429);
  });

  it('identify names the account team:user', async () => {
    expect(await slack.identify!(contextFor(slack))).toEqual({
      externalId: `T0ACME0001:${apis.state.slack.userIdOf('jo')}`,
      label: 'jo@Acme',
    });
  });
});

describe("rate limits: each service's own way of saying how long to wait", () => {
  it('GitHub 403 with x-ratelimit-remaining 0, Jira 429 with Retry-After and an ISO reset, Slack 429 and ok:false ratelimited', async () => {
    const reset = Math.floor(Date.now() / 1000) + 120;
    apis.behave.set('/github/user', {
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset), 'x-ratelimit-resource': 'core' },
      body: { message: 'API rate limit exceeded for user ID 1.' },
      times: 1,
    });
    const gh = await failure(run(github, 'get_authenticated_user'));
    expect(gh.status).toBe(403);
    expect(gh.retryAfterSec).toBeGreaterThanOrEqual(118);
    expect(gh.retryAfterSec).toBeLessThanOrEqual(121);

    apis.behave.set(`/jira/ex/jira/${apis.state.jira.site.id}/rest/api/3/project/search`, {
      status: 429,
      headers: { 'retry-after': '12', 'x-ratelimit-reset': new Date(Date.now() + 12_000).toISOString() },
      times: 1,
    });
    const jira = await failure(run(atlassianJira, 'list_projects', { cloudId: apis.state.jira.site.id }));
    expect([jira.status, jira.retryAfterSec]).toEqual([429, 12]);

    apis.behave.set('/slack/users.info', {
      status: 429,
      headers: { 'retry-after': '30' },
      body: { ok: false, error: 'ratelimited' },
      times: 1,
    });
    const slackLimited = await failure(run(slack, 'get_user_info', { user: 'U1' }));
    expect([slackLimited.status, slackLimited.retryAfterSec]).toEqual([429, 30]);
    apis.behave.set('/slack/users.info', {
      status: 200,
      headers: { 'retry-after': '4' },
      body: { ok: false, error: 'ratelimited' },
      times: 1,
    });
    expect((await failure(run(slack, 'get_user_info', { user: 'U1' }))).retryAfterSec).toBe(4);
    // Not a rate limit: no wait.
    expect((await failure(run(slack, 'get_user_info', { user: 'U000NOBODY' }))).retryAfterSec).toBeUndefined();
  });

  it("Linear's RATELIMITED error (HTTP 400 or 200) with its reset in epoch milliseconds", async () => {
    apis.state.linear.grantKey('lin_api_ratelimits', { name: 'Rae', email: 'rae@linear.example' });
    const ctx = createToolContext({
      provider: linear,
      credential: { type: 'apikey', fields: { apiKey: 'lin_api_ratelimits' } },
      apiBaseUrl: `${apis.baseUrl}/linear`,
      signal: AbortSignal.timeout(10_000),
      logger: { info() {}, warn() {} },
      caller: { tenantId: 'tenant-1', userId: 'user-1' },
    });
    const listTeams = linear.tools.find((t) => t.name === 'list_teams')!;
    const limited = (status: number) =>
      apis.behave.set('/linear/graphql', {
        status,
        headers: { 'x-ratelimit-requests-remaining': '0', 'x-ratelimit-requests-reset': String(Date.now() + 45_000) },
        body: { errors: [{ message: 'Rate limit exceeded', extensions: { code: 'RATELIMITED' } }] },
        times: 1,
      });
    for (const status of [400, 200]) {
      limited(status);
      const err = await failure(listTeams.run(listTeams.input.parse({}), ctx));
      expect(err.status).toBe(429);
      expect(err.retryAfterSec).toBeGreaterThanOrEqual(43);
      expect(err.retryAfterSec).toBeLessThanOrEqual(46);
    }
  });
});

describe('coverage', () => {
  it('every tool of the three catalogs ran above', () => {
    const all = [github, atlassianJira, slack].flatMap((p) => p.tools.map((t) => `${p.manifest.toolPrefix}_${t.name}`));
    expect(all.filter((name) => !called.has(name))).toEqual([]);
  });
});
