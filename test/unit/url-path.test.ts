import { describe, expect, it } from 'vitest';
import { atlassianJira } from '../../providers/builtin/atlassian-jira/index.js';
import { github } from '../../providers/builtin/github/index.js';
import type { Provider, ToolContext } from '../../providers/sdk/index.js';
import { apiPath, segment, segments, UnsafePathArgument } from '../../providers/sdk/url-path.js';

/** Values an agent could send to climb out of its path segment, as the server or a proxy would read them. */
const HOSTILE_SEGMENTS = [
  '',
  '.',
  '..',
  ' .. ',
  '%2e',
  '%2e%2e',
  '%2E%2E',
  '.%2e',
  '%2e.',
  '%252e%252e',
  '..\\..',
  'a\\b',
  'a/b',
  '../pulls/1/merge',
  'a%2fb',
  'a%2Fb',
  'a%5cb',
  '%252f',
  '\uff0e\uff0e', // fullwidth dots fold to ".." under NFKC
  'a\u0000b',
  'a\r\nHost: evil',
  '..;', // Tomcat-style servers strip `;params` before resolving dot segments
  '..;jsessionid=x',
  '%2e%2e%3bx',
];

const rejection = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err;
  }
  return undefined;
};

describe('finding 2: path builder', () => {
  it.each(HOSTILE_SEGMENTS.map((v) => [JSON.stringify(v), v]))('finding 2: segment() refuses %s, naming the argument', (_, value) => {
    const err = rejection(() => segment('owner', value));
    expect(err).toBeInstanceOf(UnsafePathArgument);
    expect((err as UnsafePathArgument).code).toBe('invalid_arguments');
    expect((err as UnsafePathArgument).argument).toBe('owner');
    expect((err as Error).message).toMatch(/^owner: must /);
  });

  it('escapes ordinary values as one segment', () => {
    expect(apiPath`/repos/${segment('owner', 'octo cat')}/${segment('repo', 'hello-world.js')}`).toBe('/repos/octo%20cat/hello-world.js');
    expect(apiPath`/issue/${segment('issueKey', 'PROJ-1')}?x=1`).toBe('/issue/PROJ-1?x=1');
    expect(apiPath`/pulls/${segment('pullNumber', 42)}/merge`).toBe('/pulls/42/merge');
    expect(apiPath`/f/${segment('name', '100%.md')}`).toBe('/f/100%25.md');
    expect(apiPath`/f/${segment('name', '...')}`).toBe('/f/...');
    expect(apiPath`/f/${segment('name', 'a?b#c')}`).toBe('/f/a%3Fb%23c');
    expect(rejection(() => segment('n', 1.5))).toBeInstanceOf(UnsafePathArgument);
  });

  it.each([
    ['../pulls/1/merge'],
    ['docs/../../pulls/1/merge'],
    ['docs/./x'],
    ['docs//x'],
    ['docs/%2e%2e/x'],
    ['docs\\..\\x'],
    ['docs/a%2fb'],
  ])('finding 2: segments() refuses the file path %j, naming the argument', (value) => {
    const err = rejection(() => segments('path', value));
    expect(err).toBeInstanceOf(UnsafePathArgument);
    expect((err as UnsafePathArgument).argument).toBe('path');
  });

  it('keeps the slashes of an ordinary file path and escapes each segment', () => {
    expect(apiPath`/contents/${segments('path', 'src/my file.ts')}`).toBe('/contents/src/my%20file.ts');
    expect(apiPath`/contents/${segments('path', '/docs/notes.md/')}`).toBe('/contents/docs/notes.md');
    expect(apiPath`/contents${segments('path', '')}`).toBe('/contents');
  });

  it('apiPath takes no unchecked string', () => {
    // @ts-expect-error a plain string is not a checked part
    expect(() => apiPath`/repos/${'..'}`).toThrow(TypeError);
  });
});

/** A context whose fetch records what it was asked for and answers an empty JSON object. */
function recordingContext(): { ctx: ToolContext; requested: string[] } {
  const requested: string[] = [];
  const ctx: ToolContext = {
    credential: { type: 'oauth2', accessToken: 'token' },
    apiBaseUrl: 'https://api.example.test/base',
    signal: AbortSignal.timeout(5000),
    logger: { info() {}, warn() {} },
    caller: { tenantId: 't', userId: 'u' },
    async fetch(path) {
      requested.push(path);
      return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
    },
  };
  return { ctx, requested };
}

const repo = { owner: 'octocat', repo: 'hello-world' };
const site = { cloudId: 'site-1' };
/** Tool, arguments, and the argument that carries the hostile value. */
const ATTACKS: [Provider, string, Record<string, unknown>, string][] = [
  [github, 'create_or_update_file', { ...repo, path: '../pulls/1/merge', content: 'x', message: 'm' }, 'path'],
  [github, 'get_file_contents', { ...repo, path: 'docs/../../../../user' }, 'path'],
  [github, 'get_repo', { owner: '..', repo: '..' }, 'owner'],
  [github, 'get_repo', { owner: 'octocat', repo: '..' }, 'repo'],
  [github, 'merge_pull_request', { owner: '.', repo: 'hello-world', pullNumber: 1 }, 'owner'],
  [github, 'list_issues', { owner: 'octocat', repo: '%2e%2e' }, 'repo'],
  [github, 'comment_on_issue', { owner: 'octocat', repo: 'a/b', issueNumber: 1, body: 'x' }, 'repo'],
  [atlassianJira, 'get_issue', { ...site, issueKey: '..' }, 'issueKey'],
  [atlassianJira, 'assign_issue', { ...site, issueKey: '..', accountId: 'x' }, 'issueKey'],
  [atlassianJira, 'add_comment', { ...site, issueKey: '.', body: 'x' }, 'issueKey'],
  [atlassianJira, 'get_issue', { cloudId: '..', issueKey: 'PROJ-1' }, 'cloudId'],
  [atlassianJira, 'list_projects', { cloudId: '..' }, 'cloudId'],
];

describe('finding 2: provider tools', () => {
  it.each(ATTACKS.map(([p, tool, args, arg]) => [`${p.manifest.toolPrefix}_${tool}`, arg, p, tool, args] as const))(
    'finding 2: %s refuses a hostile %s before any request is sent',
    async (_, argument, provider, toolName, args) => {
      const tool = provider.tools.find((t) => t.name === toolName)!;
      const { ctx, requested } = recordingContext();
      const err = await tool.run(tool.input.parse(args), ctx).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(UnsafePathArgument);
      expect((err as UnsafePathArgument).argument).toBe(argument);
      expect(requested).toEqual([]);
    },
  );
});
