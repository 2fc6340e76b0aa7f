import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { adfToText, textToAdf } from '../../providers/builtin/atlassian-jira/adf.js';
import { atlassianJira } from '../../providers/builtin/atlassian-jira/index.js';
import { github } from '../../providers/builtin/github/index.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { linearErrorStatus } from '../../providers/builtin/linear/api.js';
import { linear } from '../../providers/builtin/linear/index.js';
import { slackErrorStatus } from '../../providers/builtin/slack/api.js';
import { slack } from '../../providers/builtin/slack/index.js';
import { applyCredential } from '../../providers/sdk/tool-context.js';

const catalog = [github, atlassianJira, slack];
const rows = catalog.flatMap((p) =>
  p.tools.map((tool) => ({ provider: p.manifest.name, flat: `${p.manifest.toolPrefix}_${tool.name}`, tool })),
);

describe('the tool catalog', () => {
  it('has the tools of the brief, per provider', () => {
    expect(github.tools.map((t) => t.name).sort()).toEqual(
      [
        'list_repos',
        'get_repo',
        'list_issues',
        'get_issue',
        'create_issue',
        'update_issue',
        'comment_on_issue',
        'list_pull_requests',
        'get_pull_request',
        'create_pull_request',
        'merge_pull_request',
        'list_branches',
        'list_commits',
        'get_file_contents',
        'create_or_update_file',
        'search_code',
        'search_issues',
        'get_authenticated_user',
      ].sort(),
    );
    expect(atlassianJira.tools.map((t) => t.name).sort()).toEqual(
      [
        'search_issues',
        'get_issue',
        'create_issue',
        'update_issue',
        'add_comment',
        'list_transitions',
        'transition_issue',
        'assign_issue',
        'list_projects',
      ].sort(),
    );
    expect(slack.tools.map((t) => t.name).sort()).toEqual(
      ['send_message', 'update_message', 'list_channels', 'get_channel_history', 'search_messages', 'add_reaction', 'get_user_info'].sort(),
    );
  });

  it.each(rows.map((r) => [r.flat, r] as const))(
    '%s: description, schema, access and scopes are well-formed',
    (_flat, { tool, provider }) => {
      expect(tool.description.trim().length).toBeGreaterThanOrEqual(40);
      expect(['read', 'write', 'destructive']).toContain(tool.access);
      const schema = z.toJSONSchema(tool.input) as { type?: string; properties?: Record<string, { description?: string }> };
      expect(schema.type).toBe('object');
      // Every argument says what it is.
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        expect(property.description, `${provider} ${tool.name}.${name}`).toBeTruthy();
      }
      expect(Array.isArray(tool.scopes)).toBe(true);
      const manifestScopes = builtinProviders.find((p) => p.manifest.name === provider)!.manifest.oauth2!.scopes;
      for (const scope of tool.scopes ?? []) expect(manifestScopes).toContain(scope);
    },
  );

  it('flat names are unique across every built-in provider', () => {
    const flat = builtinProviders.flatMap((p) => p.tools.map((t) => `${p.manifest.toolPrefix}_${t.name}`));
    expect(new Set(flat).size).toBe(flat.length);
    expect(flat).toEqual(expect.arrayContaining(['github_create_issue', 'jira_search_issues', 'slack_send_message']));
  });

  it('classifies access: merging is destructive, reads only read, creates and sends write', () => {
    const access = Object.fromEntries(rows.map((r) => [r.flat, r.tool.access]));
    expect(access.github_merge_pull_request).toBe('destructive');
    for (const [flat, level] of Object.entries(access)) {
      if (/_(list|get|search)_/.test(`_${flat.split('_').slice(1).join('_')}`)) expect(level, flat).toBe('read');
    }
    for (const flat of [
      'github_create_issue',
      'github_create_or_update_file',
      'jira_add_comment',
      'jira_transition_issue',
      'slack_send_message',
      'slack_add_reaction',
    ]) {
      expect(access[flat], flat).toBe('write');
    }
  });

  it('jira tools take an optional cloudId; scopes follow read:jira-work / write:jira-work', () => {
    for (const tool of atlassianJira.tools) {
      expect(tool.input.safeParse({}).error?.issues.some((i) => i.path[0] === 'cloudId')).toBeFalsy();
      expect(tool.scopes).toContain(tool.access === 'read' ? 'read:jira-work' : 'write:jira-work');
    }
  });

  it('applies the service defaults', () => {
    const tool = (p: typeof github, name: string) => p.tools.find((t) => t.name === name)!;
    expect(tool(github, 'list_issues').input.parse({ owner: 'o', repo: 'r' })).toMatchObject({ state: 'open', perPage: 30, page: 1 });
    expect(tool(github, 'list_issues').input.safeParse({ owner: 'o', repo: 'r', perPage: 101 }).success).toBe(false);
    expect(tool(atlassianJira, 'search_issues').input.parse({ jql: 'project = X' })).toMatchObject({ maxResults: 50 });
    expect(tool(atlassianJira, 'create_issue').input.parse({ projectKey: 'X', summary: 's' })).toMatchObject({ issueType: 'Task' });
    expect(tool(atlassianJira, 'update_issue').input.safeParse({ issueKey: 'X-1' }).success).toBe(false);
    expect(tool(slack, 'list_channels').input.parse({})).toMatchObject({ types: ['public_channel'], limit: 100, excludeArchived: false });
    expect(tool(slack, 'search_messages').input.parse({ query: 'q' })).toMatchObject({ count: 20, sort: 'score' });
  });
});

describe('Atlassian Document Format', () => {
  it('turns text into paragraphs and hard breaks, and back', () => {
    const doc = textToAdf('First line\nsecond line\n\nNext paragraph');
    expect(doc).toEqual({
      type: 'doc',
      version: 1,
      content: [
        {
          type: 'paragraph',
          content: [{ type: 'text', text: 'First line' }, { type: 'hardBreak' }, { type: 'text', text: 'second line' }],
        },
        { type: 'paragraph', content: [{ type: 'text', text: 'Next paragraph' }] },
      ],
    });
    expect(adfToText(doc)).toBe('First line\nsecond line\n\nNext paragraph');
    expect(adfToText(null)).toBeNull();
    expect(textToAdf('')).toEqual({ type: 'doc', version: 1, content: [] });
  });

  it('reads lists, mentions and headings as text', () => {
    const doc = {
      type: 'doc',
      version: 1,
      content: [
        { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Plan' }] },
        {
          type: 'bulletList',
          content: [
            { type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'one' }] }] },
            { type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'mention', attrs: { text: '@Alice' } }] }] },
          ],
        },
      ],
    };
    expect(adfToText(doc)).toBe('Plan\n\n- one\n- @Alice');
  });
});

describe('Slack error mapping', () => {
  it('maps ok:false error codes to HTTP-like statuses', () => {
    for (const e of ['invalid_auth', 'not_authed', 'token_revoked', 'token_expired']) expect(slackErrorStatus(e)).toBe(401);
    expect(slackErrorStatus('ratelimited')).toBe(429);
    expect(slackErrorStatus('channel_not_found')).toBe(404);
    expect(slackErrorStatus('user_not_found')).toBe(404);
    expect(slackErrorStatus('missing_scope')).toBe(403);
    expect(slackErrorStatus('already_reacted')).toBe(400);
  });
});

describe('Linear (API key)', () => {
  it('declares the portal form and its tools', () => {
    expect(linear.manifest).toMatchObject({ name: 'linear', toolPrefix: 'linear', auth: 'apikey', envPrefix: 'LINEAR' });
    expect(linear.manifest.apiKeyFields).toEqual([{ name: 'apiKey', label: 'Personal API key', secret: true, placeholder: 'lin_api_…' }]);
    expect(linear.tools.map((t) => t.name).sort()).toEqual(['create_issue', 'list_issues', 'list_teams', 'search_issues', 'update_issue']);
    expect(linear.identify).toBeTypeOf('function');
  });

  it.each(linear.tools.map((t) => [t.name, t] as const))('%s: description, schema and access are well-formed', (_name, tool) => {
    expect(tool.description.trim().length).toBeGreaterThanOrEqual(40);
    expect(tool.access).toBe(/^(list|search)_/.test(tool.name) ? 'read' : 'write');
    // An API key grants no OAuth scopes, so a tool may demand none.
    expect(tool.scopes).toEqual([]);
    const schema = z.toJSONSchema(tool.input) as { type?: string; properties?: Record<string, { description?: string }> };
    expect(schema.type).toBe('object');
    for (const [name, property] of Object.entries(schema.properties ?? {}))
      expect(property.description, `${tool.name}.${name}`).toBeTruthy();
  });

  it('applies defaults and refuses an update that changes nothing', () => {
    const tool = (name: string) => linear.tools.find((t) => t.name === name)!;
    expect(tool('list_issues').input.parse({})).toMatchObject({ first: 25, orderBy: 'updatedAt', includeArchived: false });
    expect(tool('list_teams').input.parse({})).toMatchObject({ first: 50 });
    expect(tool('update_issue').input.safeParse({ id: 'ENG-1' }).success).toBe(false);
    expect(tool('update_issue').input.safeParse({ id: 'ENG-1', assigneeId: null }).success).toBe(true);
    expect(tool('create_issue').input.safeParse({ teamId: 't', title: 'x', priority: 5 }).success).toBe(false);
  });

  it('sends a personal API key bare in Authorization, not as Bearer', () => {
    const headers = new Headers();
    applyCredential(linear, { type: 'apikey', fields: { apiKey: 'lin_api_123' } }, headers);
    expect(headers.get('authorization')).toBe('lin_api_123');
  });

  it('maps GraphQL errors to HTTP-like statuses: a refused key is 401', () => {
    expect(linearErrorStatus([{ message: 'x', extensions: { code: 'AUTHENTICATION_ERROR', type: 'authentication error' } }])).toBe(401);
    expect(linearErrorStatus([{ message: 'x', extensions: { type: 'ratelimited', code: 'RATELIMITED' } }])).toBe(429);
    expect(linearErrorStatus([{ message: 'x', extensions: { type: 'forbidden', code: 'FORBIDDEN' } }])).toBe(403);
    expect(linearErrorStatus([{ message: 'Entity not found: Issue', extensions: { type: 'invalid input', code: 'INPUT_ERROR' } }])).toBe(
      400,
    );
  });
});

describe('Built-ins (jots, browser)', () => {
  const jotsProvider = builtinProviders.find((p) => p.manifest.name === 'jots')!;
  const browserProvider = builtinProviders.find((p) => p.manifest.name === 'browser')!;
  const tool = (p: typeof jotsProvider, name: string) => p.tools.find((t) => t.name === name)!;

  it('has the tools of the issue, with auth none', () => {
    expect(jotsProvider.tools.map((t) => t.name).sort()).toEqual(
      ['create_note', 'get_note', 'list_notes', 'search_notes', 'update_note', 'delete_note'].sort(),
    );
    expect(browserProvider.tools.map((t) => t.name).sort()).toEqual(['extract', 'open_page', 'screenshot']);
    for (const p of [jotsProvider, browserProvider]) expect(p.manifest.auth).toBe('none');
  });

  it.each([...jotsProvider.tools, ...browserProvider.tools].map((t) => [t.name, t] as const))(
    '%s: description, schema and access are well-formed',
    (_name, t) => {
      expect(t.description.trim().length).toBeGreaterThanOrEqual(40);
      expect(t.scopes ?? []).toEqual([]);
      const schema = z.toJSONSchema(t.input, { io: 'input' }) as { type?: string; properties?: Record<string, { description?: string }> };
      expect(schema.type).toBe('object');
      for (const [name, property] of Object.entries(schema.properties ?? {}))
        expect(property.description, `${t.name}.${name}`).toBeTruthy();
    },
  );

  it('classifies access: deleting a note is destructive, writes write, the browser only reads', () => {
    const access = Object.fromEntries([...jotsProvider.tools, ...browserProvider.tools].map((t) => [t.name, t.access]));
    expect(access).toEqual({
      create_note: 'write',
      get_note: 'read',
      list_notes: 'read',
      search_notes: 'read',
      update_note: 'write',
      delete_note: 'destructive',
      open_page: 'read',
      screenshot: 'read',
      extract: 'read',
    });
  });

  it('applies defaults and limits', () => {
    expect(tool(jotsProvider, 'list_notes').input.parse({})).toEqual({ limit: 20 });
    expect(tool(jotsProvider, 'list_notes').input.safeParse({ limit: 101 }).success).toBe(false);
    expect(tool(jotsProvider, 'create_note').input.safeParse({ title: 'x'.repeat(201), body: '' }).success).toBe(false);
    expect(tool(jotsProvider, 'create_note').input.safeParse({ title: 'ok', body: 'x'.repeat(100_001) }).success).toBe(false);
    expect(tool(jotsProvider, 'update_note').input.safeParse({ id: 'jot_1' }).success).toBe(false);
    expect(tool(browserProvider, 'open_page').input.parse({ url: 'https://example.com/' })).toEqual({
      url: 'https://example.com/',
      maxChars: 20000,
      maxLinks: 50,
    });
    expect(tool(browserProvider, 'screenshot').input.parse({ url: 'http://example.com/' })).toMatchObject({ fullPage: false });
    expect(tool(browserProvider, 'extract').input.parse({ url: 'http://example.com/', selector: 'h1' })).toMatchObject({ limit: 20 });
    for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'javascript:alert(1)', 'data:text/html,hi']) {
      expect(tool(browserProvider, 'open_page').input.safeParse({ url }).success, url).toBe(false);
    }
  });
});
