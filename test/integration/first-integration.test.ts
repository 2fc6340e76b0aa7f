import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { finishAttempt, getAttempt } from '../../features/connections/store/connection-attempts.js';
import { startWorld, type TestUser } from '../support/harness.js';
import { UNCONNECTED_LISTING } from '../support/integration-listing.js';

// The spec's "Connect an agent / Your first integration", sentence by sentence, on every surface
// that serves the nine meta-tools: the JSON API, MCP 2025 (v1 SDK client) and MCP 2026-07-28 (v2
// SDK client). Each surface must answer the same body; only how an error is flagged differs
// (an HTTP status on the JSON API, `isError` on MCP). The browser half of the loop (consent, a
// late callback) is in connect.test.ts and mcp.test.ts.

const world = await startWorld({ clients: { github: {} }, apis: true, env: { CONNECTION_TTL_SEC: '600' } });
const { stack, apis } = world;

/** One answer, as any surface gives it. */
interface Answer {
  /** An error answer: an HTTP status of 400 or more, or an MCP result with isError. */
  isError: boolean;
  body: any;
}

type Surface = (user: TestUser, tool: string, args: unknown) => Promise<Answer>;

const jsonApi: Surface = async (user, tool, args) => {
  const { status, body } = await user.call(tool, args);
  return { isError: status >= 400, body };
};

/** MCP 2025 with the official v1 client (declaring tasks): one client per user, kept for the file. */
const legacyClients = new Map<string, Promise<Client>>();
function legacyClientOf(user: TestUser): Promise<Client> {
  let client = legacyClients.get(user.apiKey);
  if (!client) {
    client = (async () => {
      const created = new Client({ name: 'first-integration-2025', version: '1.0.0' }, { capabilities: { tasks: {} } });
      await created.connect(
        new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${user.apiKey}` } },
        }),
      );
      world.onStop(() => created.close());
      return created;
    })();
    legacyClients.set(user.apiKey, client);
  }
  return client;
}

const mcp2025: Surface = async (user, tool, args) => {
  const client = await legacyClientOf(user);
  const result = await client.callTool({ name: tool, arguments: args as Record<string, unknown> }, undefined, { timeout: 60_000 });
  return { isError: result.isError === true, body: JSON.parse((result.content as { text: string }[])[0].text) };
};

/** MCP 2026-07-28 (stateless) with the official v2 client. */
const modernClients = new Map<string, Promise<ModernClient>>();
const mcp2026: Surface = async (user, tool, args) => {
  let client = modernClients.get(user.apiKey);
  if (!client) {
    client = (async () => {
      const created = new ModernClient(
        { name: 'first-integration-2026', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await created.connect(
        new ModernTransport(new URL(`${stack.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${user.apiKey}` } } }),
      );
      world.onStop(() => created.close());
      return created;
    })();
    modernClients.set(user.apiKey, client);
  }
  const result = await (await client).callTool({ name: tool, arguments: args as Record<string, unknown> }, { timeout: 60_000 });
  return { isError: result.isError === true, body: JSON.parse((result.content as { text: string }[])[0].text) };
};

const SURFACES: [string, Surface][] = [
  ['the JSON API', jsonApi],
  ['MCP 2025', mcp2025],
  ['MCP 2026-07-28', mcp2026],
];

/** MCP 2025 with the waits and calls run as tasks (tools/call with `task`, then tasks/result); the quick tools directly. */
const mcp2025Tasks: Surface = async (user, tool, args) => {
  if (tool !== 'wait_for_connection' && tool !== 'execute_tools') return mcp2025(user, tool, args);
  const client = await legacyClientOf(user);
  const { task } = await client.request(
    { method: 'tools/call', params: { name: tool, arguments: args as Record<string, unknown>, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
  const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
  return { isError: result.isError === true, body: JSON.parse((result.content as { text: string }[])[0].text) };
};

const refused = (body: unknown): Answer => ({ isError: true, body });
const answered = (body: unknown): Answer => ({ isError: false, body });

describe.each(SURFACES)('the first-integration loop on %s', (_surface, call) => {
  it('list_integrations: name, version and connected only; built-ins always connected; connected is per user and live', async () => {
    const user = await world.user();
    const before = await call(user, 'list_integrations', {});
    expect(before).toEqual(
      answered({
        integrations: UNCONNECTED_LISTING,
      }),
    );
    // A token stored a moment ago shows at once, for this user only.
    const neighbour = await world.user({ tenantId: user.user.tenantId });
    await world.connectGithub(user, `live-${Math.random().toString(36).slice(2, 8)}`);
    const github = (answer: Answer) => answer.body.integrations.find((i: { name: string }) => i.name === 'github');
    expect(github(await call(user, 'list_integrations', {}))).toEqual({ name: 'github', version: '1.0.0', connected: true });
    expect(github(await call(neighbour, 'list_integrations', {}))).toEqual({ name: 'github', version: '1.0.0', connected: false });
  });

  it('connect and get_auth_url answer the same: {connectionId, type, url}, and the spec error strings', async () => {
    const user = await world.user();
    for (const tool of ['connect', 'get_auth_url']) {
      const started = await call(user, tool, { integration: 'github' });
      expect(started.isError, tool).toBe(false);
      expect(Object.keys(started.body).sort()).toEqual(['connectionId', 'type', 'url']);
      expect(started.body).toEqual({
        connectionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        type: 'oauth2',
        url: expect.stringMatching(new RegExp(`^${stack.baseUrl}/connect/github\\?t=eyJ`)),
      });
      expect(await call(user, tool, { integration: 'nope' })).toEqual(refused({ error: 'Integration not found' }));
      for (const builtIn of ['browser', 'jots']) {
        expect(await call(user, tool, { integration: builtIn })).toEqual(
          refused({ error: `${builtIn} is built-in and always connected — no connect needed.` }),
        );
      }
      const slack = await call(user, tool, { integration: 'slack' });
      expect(slack).toEqual(refused({ error: expect.stringMatching(/SLACK_CLIENT_ID \/ SLACK_CLIENT_SECRET not configured$/) }));
      // An API-key integration is the portal's: said plainly, with where to send the user (docs/reference/api.md).
      expect(await call(user, tool, { integration: 'linear' })).toEqual(
        refused({
          error: `linear is connected with an API key in the portal, not through connect(). Send the user to ${stack.baseUrl}/portal/integrations/linear`,
        }),
      );
    }
  });

  it('wait_for_connection: timeoutSec is optional, a positive integer, at most 900', async () => {
    const user = await world.user();
    const { body: started } = await call(user, 'connect', { integration: 'github' });
    for (const timeoutSec of [0, -1, 1.5, '300', 901, null, true, 1e21]) {
      const answer = await call(user, 'wait_for_connection', { connectionId: started.connectionId, timeoutSec });
      expect(answer.isError, String(timeoutSec)).toBe(true);
      expect(answer.body, String(timeoutSec)).toEqual({
        error: expect.stringMatching(/^Invalid arguments for wait_for_connection: timeoutSec: /),
      });
    }
    // 900 and no timeoutSec at all pass validation (a final attempt answers at once whatever the timeout).
    await finishAttempt(stack.services.pool, started.connectionId, { status: 'EXPIRED' });
    expect(await call(user, 'wait_for_connection', { connectionId: started.connectionId, timeoutSec: 900 })).toEqual(
      answered({ status: 'EXPIRED' }),
    );
    expect(await call(user, 'wait_for_connection', { connectionId: started.connectionId })).toEqual(answered({ status: 'EXPIRED' }));
  });

  it('wait_for_connection: an id the server does not know, of any form, answers exactly {error: "Unknown connectionId"}', async () => {
    const user = await world.user();
    for (const connectionId of [
      '00000000-0000-0000-0000-000000000000',
      'nope',
      '3f0c1a2e-…',
      'a\u0000b',
      '\u0000',
      '😀',
      'x'.repeat(200),
    ]) {
      expect(await call(user, 'wait_for_connection', { connectionId, timeoutSec: 1 }), JSON.stringify(connectionId)).toEqual(
        refused({ error: 'Unknown connectionId' }),
      );
    }
  });

  it('a NUL character in any string argument (which no stored name or id can hold) answers like any unknown value, never an internal error', async () => {
    const user = await world.githubUser(`nul-${Math.random().toString(36).slice(2, 8)}`);
    const NUL = 'a\u0000b';
    const notConnected = {
      error: 'NOT_CONNECTED',
      integration: 'github',
      message: "github not connected. Use connect('github') to connect.",
    };
    const cases: [string, unknown, Answer][] = [
      ['connect', { integration: NUL }, refused({ error: 'Integration not found' })],
      ['get_auth_url', { integration: NUL }, refused({ error: 'Integration not found' })],
      ['search_tools', { query: 'x', integration: NUL }, answered({ tools: [] })],
      ['get_tool_schema', { tool: NUL }, refused({ error: 'Tool not found' })],
      ['execute_tools', { executions: [{ tool: NUL }] }, answered({ results: [{ error: 'Tool not found' }] })],
      ['execute_tools', { executions: [{ tool: 'github_get_authenticated_user', account: NUL }] }, answered({ results: [notConnected] })],
      // Argument names are audited (values never are): a NUL in one is kept as U+FFFD there, and the call runs.
      [
        'execute_tools',
        { executions: [{ tool: 'github_get_authenticated_user', args: { [NUL]: 1 } }] },
        answered({ results: [{ result: expect.objectContaining({ login: expect.stringMatching(/^nul-/) }) }] }),
      ],
      // A tool whose values go to Postgres (jots) names the argument, as for any value it refuses.
      [
        'execute_tools',
        {
          executions: [
            { tool: 'jots_create_note', args: { title: NUL, body: 'x' } },
            { tool: 'jots_create_note', args: { title: 't', body: NUL } },
            { tool: 'jots_create_note', args: { title: 't', body: 'x', tags: [NUL] } },
            { tool: 'jots_search_notes', args: { query: NUL } },
            { tool: 'jots_get_note', args: { id: NUL } },
          ],
        },
        answered({
          results: [
            { error: 'Invalid arguments for jots_create_note: title: must not contain the character U+0000' },
            { error: 'Invalid arguments for jots_create_note: body: must not contain the character U+0000' },
            { error: 'Invalid arguments for jots_create_note: tags.0: must not contain the character U+0000' },
            { error: 'Invalid arguments for jots_search_notes: query: must not contain the character U+0000' },
            { error: 'Invalid arguments for jots_get_note: id: must not contain the character U+0000' },
          ],
        }),
      ],
      ['list_connections', { integration: NUL }, answered({ connections: [] })],
      ['wait_for_approval', { approvalId: NUL, timeoutSec: 1 }, refused({ error: 'Unknown approvalId' })],
      ['read_result', { resultRef: `res_${NUL}` }, refused({ error: 'Unknown resultRef' })],
      ['disconnect', { account: NUL }, refused({ error: `No connected account matches ${NUL}` })],
      ['disconnect', { integration: NUL }, refused({ error: `No connected account matches ${NUL}` })],
    ];
    for (const [tool, args, expected] of cases) expect(await call(user, tool, args), `${tool} ${JSON.stringify(args)}`).toEqual(expected);
    // A call that needs approval (jots_delete_note is destructive) asks for it: the page shows U+0000 as U+FFFD.
    const gated = await call(user, 'execute_tools', {
      executions: [
        { tool: 'jots_delete_note', args: { id: 'jot_x', extra: NUL } },
        { tool: 'jots_delete_note', args: { id: 'jot_y', [NUL]: 1 } },
      ],
    });
    expect(gated.isError).toBe(false);
    expect(gated.body.results).toEqual([
      expect.objectContaining({ error: 'APPROVAL_REQUIRED', approvalId: expect.any(String) }),
      expect.objectContaining({ error: 'APPROVAL_REQUIRED', approvalId: expect.any(String) }),
    ]);
    const { rows } = await stack.services.pool.query(
      `SELECT tool, arg_names AS "argNames" FROM audit_log WHERE actor_user_id = $1 AND (tool LIKE '%\uFFFD%' OR arg_names::text LIKE '%\uFFFD%')`,
      [user.user.id],
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        { tool: 'a\uFFFDb', argNames: [] },
        { tool: 'github__get_authenticated_user', argNames: ['a\uFFFDb'] },
      ]),
    );
    // A requestId is the caller's own name for a batch: it runs the batch like any other.
    const named = await call(user, 'execute_tools', { executions: [{ tool: 'github_get_authenticated_user' }], requestId: NUL });
    expect(named).toEqual(answered({ results: [{ result: expect.objectContaining({ login: expect.stringMatching(/^nul-/) }) }] }));
    expect(await call(user, 'execute_tools', { executions: [{ tool: 'github_get_authenticated_user' }], requestId: NUL })).toEqual(named);
  });

  it('a lone UTF-16 surrogate in an argument (which jsonb refuses as an escape) is kept as U+FFFD: a gated call still asks for approval', async () => {
    const user = await world.githubUser(`sur-${Math.random().toString(36).slice(2, 8)}`);
    const gated = await call(user, 'execute_tools', {
      executions: [
        { tool: 'jots_delete_note', args: { id: 'jot_x', extra: 'a\ud800b' } },
        { tool: 'jots_delete_note', args: { id: 'jot_y', '\udc00': 1 } },
      ],
    });
    expect(gated.isError).toBe(false);
    expect(gated.body.results).toEqual([
      expect.objectContaining({ error: 'APPROVAL_REQUIRED', approvalId: expect.any(String) }),
      expect.objectContaining({ error: 'APPROVAL_REQUIRED', approvalId: expect.any(String) }),
    ]);
    const ran = await call(user, 'execute_tools', { executions: [{ tool: 'github_get_authenticated_user', args: { 'a\ud800b': 1 } }] });
    expect(ran).toEqual(answered({ results: [{ result: expect.objectContaining({ login: expect.stringMatching(/^sur-/) }) }] }));
  });

  it('wait_for_connection: TIMEOUT reaps the attempt to EXPIRED; the next wait answers EXPIRED at once', async () => {
    const user = await world.user();
    const { body: started } = await call(user, 'connect', { integration: 'github' });
    expect(await call(user, 'wait_for_connection', { connectionId: started.connectionId, timeoutSec: 1 })).toEqual(
      answered({ status: 'TIMEOUT' }),
    );
    expect((await getAttempt(stack.services.pool, started.connectionId))?.status).toBe('EXPIRED');
    expect(await call(user, 'wait_for_connection', { connectionId: started.connectionId, timeoutSec: 900 })).toEqual(
      answered({ status: 'EXPIRED' }),
    );
  });

  it('search_tools answers {tools: [{name, description, integration}]}; get_tool_schema an unknown tool {"error":"Tool not found"}', async () => {
    const user = await world.user();
    const found = await call(user, 'search_tools', { query: 'github repos' });
    expect(found.isError).toBe(false);
    expect(found.body.tools[0]).toEqual({ name: 'github_list_repos', description: expect.any(String), integration: 'github' });
    const schema = await call(user, 'get_tool_schema', { tool: 'github_create_issue' });
    expect(schema.isError).toBe(false);
    expect(schema.body.schema).toMatchObject({ type: 'object', required: ['owner', 'repo', 'title'] });
    for (const tool of ['github_nope', 'nope', 'a\u0000b']) {
      expect(await call(user, 'get_tool_schema', { tool })).toEqual(refused({ error: 'Tool not found' }));
    }
  });

  it('execute_tools: index-aligned entries, one failure aborting nothing, each error shape exact, all in a successful answer', async () => {
    const user = await world.githubUser(`batch-${Math.random().toString(36).slice(2, 8)}`);
    const answer = await call(user, 'execute_tools', {
      executions: [
        { tool: 'github_list_repos', args: { perPage: 1 } },
        { tool: 'github_create_issue', args: { owner: 'acme', repo: 'demo-repo', labels: ['bug'] } },
        { tool: 'slack_send_message', args: { channel: 'C123', text: 'opened' } },
        { tool: 'linear_list_issues' },
        { tool: 'no_such_tool', args: { anything: 1 } },
        // args is optional and defaults to {}.
        { tool: 'github_get_authenticated_user' },
      ],
    });
    expect(answer.isError).toBe(false);
    expect(answer.body).toEqual({
      results: [
        { result: [expect.objectContaining({ full_name: expect.stringMatching(/^batch-.*\/repo-0$/) })] },
        { error: expect.stringMatching(/^Invalid arguments for github_create_issue: title: /) },
        { error: 'NOT_CONNECTED', integration: 'slack', message: "slack not connected. Use connect('slack') to connect." },
        // connect('linear') would only refuse: the message sends the user to the portal instead.
        {
          error: 'NOT_CONNECTED',
          integration: 'linear',
          message: `linear not connected. Ask the user to add it in the portal: ${stack.baseUrl}/portal/integrations/linear`,
        },
        { error: 'Tool not found' },
        { result: expect.objectContaining({ login: expect.stringMatching(/^batch-/) }) },
      ],
    });
  });

  it('execute_tools: an empty batch, one over 500 entries and non-object args are refused whole, naming the problem; nothing runs', async () => {
    const user = await world.githubUser(`refused-${Math.random().toString(36).slice(2, 8)}`);
    const sent = () => apis.requests.filter((r) => r.subject?.startsWith('refused-')).length;
    const before = sent();
    const cases: [unknown, RegExp][] = [
      [[], /^Invalid arguments for execute_tools: executions: Too small: expected array to have >=1 items$/],
      [
        Array.from({ length: 501 }, () => ({ tool: 'github_get_authenticated_user' })),
        /^Invalid arguments for execute_tools: executions: Too big: expected array to have <=500 items$/,
      ],
      [
        [{ tool: 'github_get_authenticated_user' }, { tool: 'github_list_repos', args: [] }],
        /^Invalid arguments for execute_tools: executions\.1\.args: /,
      ],
      [
        [{ tool: 'github_get_authenticated_user' }, { tool: 'github_list_repos', args: '{"perPage":1}' }],
        /^Invalid arguments for execute_tools: executions\.1\.args: /,
      ],
      [
        [{ tool: 'github_get_authenticated_user' }, { tool: 'github_list_repos', args: null }],
        /^Invalid arguments for execute_tools: executions\.1\.args: /,
      ],
      [[{ tool: 'github_get_authenticated_user', surprise: true }], /^Invalid arguments for execute_tools: executions\.0: /],
      ['github_list_repos', /^Invalid arguments for execute_tools: executions: /],
    ];
    for (const [executions, error] of cases) {
      const answer = await call(user, 'execute_tools', { executions });
      expect(answer, JSON.stringify(executions).slice(0, 80)).toEqual(refused({ error: expect.stringMatching(error) }));
    }
    // Exactly 500 is accepted.
    const full = await call(user, 'execute_tools', { executions: Array.from({ length: 500 }, () => ({ tool: 'no_such_tool' })) });
    expect(full.isError).toBe(false);
    expect(full.body.results).toHaveLength(500);
    expect(new Set(full.body.results.map((r: unknown) => JSON.stringify(r)))).toEqual(
      new Set([JSON.stringify({ error: 'Tool not found' })]),
    );
    expect(sent()).toBe(before);
  }, 60_000);
});

describe.each([...SURFACES, ['MCP 2025 tasks', mcp2025Tasks]] as [string, Surface][])(
  "attackers on %s: another user's connectionId or account answers exactly like an unknown one",
  (_surface, call) => {
    const victim = world.user({ email: `victim-${Math.random().toString(36).slice(2, 8)}@example.com` });

    /** The victim's ids of every kind: pending, timed-out, connected attempts, and a connected account by id and label. */
    const victimIds = (async () => {
      const owner = await victim;
      const label = `victim-gh-${Math.random().toString(36).slice(2, 8)}`;
      const { account } = await world.connectGithub(owner, label);
      const pending = (await owner.call('connect', { integration: 'github' })).body.connectionId as string;
      const expired = (await owner.call('connect', { integration: 'github' })).body.connectionId as string;
      expect((await owner.call('wait_for_connection', { connectionId: expired, timeoutSec: 1 })).body).toEqual({ status: 'TIMEOUT' });
      const connected = (await owner.call('connect', { integration: 'github' })).body.connectionId as string;
      await finishAttempt(stack.services.pool, connected, { status: 'CONNECTED', accountId: account.id });
      return { owner, label, accountId: account.id, pending, expired, connected };
    })();

    /** The same call with `realId` and with an id nobody has: the answers must match, the ids aside. */
    async function sameAsUnknown(intruder: TestUser, tool: string, args: (id: string) => unknown, realId: string): Promise<Answer> {
      const unknownId = realId.replace(/.$/, (c) => (c === 'x' ? 'y' : 'x'));
      const real = await call(intruder, tool, args(realId));
      const unknown = await call(intruder, tool, args(unknownId));
      const normalise = (answer: Answer) => JSON.stringify(answer).split(realId).join('<id>').split(unknownId).join('<id>');
      expect(normalise(real), `${tool} with ${realId}`).toBe(normalise(unknown));
      return real;
    }

    it.each([
      ['another user of the same tenant', async () => world.user({ tenantId: (await victim).user.tenantId })],
      ['another tenant', () => world.user()],
    ])(
      '%s',
      async (_who, makeIntruder) => {
        const ids = await victimIds;
        const intruder = await makeIntruder();
        // A connected account of their own, so "not connected" is not why they fail.
        await world.connectGithub(intruder, `intruder-${Math.random().toString(36).slice(2, 8)}`);
        const victimCalls = () => apis.requests.filter((r) => r.subject === ids.label).length;
        const before = victimCalls();

        for (const connectionId of [ids.pending, ids.expired, ids.connected]) {
          for (const timeoutSec of [1, undefined]) {
            const answer = await sameAsUnknown(intruder, 'wait_for_connection', (id) => ({ connectionId: id, timeoutSec }), connectionId);
            expect(answer).toEqual(refused({ error: 'Unknown connectionId' }));
          }
        }
        for (const selector of [ids.accountId, ids.label, ids.connected, ids.pending]) {
          const answer = await sameAsUnknown(
            intruder,
            'execute_tools',
            (id) => ({ executions: [{ tool: 'github_get_authenticated_user', account: id }] }),
            selector,
          );
          expect(answer).toEqual(
            answered({
              results: [
                { error: 'NOT_CONNECTED', integration: 'github', message: "github not connected. Use connect('github') to connect." },
              ],
            }),
          );
          const disconnected = await sameAsUnknown(intruder, 'disconnect', (id) => ({ account: id }), selector);
          expect(disconnected.isError).toBe(true);
        }
        const listed = await call(intruder, 'list_connections', {});
        expect(JSON.stringify(listed.body)).not.toContain(ids.accountId);
        expect(JSON.stringify(listed.body)).not.toContain(ids.label);

        // Nothing reached the service as the victim, and the victim's account and attempts are as they were.
        expect(victimCalls()).toBe(before);
        expect((await ids.owner.call('list_connections', {})).body.connections).toEqual([
          expect.objectContaining({ id: ids.accountId, label: ids.label }),
        ]);
        expect((await getAttempt(stack.services.pool, ids.pending))?.status).toBe('PENDING');
      },
      60_000,
    );
  },
);

describe('execute_tools past the body limit', () => {
  it('a request body over 1 MB is answered 413 on the JSON API and on /mcp alike, before anything runs', async () => {
    const user = await world.user();
    const executions = Array.from({ length: 500 }, () => ({ tool: 'jots_create_note', args: { title: 't', body: 'x'.repeat(2100) } }));
    const headers = {
      authorization: `Bearer ${user.apiKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const json = await fetch(`${stack.baseUrl}/v1/tools/execute_tools`, { method: 'POST', headers, body: JSON.stringify({ executions }) });
    const mcp = await fetch(`${stack.baseUrl}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'execute_tools', arguments: { executions } } }),
    });
    for (const res of [json, mcp]) {
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ error: 'Request body too large' });
    }
    const { rows } = await stack.services.pool.query('SELECT count(*)::int AS n FROM audit_log WHERE actor_user_id = $1', [user.user.id]);
    expect(rows[0].n).toBe(0);
  });
});
