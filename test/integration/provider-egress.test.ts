import { beforeEach, describe, expect, it } from 'vitest';
import { atlassianJira } from '../../providers/builtin/atlassian-jira/index.js';
import { github } from '../../providers/builtin/github/index.js';
import { hackernews } from '../../providers/builtin/hackernews/index.js';
import { linear } from '../../providers/builtin/linear/index.js';
import { slack } from '../../providers/builtin/slack/index.js';
import { OutsideApiBase } from '../../providers/sdk/api-base.js';
import type { Credential, Provider } from '../../providers/sdk/index.js';
import { createToolContext } from '../../providers/sdk/tool-context.js';
import { UnsafePathArgument } from '../../providers/sdk/url-path.js';
import { startWorld } from '../support/harness.js';

/**
 * Finding 2 over real HTTP: whatever an agent's arguments or an upstream answer (redirect,
 * pagination link) name, a tool's request — and above all its credential — stays inside the
 * provider's API base. The attacker is an agent choosing tool arguments, or a service answering
 * with a hostile Location; "elsewhere" is another origin that records every request it gets.
 */

const world = await startWorld({ clients: { github: {}, jira: {}, slack: {} }, apis: true, stack: false });
const { apis } = world;
const LINEAR_KEY = 'lin_api_egress_0123456789';
apis.state.linear.grantKey(LINEAR_KEY, { name: 'Lin Egress', email: 'lin@egress.example' });
const tokens: Record<string, string> = {
  github: await world.accessToken('github', 'octocat'),
  'atlassian-jira': await world.accessToken('jira', 'jo'),
  slack: await world.accessToken('slack', 'jo'),
};
const got: { path: string; authorization?: string; cookie?: string }[] = [];
const elsewhere = {
  ...(await world.serve((req, res) => {
    got.push({ path: req.url ?? '', authorization: req.headers.authorization, cookie: req.headers.cookie });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"data":{}}');
  })),
  got,
};

beforeEach(() => {
  apis.requests.length = 0;
  apis.behave.clear();
  elsewhere.got.length = 0;
});

const MOUNT: Record<string, string> = { github: 'github', 'atlassian-jira': 'jira', slack: 'slack', linear: 'linear', hackernews: 'hn' };
const credentialOf = (provider: Provider): Credential => {
  if (provider === linear) return { type: 'apikey', fields: { apiKey: LINEAR_KEY } };
  if (provider === hackernews) return { type: 'cookie', cookies: [{ name: 'user', value: 'pg&secret-session', domain: '127.0.0.1' }] };
  return { type: 'oauth2', accessToken: tokens[provider.manifest.name] };
};
const contextFor = (provider: Provider) =>
  createToolContext({
    provider,
    credential: credentialOf(provider),
    apiBaseUrl: `${apis.baseUrl}/${MOUNT[provider.manifest.name]}`,
    signal: AbortSignal.timeout(10_000),
    logger: { info() {}, warn() {} },
    caller: { tenantId: 'tenant-1', userId: 'user-1' },
  });

async function runTool(provider: Provider, name: string, args: Record<string, unknown>): Promise<unknown> {
  const tool = provider.tools.find((t) => t.name === name)!;
  return tool.run(tool.input.parse(args), contextFor(provider)).then(
    () => undefined,
    (err: unknown) => err,
  );
}

/** Requests the fake services got outside `/<mount>/` (above the API base), and those that carried a credential. */
const outside = (mount: string) => apis.requests.filter((r) => !r.path.startsWith(`/${mount}/`));

const repo = { owner: 'octocat', repo: 'hello-world' };

describe('finding 2: GitHub', () => {
  it('finding 2: create_or_update_file with path "../pulls/3/merge" never reaches the merge endpoint', async () => {
    const pull = apis.state.github.repos.get('octocat/hello-world')!.issues.find((i) => i.number === 3)!;
    const err = await runTool(github, 'create_or_update_file', { ...repo, path: '../pulls/3/merge', content: 'x', message: 'merge it' });
    expect(err).toBeInstanceOf(UnsafePathArgument);
    expect((err as UnsafePathArgument).argument).toBe('path');
    expect(apis.requests.filter((r) => r.path.includes('/merge'))).toEqual([]);
    expect(pull.pull?.mergedAt).toBeNull();
  });

  it('finding 2: owner ".." and repo ".." never reach a path above the API base, with or without the token', async () => {
    for (const args of [
      { owner: '..', repo: '..' },
      { owner: '%2e%2e', repo: '%2e%2e' },
      { owner: 'octocat', repo: '..' },
    ]) {
      const err = await runTool(github, 'get_file_contents', { ...args, path: 'jira/oauth/token/accessible-resources' });
      expect(err).toBeInstanceOf(UnsafePathArgument);
    }
    expect(apis.requests).toEqual([]);
  });

  it('finding 2: the tool context refuses a path whose ".." climbs above the base and sends nothing', async () => {
    const ctx = contextFor(github);
    for (const path of [
      '/../jira/oauth/token/accessible-resources',
      '/repos/%2e%2e/%2e%2e/%2e%2e/slack/auth.test',
      '/..\\..\\linear/graphql',
    ]) {
      await expect(ctx.fetch(path)).rejects.toBeInstanceOf(OutsideApiBase);
    }
    await expect(ctx.fetch(`${apis.baseUrl}/github/../slack/auth.test`)).rejects.toBeInstanceOf(OutsideApiBase);
    expect(apis.requests).toEqual([]);
    // Inside the base it still works, absolute or relative.
    expect((await ctx.fetch(`${apis.baseUrl}/github/user`)).status).toBe(200);
    expect((await ctx.fetch('/repos/octocat/hello-world/../hello-world')).status).toBe(200);
  });

  it('finding 2: a pagination link to another origin gets no request, so no token', async () => {
    const ctx = contextFor(github);
    await expect(ctx.fetch(`${elsewhere.url}/github/user/repos?page=2`)).rejects.toBeInstanceOf(OutsideApiBase);
    await expect(ctx.fetch(`http://user:pw@${new URL(apis.baseUrl).host}/github/user`)).rejects.toBeInstanceOf(OutsideApiBase);
    expect(elsewhere.got).toEqual([]);
  });

  it('finding 2: a redirect from the API to another origin or outside the base is not followed with the token', async () => {
    apis.behave.set('/github/user', { status: 302, headers: { location: `${elsewhere.url}/collect` } });
    await expect(runTool(github, 'get_authenticated_user', {})).resolves.toBeInstanceOf(OutsideApiBase);
    apis.behave.set('/github/user', { status: 301, headers: { location: '/jira/oauth/token/accessible-resources' } });
    await expect(runTool(github, 'get_authenticated_user', {})).resolves.toBeInstanceOf(OutsideApiBase);
    expect(elsewhere.got).toEqual([]);
    expect(outside('github')).toEqual([]);
    // A redirect that stays inside the base is followed, credential and all (GitHub's renamed repositories).
    apis.behave.set('/github/user', { status: 301, headers: { location: `${apis.baseUrl}/github/repos/octocat/hello-world` }, times: 1 });
    const ok = await contextFor(github).fetch('/user');
    expect(ok.status).toBe(200);
    expect(apis.requests.at(-1)).toMatchObject({ path: '/github/repos/octocat/hello-world', subject: 'octocat' });
  });
});

describe('finding 2: Jira', () => {
  it('finding 2: a cloudId or issueKey of ".." never moves the request out of the site', async () => {
    for (const [tool, args, argument] of [
      ['get_issue', { cloudId: '..', issueKey: 'PROJ-1' }, 'cloudId'],
      ['assign_issue', { issueKey: '..', accountId: 'x' }, 'issueKey'],
      ['transition_issue', { issueKey: '%2e%2e', transition: 'Done' }, 'issueKey'],
    ] as const) {
      const err = await runTool(atlassianJira, tool, args);
      expect(err).toBeInstanceOf(UnsafePathArgument);
      expect((err as UnsafePathArgument).argument).toBe(argument);
    }
    expect(apis.requests.filter((r) => !r.path.startsWith('/jira/oauth/'))).toEqual([]);
  });

  it('finding 2: an accessible-resources answer redirecting elsewhere gets no token', async () => {
    apis.behave.set('/jira/oauth/token/accessible-resources', { status: 307, headers: { location: `${elsewhere.url}/sites` } });
    expect(await runTool(atlassianJira, 'list_projects', {})).toBeInstanceOf(OutsideApiBase);
    expect(elsewhere.got).toEqual([]);
  });
});

describe('finding 2: Slack', () => {
  it('finding 2: a redirect to a same-origin path outside the Slack base does not carry the token', async () => {
    apis.behave.set('/slack/chat.postMessage', { status: 307, headers: { location: '/github/user/repos' } });
    expect(await runTool(slack, 'send_message', { channel: '#general', text: 'hi' })).toBeInstanceOf(OutsideApiBase);
    expect(outside('slack')).toEqual([]);
  });

  it('finding 2: an encoded dot segment or slash that a server or proxy would decode never leaves the tool context', async () => {
    // The URL parser resolves only `.`, `..` and `%2e`; a proxy or framework that decodes once more (or honours
    // `..;`, as Tomcat does) would turn these into `/slack/../github/user`, credential attached.
    const ctx = contextFor(slack);
    for (const path of [
      '/..%2fgithub%2fuser',
      '/..%2Fgithub/user',
      '/%252e%252e/github/user',
      '/..%5cgithub/user',
      '/..;/github/user',
      '/%2e%2e;x/github/user',
      `${apis.baseUrl}/slack/..%2f..%2fgithub/user`,
    ]) {
      await expect(ctx.fetch(path), path).rejects.toBeInstanceOf(OutsideApiBase);
    }
    // The same from a redirect's Location.
    apis.behave.set('/slack/users.info', { status: 302, headers: { location: '/slack/..%2f..%2fgithub/user' } });
    expect(await runTool(slack, 'get_user_info', { user: 'U123' })).toBeInstanceOf(OutsideApiBase);
    expect(apis.requests.map((r) => r.path)).toEqual(['/slack/users.info']);
  });

  it('a 307 that stays inside the base is followed with its method, body and token', async () => {
    apis.behave.set('/slack/chat.update', { status: 307, headers: { location: 'chat.postMessage' }, times: 1 });
    const sent = (await contextFor(slack)
      .fetch('/chat.update', {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ channel: '#general', text: 'moved' }),
      })
      .then((r) => r.json())) as { ok: boolean; message?: { text: string } };
    expect(sent).toMatchObject({ ok: true, message: { text: 'moved' } });
    expect(apis.requests.map((r) => [r.method, r.path, r.subject])).toEqual([
      ['POST', '/slack/chat.update', 'jo'],
      ['POST', '/slack/chat.postMessage', 'jo'],
    ]);
  });

  it('finding 2: a redirect to another origin is not followed at all', async () => {
    apis.behave.set('/slack/users.info', { status: 302, headers: { location: `${elsewhere.url}/users.info` } });
    expect(await runTool(slack, 'get_user_info', { user: 'U123' })).toBeInstanceOf(OutsideApiBase);
    expect(elsewhere.got).toEqual([]);
  });
});

describe('finding 2: Linear', () => {
  it('finding 2: a 307 from /graphql to another path or origin never gets the API key', async () => {
    apis.behave.set('/linear/graphql', { status: 307, headers: { location: '/admin/graphql' } });
    expect(await runTool(linear, 'list_teams', {})).toBeInstanceOf(OutsideApiBase);
    apis.behave.set('/linear/graphql', { status: 308, headers: { location: `${elsewhere.url}/graphql` } });
    expect(await runTool(linear, 'list_teams', {})).toBeInstanceOf(OutsideApiBase);
    expect(outside('linear')).toEqual([]);
    expect(elsewhere.got).toEqual([]);
  });
});

describe('finding 2: Hacker News', () => {
  it('finding 2: the session cookie never goes to a link on another origin or above the base', async () => {
    const ctx = contextFor(hackernews);
    // A story's link, or a "More" link an answer could point anywhere.
    await expect(ctx.fetch(`${elsewhere.url}/news?p=2`)).rejects.toBeInstanceOf(OutsideApiBase);
    await expect(ctx.fetch('/../github/user')).rejects.toBeInstanceOf(OutsideApiBase);
    expect(elsewhere.got).toEqual([]);
    expect(outside('hn')).toEqual([]);
  });
});
