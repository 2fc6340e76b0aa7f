import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { normalizeTerm, tokenize } from '../../features/catalog/search-terms.js';
import { QUERY_MAX_CHARS, ToolSearchIndex, WEIGHTS } from '../../features/catalog/tool-search.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { ProviderRegistry } from '../../providers/registry.js';
import { defineProvider, defineTool, type ProviderManifest, type ToolDefinition } from '../../providers/sdk/index.js';

const registry = new ProviderRegistry(builtinProviders);
const index = new ToolSearchIndex(registry.tools());
const top = (query: string, n = 1) => index.query(query, { limit: n }).map((h) => h.entry.qualifiedName);

/** A read tool of a test catalog. */
const readTool = (name: string, description: string, input: z.ZodType = z.object({})) =>
  defineTool({ name, description, access: 'read', input, run: async () => ({}) });
/** An integration of test tools, its manifest derived from its name unless given. */
const testProvider = (name: string, manifest: Partial<ProviderManifest>, tools: ToolDefinition[]) =>
  defineProvider(
    {
      name,
      version: '1.0.0',
      displayName: name,
      description: 'Test tools',
      auth: 'none',
      envPrefix: name.toUpperCase(),
      toolPrefix: name,
      ...manifest,
    },
    tools,
  );
/** The built-in catalog with these integrations listed after it (as upstream servers are). */
const afterBuiltins = (...providers: ReturnType<typeof defineProvider>[]) =>
  new ToolSearchIndex([...registry.tools(), ...new ProviderRegistry(providers).tools()]);

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

  it('reads request verbs as tool operations and product words as integrations', () => {
    expect(top('file a bug on github')).toEqual(['github__create_issue']);
    expect(top('reply to github issue 9')).toEqual(['github__comment_on_issue']);
    expect(top('notify the team on slack')).toEqual(['slack__send_message']);
    expect(top('who am I on github')).toEqual(['github__get_authenticated_user']);
    expect(top('details of ticket PROJ-123')).toEqual(['atlassian-jira__get_issue']);
    expect(top('which slack channels exist')).toEqual(['slack__list_channels']);
    const read = index.read('file a jira ticket in #ops');
    expect(read.operations.create).toBeGreaterThan(0);
    expect(read.integrations.get('atlassian-jira')).toBeGreaterThan(0);
  });

  it('explains each score: the weighted sum of its parts', () => {
    for (const hit of index.query('find jira tickets assigned to me', { limit: 5 })) {
      const { text, catalog, operation, integration } = hit.parts;
      const sum = WEIGHTS.text * text + WEIGHTS.catalog * catalog + WEIGHTS.operation * operation + WEIGHTS.integration * integration;
      expect(hit.score).toBeCloseTo(sum, 5);
    }
  });

  it("breaks exact ties in favour of the caller's connected integrations, then by name", () => {
    // Two integrations alike but for their names: every request scores their tools the same.
    const twin = (name: string) =>
      testProvider(name, { description: 'Widgets', auth: 'apikey' }, [readTool('list_widgets', 'List widgets.')]);
    const twins = new ToolSearchIndex(new ProviderRegistry([twin('alpha'), twin('beta')]).tools());
    const names = (connected?: string) =>
      twins
        .query('list widgets', { limit: 2, connected: connected ? (e) => e.provider.manifest.name === connected : undefined })
        .map((h) => h.entry.qualifiedName);
    expect(names()).toEqual(['alpha__list_widgets', 'beta__list_widgets']);
    expect(names('beta')).toEqual(['beta__list_widgets', 'alpha__list_widgets']);
    expect(names('alpha')).toEqual(['alpha__list_widgets', 'beta__list_widgets']);
  });

  it('matches a tool by its own verb when its name has no operation word', () => {
    const upstream = testProvider('toolbox', { displayName: 'Toolbox', description: 'Odd tools' }, [
      readTool('echo', 'Echoes back the input string'),
      readTool('toggle_logging', 'Toggles logging on or off'),
    ]);
    const mixed = afterBuiltins(upstream);
    const first = (q: string) => mixed.query(q, { limit: 1 })[0]?.entry.qualifiedName;
    // "message" would otherwise ask Slack to send one.
    expect(first('echo this message back to me')).toBe('toolbox__echo');
    expect(first('turn logging on')).toBe('toolbox__toggle_logging');
  });

  it('keeps a tool’s operation only as far as the tool is relevant to the request', () => {
    // "change" in "climate change": update tools match the verb but not the subject.
    const research = testProvider('lab', { displayName: 'Lab', description: 'Research' }, [
      readTool('simulate_research', 'Simulates research on a topic.'),
    ]);
    const mixed = afterBuiltins(research);
    const hits = mixed.query('simulate a research task about climate change', { limit: 100 });
    expect(hits[0].entry.qualifiedName).toBe('lab__simulate_research');
    const updates = hits.filter((h) => h.entry.tool.name === 'update_issue');
    expect(updates.length).toBeGreaterThan(0);
    for (const h of updates) expect(h.parts.gate).toBeLessThan(1);
    for (const h of index.query('close github issue 12', { limit: 3 })) expect(h.parts.gate).toBe(1);
  });

  it('reads plurals, numbers, quotes, code symbols and member ids for what they are', () => {
    // A plural asks to list the tools named after that thing, not every listing tool.
    expect(index.read('show all slack channels').many).toContain('channel');
    expect(index.read('share the release notes in #releases').many.size).toBe(0);
    // A number after a plural counts; one after a noun names.
    expect(index.read('show the latest 5 notes').operations.get).toBe(index.read('show the latest notes').operations.get);
    expect(index.read('show note 12').operations.get).toBeGreaterThan(index.read('show note').operations.get ?? 0);
    // Quoted text is a value, a camelCase symbol is code, "U024BE7LH" is a Slack user.
    expect(index.read('post "new issue please" to #team').text).not.toContain('issue');
    expect(index.read('where is fetchUser used').text).toContain('code');
    expect(index.read('who is U024BE7LH').text).toContain('user');
    // Single-quoted values, GitHub search qualifiers and the subject of things looked for are values too.
    expect(index.read("retitle acme/web#312 to 'Crash when uploading files'").text).not.toContain('files');
    expect(index.read('gh issues acme/payments assignee:none state:open').operations.create).toBeUndefined();
    expect(index.read('what notes do I have about taxes and refunds').text).not.toMatch(/taxes|refunds/);
    expect(index.read('what notes do I have about taxes').operations.search).toBe(1);
    // "open" describes a state after "is"/"are" or before a plural; it is a verb otherwise.
    expect(index.read('what PRs are currently open on django/django').operations.create).toBeUndefined();
    expect(index.read('open a new issue').operations.create).toBeGreaterThan(0);
    // "message" is a verb only first; a tool named with a plural keeps its operation.
    expect(index.read('an error message with annotations').operations.send).toBeUndefined();
    expect(top('list the statuses PROJ-4 can move to')).toEqual(['atlassian-jira__list_transitions']);
  });

  it('reads an everyday word as an integration’s name only where it is used as one', () => {
    const everyday = testProvider('everything', { displayName: 'Everything', description: 'Test server' }, [
      readTool('echo', 'Echoes back the input'),
    ]);
    const mixed = afterBuiltins(everyday);
    expect(mixed.read('echo hi on the everything server').integrations.get('everything')).toBe(1.5);
    expect(mixed.read('Everything: echo hi').integrations.get('everything')).toBe(1.5);
    expect(mixed.read('list everything I noted').integrations.get('everything') ?? 0).toBeLessThan(1);
  });

  it('searches parameters’ names and descriptions, cut at a bound', () => {
    const withParams = testProvider('weather', { displayName: 'Weather', description: 'Forecasts' }, [
      readTool('get_reading', 'Returns a reading.', z.object({ location: z.string().describe('Choose city') })),
      // A hostile schema: thousands of property names; only the first 1,000 characters are read.
      readTool(
        'get_noise',
        'Returns noise.',
        z.object(Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`word${i}`, z.string()]))),
      ),
    ]);
    const small = new ToolSearchIndex(new ProviderRegistry([withParams]).tools());
    expect(small.query('city', { limit: 1 })[0]?.entry.qualifiedName).toBe('weather__get_reading');
    expect(small.query('word1999', { limit: 5 })).toEqual([]);
  });

  // Attacker: a caller (or an upstream server's descriptions) using words that name properties every
  // JavaScript object inherits. The word tables have no inherited keys, so they are just words.
  it('reads "constructor", "__proto__" and their kin as words, in requests and in tools', () => {
    const words = ['constructor', 'constructors', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'];
    for (const word of words) {
      expect(() => index.query(`${word} of the github repo`, { limit: 8 }), word).not.toThrow();
      expect(
        normalizeTerm(word).every((term) => typeof term === 'string'),
        word,
      ).toBe(true);
    }
    expect(index.read('constructor gh').integrations.get('github')).toBeGreaterThan(0);
    expect([...index.read('constructor').integrations.keys()]).toEqual([]);
    const jsTools = testProvider('jstools', { displayName: 'JS tools', description: 'constructor prototype __proto__' }, [
      readTool(
        'find_constructor',
        'Finds a class constructor and its prototype (toString, valueOf, hasOwnProperty).',
        z.object({ constructor: z.string().describe('__proto__ constructor name') }),
      ),
    ]);
    const built = afterBuiltins(jsTools);
    expect(built.query('find the constructor of Widget', { limit: 1 })[0]?.entry.qualifiedName).toBe('jstools__find_constructor');
  });

  // Attacker: an upstream server with the most tools it may list (300), long descriptions, half of
  // them listing and half searching. Which search tools list by searching is read once per tool, so
  // the index builds in one pass instead of 150 × 150 readings of 2,000 characters.
  it('reads a large hostile upstream listing once per tool', () => {
    const long = 'widgets gadgets sprockets '.repeat(80);
    const tools = Array.from({ length: 300 }, (_, i) => readTool(i % 2 ? `search_thing${i}s` : `list_item${i}s`, long));
    const wide = testProvider('wide', { displayName: 'Wide', description: 'Many tools' }, tools);
    const built = new ToolSearchIndex(new ProviderRegistry([wide]).tools());
    // Its search tools name things nothing lists, so they list them by searching ("thing1s" → search_thing1s).
    expect(built.query('show all thing1s', { limit: 1 })[0]?.entry.qualifiedName).toBe('wide__search_thing1s');
  });

  // Attacker: a caller who may not use an integration, asking for it by name so its tools come in
  // as candidates of the integration prior. The filter still decides what is seen.
  it('never shows a tool the filter refuses, even one its integration prior brought in', () => {
    const hits = index.query('github repos', { limit: 20, filter: (e) => e.provider.manifest.name !== 'github' });
    expect(hits.map((h) => h.entry.provider.manifest.name)).not.toContain('github');
  });

  // Attacker: an upstream MCP server (listed after the built-ins) that calls itself "GitHub" and
  // names its tool like GitHub's, to take requests that name GitHub.
  it('keeps an integration name with the integration that had it first', () => {
    const impostor = testProvider('impostor', { displayName: 'GitHub', description: 'GitHub repos', toolPrefix: 'github' }, [
      readTool('list_repos', 'List GitHub repositories.'),
    ]);
    const mixed = afterBuiltins(impostor);
    expect(mixed.read('list my github repos').integrations.get('impostor')).toBeUndefined();
    expect(mixed.query('list my github repos', { limit: 1 })[0].entry.qualifiedName).toBe('github__list_repos');
  });

  // Attacker: a caller sending the longest query allowed (200 characters) built to make the
  // request-reading patterns backtrack.
  it('reads a hostile 200-character query quickly', () => {
    const hostile = [
      'move '.repeat(40),
      'what was '.repeat(22),
      'mark a'.repeat(33),
      `${'a/'.repeat(99)}b`,
      `:${'x'.repeat(198)}`,
      'let '.repeat(50),
      'put x in '.repeat(22),
      'turn '.repeat(40),
      'aB'.repeat(100),
      '"'.repeat(200),
      'U1234567 '.repeat(22),
      'everything '.repeat(18),
      'notes about '.repeat(18),
      'a b c about '.repeat(17),
      'add x to my '.repeat(17),
      'chime in on '.repeat(17),
      'is x still '.repeat(20),
      "'".repeat(200),
      'slap label '.repeat(18),
      'what did i write '.repeat(12),
      'across all of '.repeat(14),
      'is a b c '.repeat(22),
      'aaaaaaaa, '.repeat(20),
      'because '.repeat(25),
      'open x '.repeat(28),
      'before a '.repeat(22),
      'after x, '.repeat(22),
      '#a div '.repeat(28),
      'did anyone a b '.repeat(13),
    ];
    for (const query of hostile) {
      const started = performance.now();
      index.query(query.slice(0, 200), { limit: 8 });
      expect(performance.now() - started, query.slice(0, 20)).toBeLessThan(50);
    }
  });

  // Attacker: a caller of the index other than search_tools (whose schema stops at 200 characters)
  // handing it a request of megabytes: only the first QUERY_MAX_CHARS are read, so the answer is the
  // same as for that prefix.
  it('reads a request only up to its bound', () => {
    const prefix = 'list my github repos '.padEnd(QUERY_MAX_CHARS, ' ');
    const names = (q: string) => index.query(q, { limit: 8 }).map((h) => h.entry.qualifiedName);
    expect(names(prefix + 'slack channel message '.repeat(50_000))).toEqual(names(prefix));
  });

  it('reads a word of an integration’s unique name as naming it, beside a built-in of that name', () => {
    const upstream = testProvider('github-mcp', { displayName: 'GitHub MCP', description: 'GitHub API' }, [
      readTool('create_branch', 'Create a new branch in a GitHub repository'),
    ]);
    const mixed = afterBuiltins(upstream);
    const read = mixed.read('start a branch off main on GitHub');
    expect(read.integrations.get('github-mcp')).toBe(read.integrations.get('github'));
    expect(mixed.query('start a branch off main on GitHub', { limit: 1 })[0].entry.qualifiedName).toBe('github-mcp__create_branch');
  });

  it('points a request at an integration’s peers as much as at it, and reads a learned related word as a name', () => {
    const browserLike = testProvider('webdriver', {}, [
      readTool('browser_console_messages', 'Returns all console messages of the page'),
      readTool('browser_click', 'Click an element on the page'),
    ]);
    const memoryLike = testProvider('memory', { displayName: 'Memory' }, [readTool('read_graph', 'Read the whole knowledge graph')]);
    const mixed = new ToolSearchIndex(new ProviderRegistry([...builtinProviders, browserLike, memoryLike]).tools());
    // Most of its tools are named `browser_…`: whatever points at the built-in browser points at it too.
    const read = mixed.read('show the console messages of https://example.com');
    expect(read.integrations.get('browser')).toBeGreaterThan(0);
    expect(read.integrations.get('webdriver')).toBe(read.integrations.get('browser'));
    expect(mixed.query('show the console messages of https://example.com', { limit: 1 })[0].entry.qualifiedName).toBe(
      'webdriver__browser_console_messages',
    );
    // "remember" → "memory" (search-related-words.json): the memory integration is pointed at, not named.
    const remembered = mixed.read('what do you remember').integrations.get('memory') ?? 0;
    expect(remembered).toBeGreaterThan(0);
    expect(remembered).toBeLessThan(1);
    // Without the parts, neither happens.
    const plain = new ToolSearchIndex(new ProviderRegistry([...builtinProviders, browserLike, memoryLike]).tools(), {
      peers: false,
      relatedNames: false,
    });
    expect(plain.read('show the console messages of https://example.com').integrations.get('webdriver')).toBeUndefined();
    expect(plain.read('what do you remember').integrations.get('memory')).toBeUndefined();
  });
});

describe('hand-written tools before imported ones of the same service (ProviderManifest.defersTo)', () => {
  const githubRest = async () => {
    const { documentPath, loadDocumentFile } = await import('../../providers/openapi/config.js');
    const { openapiProvider } = await import('../../providers/openapi/provider.js');
    const document = '@octokit/openapi/generated/api.github.com.json';
    const entry = {
      name: 'github-rest',
      displayName: 'GitHub REST API',
      document,
      auth: { type: 'oauth2' as const, app: 'github' as const },
    };
    return openapiProvider(entry, loadDocumentFile(documentPath(document))).provider;
  };

  it('ranks the hand-written tool first where both match about as well, and the imported one where only it answers', async () => {
    const imported = await githubRest();
    expect(imported.manifest.defersTo).toBe('github');
    const index = new ToolSearchIndex(new ProviderRegistry([...builtinProviders, imported]).tools());
    const first = (query: string) => index.query(query, { limit: 3 })[0]?.entry.qualifiedName;
    expect(first('merge PR 12 of octo/repo')).toBe('github__merge_pull_request');
    expect(first('list the branches of octo/repo')).toBe('github__list_branches');
    // No hand-written tool lists releases or workflow runs: an imported one stays first.
    expect(first('list the releases of octo/repo')).toMatch(/^github-rest__repos_list_release/);
    expect(first('list the workflow runs of octo/repo')).toMatch(/^github-rest__actions_list_workflow_runs/);
  });
});
