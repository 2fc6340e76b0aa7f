import { describe, expect, it } from 'vitest';
import { builtinProviders } from '../../providers/index.js';
import { ProviderRegistry } from '../../providers/registry.js';
import { normalizeTerm, ToolSearchIndex, tokenize } from '../../server/catalog/tool-search.js';

const registry = new ProviderRegistry(builtinProviders);
const index = new ToolSearchIndex(registry.tools());
const top = (query: string, n = 1) => index.query(query, { limit: n }).map((h) => h.entry.qualifiedName);

describe('tool search', () => {
  it('splits names on _ and camelCase, folds plurals and synonyms', () => {
    expect(tokenize('github__list_pull_requests')).toEqual(['github', 'list', 'pull', 'requests']);
    expect(tokenize('getChannelHistory')).toEqual(['get', 'Channel', 'History']);
    expect(normalizeTerm('PRs')).toEqual(['pull', 'request']);
    expect(normalizeTerm('repositories')).toEqual(['repo']);
    expect(normalizeTerm('ticket')).toEqual(['issue']);
    expect(normalizeTerm('msg')).toEqual(['message']);
    expect(normalizeTerm('the')).toEqual([]);
  });

  it('finds the tool a keyword query means', () => {
    expect(top('github repos')).toEqual(['github__list_repos']);
    expect(top('list PRs')).toEqual(['github__list_pull_requests']);
    expect(top('merge pull request')).toEqual(['github__merge_pull_request']);
    expect(top('send slack msg')).toEqual(['slack__send_message']);
    expect(top('create jira ticket')).toEqual(['atlassian-jira__create_issue']);
    expect(top('transition jira issue')).toEqual(['atlassian-jira__transition_issue']);
  });

  it('gives the same order for the same query every time, ties broken by name', () => {
    const first = index.query('issue', { limit: 20 }).map((h) => h.entry.qualifiedName);
    for (let i = 0; i < 5; i++)
      expect(new ToolSearchIndex(registry.tools()).query('issue', { limit: 20 }).map((h) => h.entry.qualifiedName)).toEqual(first);
    const scores = index.query('issue', { limit: 20 }).map((h) => h.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('never misses a tool asked for by its own name', () => {
    for (const entry of registry.tools()) {
      expect(top(entry.tool.name.replace(/_/g, ' '), 3), entry.qualifiedName).toContain(entry.qualifiedName);
    }
  });
});
