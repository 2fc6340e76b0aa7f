import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { adfToText, textToAdf } from '../../providers/atlassian-jira/adf.js';
import { atlassianJira } from '../../providers/atlassian-jira/index.js';
import { github } from '../../providers/github/index.js';
import { builtinProviders } from '../../providers/index.js';
import { slackErrorStatus } from '../../providers/slack/api.js';
import { slack } from '../../providers/slack/index.js';

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
