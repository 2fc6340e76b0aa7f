import { Client, ProtocolError, SdkError, SdkErrorCode, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { consentAs, signedInPage } from '../support/consent.js';
import { spawnServerProcess, startWorld, type TestUser } from '../support/harness.js';
import { freePort } from '../support/ports.js';

// MCP revision 2026-07-28 on /mcp and /mcp/agent beside the 2025 revisions (issue 17), with the
// official v2 client (@modelcontextprotocol/client), the test authorization server, the fake
// GitHub API and chromium.

const world = await startWorld({ clients: { github: {} }, apis: true, env: { CONNECTION_TTL_SEC: '600' } });
const { stack, auth } = world;
const browser = await world.browser();
const alice = await world.user({ email: 'alice-2026@example.com' });
const mallory = await world.user({ tenantId: alice.user.tenantId, email: 'mallory-2026@example.com' });

afterAll(() => world.stop());

const REVISION = '2026-07-28';

async function modernClient(user: TestUser, options: { path?: string; urlElicitation?: boolean; auto?: boolean } = {}) {
  const client = new Client(
    { name: 'switchboard-test-2026', version: '1.0.0' },
    {
      capabilities: options.urlElicitation ? { elicitation: { url: {} } } : {},
      versionNegotiation: { mode: options.auto ? 'auto' : { pin: REVISION } },
    },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}${options.path ?? '/mcp'}`), {
      requestInit: { headers: { authorization: `Bearer ${user.apiKey}` } },
    }),
  );
  return client;
}

async function legacyClient(user: TestUser, path = '/mcp') {
  const client = new LegacyClient({ name: 'switchboard-test-2025', version: '1.0.0' });
  await client.connect(
    new LegacyTransport(new URL(`${stack.baseUrl}${path}`), { requestInit: { headers: { authorization: `Bearer ${user.apiKey}` } } }),
  );
  return client;
}

const structured = <T>(result: unknown) => (result as { structuredContent?: unknown }).structuredContent as T;

/** The envelope a 2026-07-28 request carries in its params' `_meta`. */
const envelope = (capabilities: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': REVISION,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': capabilities,
});

const rawPost = (headers: Record<string, string>, body: unknown) =>
  fetch(`${stack.baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': REVISION,
      ...headers,
    },
    body: JSON.stringify(body),
  });

describe('one URL, every current revision', () => {
  it('a v2 client negotiating on its own (server/discover first) is served the 2026-07-28 revision, a v1 client the 2025 one', async () => {
    const modern = await modernClient(alice, { auto: true });
    expect(modern.getProtocolEra()).toBe('modern');
    expect(modern.getNegotiatedProtocolVersion()).toBe(REVISION);
    expect(modern.getServerCapabilities()).toMatchObject({ tools: {}, logging: {} });
    expect(modern.getServerVersion()?.name).toBe('switchboard');

    const legacy = await legacyClient(alice);
    expect(legacy.getServerVersion()?.name).toBe('switchboard');
    // The same tools, listed alike by both.
    const [modernTools, legacyTools] = await Promise.all([modern.listTools(), legacy.listTools()]);
    expect(modernTools.tools.map((t) => t.name)).toEqual(legacyTools.tools.map((t) => t.name));
    expect(modernTools.tools.map((t) => t.name)).toContain('execute_tools');
    for (const tool of modernTools.tools) {
      const twin = legacyTools.tools.find((t) => t.name === tool.name);
      expect(tool.inputSchema).toEqual(twin?.inputSchema);
      expect(tool.description).toBe(twin?.description);
    }
    await Promise.all([modern.close(), legacy.close()]);
  });

  it('/mcp/agent serves the agent tools to 2026-07-28 clients too', async () => {
    const client = await modernClient(alice, { path: '/mcp/agent' });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      'connections_search',
      'connections_execute',
      'wait_for_approval',
      'read_result',
    ]);
    await client.close();
  });

  it('tools/call runs the same tools with the same bodies: a note written through the jots API, and the spec error bodies', async () => {
    const modern = await modernClient(alice);
    const legacy = await legacyClient(alice);
    const created = await modern.callTool({
      name: 'execute_tools',
      arguments: { executions: [{ tool: 'jots_create_note', args: { title: 'From 2026', body: 'over the v2 SDK' } }] },
    });
    const note = structured<{ results: { result: { id: string; title: string } }[] }>(created).results[0].result;
    expect(note.title).toBe('From 2026');
    // The 2025 surface reads what the 2026 one wrote: one store, one caller.
    const listed = await legacy.callTool({ name: 'execute_tools', arguments: { executions: [{ tool: 'jots_list_notes' }] } });
    const notes = structured<{ results: { result: { notes: { id: string }[] } }[] }>(listed).results[0].result.notes;
    expect(notes.map((n) => n.id)).toContain(note.id);

    for (const args of [{ integration: 'nope' }, {}]) {
      const [a, b] = await Promise.all([
        modern.callTool({ name: 'connect', arguments: args }),
        legacy.callTool({ name: 'connect', arguments: args }),
      ]);
      expect(a.isError).toBe(true);
      expect(a.structuredContent).toEqual(b.structuredContent);
      expect(a.content).toEqual(b.content);
    }
    const unknown = await modern.callTool({ name: 'no_such_tool', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent).toEqual({ error: 'No tool named no_such_tool' });
    await Promise.all([modern.close(), legacy.close()]);
  });

  it('the agent surface runs a call over 2026-07-28 with its {ok, result} shape', async () => {
    const client = await modernClient(alice, { path: '/mcp/agent' });
    const answer = await client.callTool({
      name: 'connections_execute',
      arguments: { name: 'jots__create_note', arguments: { title: 'Agent 2026', body: 'x' } },
    });
    expect(answer.structuredContent).toMatchObject({ ok: true, result: { title: 'Agent 2026' } });
    await client.close();
  });

  it('the same key, Host/Origin guard and body limit stand in front of 2026-07-28 requests', async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } };
    const headers = { 'mcp-method': 'tools/list' };
    expect((await rawPost(headers, list)).status).toBe(401);
    expect((await rawPost({ ...headers, authorization: 'Bearer sbk_made_up' }, list)).status).toBe(401);
    const ok = await rawPost({ ...headers, authorization: `Bearer ${alice.apiKey}` }, list);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('"execute_tools"');
    // A page elsewhere calling with the victim's key (a browser sends its Origin): refused.
    const foreign = await rawPost({ ...headers, authorization: `Bearer ${alice.apiKey}`, origin: 'https://evil.example' }, list);
    expect(foreign.status).toBe(403);
    // A body that is not JSON is not classified (nor read): the 2025 transport answers it as it always has.
    const text = await fetch(`${stack.baseUrl}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.apiKey}`, 'content-type': 'text/plain', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(list),
    });
    expect(text.status).toBe(415);
    // Nested past what can be walked safely: refused on the 2026 path, answered as before on the 2025 one; never a 5xx.
    const nested = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const deep = (meta: string) =>
      fetch(`${stack.baseUrl}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${alice.apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_tools","arguments":{"x":${nested}}${meta}}}`,
      });
    const modernDeep = await deep(`,"_meta":${JSON.stringify(envelope())}`);
    expect(modernDeep.status).toBe(400);
    expect(await modernDeep.json()).toMatchObject({ error: { code: -32600 } });
    expect((await deep('')).status).toBeLessThan(500);
    const huge = { ...list, params: { ...list.params, padding: 'x'.repeat(1_100_000) } };
    expect((await rawPost({ ...headers, authorization: `Bearer ${alice.apiKey}` }, huge)).status).toBe(413);
  });
});

describe('input_required for connect (URL elicitation, multi round-trip)', () => {
  it('a call that needs GitHub answers the portal link; the client opens it, retries with requestState, and gets the result', async () => {
    const client = await modernClient(alice, { urlElicitation: true });
    const elicited: { mode: string; url: string; message: string }[] = [];
    let consent: Promise<unknown> | undefined;
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as { mode: string; url: string; message: string };
      elicited.push(params);
      // The human opens the link in their browser: Switchboard's portal, then GitHub's consent.
      consent = (async () => {
        const page = await signedInPage(browser, alice);
        await page.goto(params.url);
        await consentAs(page, auth, 'alice-gh-2026');
        await page.context().close();
      })();
      return { action: 'accept' };
    });
    try {
      const answer = await client.callTool(
        { name: 'execute_tools', arguments: { executions: [{ tool: 'github_get_authenticated_user' }] } },
        { timeout: 120_000 },
      );
      await consent;
      expect(elicited).toHaveLength(1);
      expect(elicited[0].mode).toBe('url');
      expect(elicited[0].url).toMatch(new RegExp(`^${stack.baseUrl}/connect/github\\?t=`));
      expect(elicited[0].message).toContain('GitHub');
      expect(structured<{ results: unknown[] }>(answer).results).toEqual([{ result: expect.objectContaining({ login: 'alice-gh-2026' }) }]);
    } finally {
      await client.close();
    }
  }, 150_000);

  it('a batch reports progress as its calls finish to a client that asks for it (alice is connected by now)', async () => {
    const client = await modernClient(alice);
    // One call answers at once, the other a second and a half later.
    world.apis.behave.set('/github/user', { delayMs: 1500, times: 1 });
    const heard: { progress: number; total?: number; at: number }[] = [];
    const answer = await client.callTool(
      { name: 'execute_tools', arguments: { executions: [{ tool: 'github_get_authenticated_user' }, { tool: 'github_list_repos' }] } },
      { onprogress: (p) => heard.push({ progress: p.progress, total: p.total, at: Date.now() }) },
    );
    const answeredAt = Date.now();
    expect(structured<{ results: { result?: unknown }[] }>(answer).results.every((r) => r.result !== undefined)).toBe(true);
    expect(heard).toContainEqual(expect.objectContaining({ progress: 1, total: 2 }));
    expect(heard.every((p) => p.at <= answeredAt)).toBe(true);
    await client.close();
  });

  it('in a batch, the entry that needed the connection runs once more; the others ran once', async () => {
    const dora = await world.user({ tenantId: alice.user.tenantId, email: 'dora-2026@example.com' });
    const client = await modernClient(dora, { urlElicitation: true });
    let consent: Promise<unknown> | undefined;
    let asked = 0;
    client.setRequestHandler('elicitation/create', async (request) => {
      asked++;
      const { url } = request.params as { url: string };
      consent = (async () => {
        const page = await signedInPage(browser, dora);
        await page.goto(url);
        await consentAs(page, auth, 'dora-gh-2026');
        await page.context().close();
      })();
      return { action: 'accept' };
    });
    try {
      const answer = await client.callTool(
        {
          name: 'execute_tools',
          arguments: {
            executions: [
              { tool: 'jots_create_note', args: { title: 'Once in 2026', body: 'x' } },
              { tool: 'github_get_authenticated_user' },
            ],
          },
        },
        { timeout: 120_000 },
      );
      await consent;
      expect(asked).toBe(1);
      const results = structured<{ results: { result?: { title?: string; login?: string } }[] }>(answer).results;
      expect(results[0].result?.title).toBe('Once in 2026');
      expect(results[1].result?.login).toBe('dora-gh-2026');
      const notes = await client.callTool({ name: 'execute_tools', arguments: { executions: [{ tool: 'jots_list_notes' }] } });
      const listed = structured<{ results: { result: { notes: { title: string }[] } }[] }>(notes).results[0].result.notes;
      expect(listed.filter((n) => n.title === 'Once in 2026')).toHaveLength(1);
    } finally {
      await client.close();
    }
  }, 150_000);

  it('a client that did not declare URL elicitation gets NOT_CONNECTED at once', async () => {
    const carol = await world.user({ tenantId: alice.user.tenantId, email: 'carol-2026@example.com' });
    const client = await modernClient(carol);
    const answer = await client.callTool({ name: 'execute_tools', arguments: { executions: [{ tool: 'github_list_repos' }] } });
    expect(structured<{ results: { error: string }[] }>(answer).results[0].error).toBe('NOT_CONNECTED');
    await client.close();
  });

  it("requestState is the caller's own: another user's, an edited one or one of another call is refused; declining answers as it stands", async () => {
    const erin = await world.user({ tenantId: alice.user.tenantId, email: 'erin-2026@example.com' });
    const call = { name: 'execute_tools', arguments: { executions: [{ tool: 'github_list_repos' }] } };
    const erinClient = await modernClient(erin, { urlElicitation: true });
    const first = (await erinClient.callTool(call, { allowInputRequired: true })) as unknown as {
      resultType: string;
      inputRequests: Record<string, { method: string; params: { mode: string; url: string } }>;
      requestState: string;
    };
    expect(first.resultType).toBe('input_required');
    const [key, ask] = Object.entries(first.inputRequests)[0];
    expect(ask).toMatchObject({ method: 'elicitation/create', params: { mode: 'url' } });
    expect(ask.params.url).toMatch(/\/connect\/github\?t=/);

    const retry = (client: Client, params: Record<string, unknown>) =>
      client.callTool({ ...call, ...params } as typeof call, { allowInputRequired: true });
    const refused = async (promise: Promise<unknown>) => {
      const err = await promise.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ProtocolError);
      expect((err as ProtocolError).code).toBe(-32602);
      expect((err as ProtocolError).message).toMatch(/requestState/);
    };
    // Mallory replays Erin's state (and her accept): refused, nothing of Erin's is reached.
    const malloryClient = await modernClient(mallory, { urlElicitation: true });
    await refused(retry(malloryClient, { requestState: first.requestState, inputResponses: { [key]: { action: 'accept' } } }));
    // An edited state: its signature no longer matches.
    const [head, body, mac] = first.requestState.split('.');
    const edited = `${head}.${body.slice(0, -2)}${body.slice(-2) === 'AA' ? 'AB' : 'AA'}.${mac}`;
    await refused(retry(erinClient, { requestState: edited, inputResponses: { [key]: { action: 'accept' } } }));
    await refused(retry(erinClient, { requestState: 'made-up', inputResponses: { [key]: { action: 'accept' } } }));
    // Erin's own state on another call (other arguments).
    const otherCall = { name: 'execute_tools', arguments: { executions: [{ tool: 'github_get_authenticated_user' }] } };
    await refused(
      erinClient.callTool(
        { ...otherCall, requestState: first.requestState, inputResponses: { [key]: { action: 'accept' } } } as typeof call,
        {
          allowInputRequired: true,
        },
      ),
    );
    // Her own, declined: the call answers what it would have, at once.
    const declined = await retry(erinClient, { requestState: first.requestState, inputResponses: { [key]: { action: 'decline' } } });
    expect(structured<{ results: { error: string }[] }>(declined as { structuredContent?: unknown }).results[0].error).toBe(
      'NOT_CONNECTED',
    );
    await Promise.all([erinClient.close(), malloryClient.close()]);
  });

  it('malformed inputResponses (null, a number, an answer that is not an object) are refused with -32602 and run nothing; an answer to a key never asked is ignored', async () => {
    const headers = { authorization: `Bearer ${alice.apiKey}`, 'mcp-method': 'tools/call', 'mcp-name': 'execute_tools' };
    const call = (id: number, inputResponses: unknown) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: 'execute_tools',
        arguments: { executions: [{ tool: 'jots_create_note', args: { title: `malformed ${id}`, body: 'x' } }] },
        inputResponses,
        _meta: envelope({ elicitation: { url: {} } }),
      },
    });
    const legacy = await legacyClient(alice);
    const noteTitles = async () => {
      const listed = await legacy.callTool({ name: 'execute_tools', arguments: { executions: [{ tool: 'jots_list_notes' }] } });
      return structured<{ results: { result: { notes: { title: string }[] } }[] }>(listed).results[0].result.notes.map((n) => n.title);
    };
    const titlesBefore = await noteTitles();
    for (const [id, malformed] of [
      [7, null],
      [8, 5],
      [9, { 'connect:github': 12345 }],
      [10, { 'connect:github': [{ action: 'accept' }] }],
    ] as const) {
      const refused = await rawPost(headers, call(id, malformed));
      expect(refused.status, JSON.stringify(malformed)).toBe(400);
      expect(await refused.json()).toMatchObject({
        jsonrpc: '2.0',
        id,
        error: { code: -32602, message: expect.stringMatching(/^Invalid params: inputResponses/) },
      });
    }
    // Nothing ran: no note was written.
    expect((await noteTitles()).filter((t) => t.startsWith('malformed'))).toEqual([]);
    expect(await noteTitles()).toEqual(titlesBefore);
    // Well formed, answering a key no round asked: ignored, and the call answers as it stands.
    const listed = await rawPost(
      { ...headers, 'mcp-name': 'list_integrations' },
      {
        jsonrpc: '2.0',
        id: 11,
        method: 'tools/call',
        params: { name: 'list_integrations', arguments: {}, inputResponses: { never_asked: { action: 'accept' } }, _meta: envelope() },
      },
    );
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain('"integrations"');
    await legacy.close();
  });

  it('any process answers any round: the retry goes to another server process, which reads the state and the recorded run', async () => {
    const ivan = await world.user({ tenantId: alice.user.tenantId, email: 'ivan-2026@example.com' });
    const call = {
      name: 'execute_tools',
      arguments: {
        executions: [{ tool: 'jots_create_note', args: { title: 'Written in round one', body: 'x' } }, { tool: 'github_list_repos' }],
      },
    };
    const here = await modernClient(ivan, { urlElicitation: true });
    const first = (await here.callTool(call, { allowInputRequired: true })) as unknown as {
      inputRequests: Record<string, unknown>;
      requestState: string;
    };
    const [key] = Object.keys(first.inputRequests);
    const port = await freePort();
    const other = await spawnServerProcess(stack, port);
    world.onStop(() => {
      other.kill('SIGKILL');
    });
    try {
      const there = new Client(
        { name: 'switchboard-test-2026', version: '1.0.0' },
        { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: REVISION } } },
      );
      await there.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${ivan.apiKey}` } },
        }),
      );
      const answer = await there.callTool({
        ...call,
        requestState: first.requestState,
        inputResponses: { [key]: { action: 'decline' } },
      } as typeof call);
      const results = structured<{ results: { result?: { title?: string }; error?: string }[] }>(answer).results;
      // The note from round one, as recorded (not written again); GitHub still not connected.
      expect(results[0].result?.title).toBe('Written in round one');
      expect(results[1].error).toBe('NOT_CONNECTED');
      const notes = await there.callTool({ name: 'execute_tools', arguments: { executions: [{ tool: 'jots_list_notes' }] } });
      const listed = structured<{ results: { result: { notes: { title: string }[] } }[] }>(notes).results[0].result.notes;
      expect(listed.filter((n) => n.title === 'Written in round one')).toHaveLength(1);
      await there.close();
    } finally {
      other.kill('SIGKILL');
      await here.close();
    }
  }, 60_000);

  it('the link is bound to the caller: another signed-in user who opens it connects nothing', async () => {
    const frank = await world.user({ tenantId: alice.user.tenantId, email: 'frank-2026@example.com' });
    const client = await modernClient(frank, { urlElicitation: true });
    const first = (await client.callTool(
      { name: 'execute_tools', arguments: { executions: [{ tool: 'github_list_repos' }] } },
      { allowInputRequired: true },
    )) as unknown as { inputRequests: Record<string, { params: { url: string } }> };
    const { url } = Object.values(first.inputRequests)[0].params;
    const page = await signedInPage(browser, mallory);
    await page.goto(url);
    expect(await page.locator('h1').textContent()).toBe('Wrong account');
    await page.context().close();
    await client.close();
  });
});

describe('input_required for approvals', () => {
  it('a destructive call on the agent surface answers the approval page; approved, the retry answers what the approved run did', async () => {
    const gina = await world.user({ tenantId: alice.user.tenantId, email: 'gina-2026@example.com' });
    const client = await modernClient(gina, { path: '/mcp/agent', urlElicitation: true });
    const elicited: string[] = [];
    let decided: Promise<unknown> | undefined;
    client.setRequestHandler('elicitation/create', async (request) => {
      const { url } = request.params as { url: string };
      elicited.push(url);
      // The person (here the caller themself, the default approver) reads what will run and approves.
      decided = (async () => {
        const page = await signedInPage(browser, gina);
        await page.goto(url);
        await page.getByRole('button', { name: 'Approve' }).click();
        await page.waitForURL(/done=approved/);
        await page.context().close();
      })();
      return { action: 'accept' };
    });
    try {
      const created = await client.callTool({
        name: 'connections_execute',
        arguments: { name: 'jots__create_note', arguments: { title: 'To delete in 2026', body: 'soon gone' } },
      });
      const id = structured<{ result: { id: string } }>(created).result.id;
      const answer = await client.callTool(
        { name: 'connections_execute', arguments: { name: 'jots__delete_note', arguments: { id } } },
        { timeout: 120_000 },
      );
      await decided;
      expect(elicited).toHaveLength(1);
      expect(elicited[0]).toMatch(new RegExp(`^${stack.baseUrl}/portal/approvals/`));
      expect(answer.structuredContent).toEqual({ ok: true, result: { deleted: true, id } });
    } finally {
      await client.close();
    }
  }, 150_000);
});

const TASKS = 'io.modelcontextprotocol/tasks';
const ISSUES_PATH = '/github/repos/octocat/hello-world/issues';
const createIssue = (title: string) => ({ tool: 'github_create_issue', args: { owner: 'octocat', repo: 'hello-world', title } });

interface TaskHandle {
  resultType: string;
  taskId: string;
  status: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
}
const detailedTask = z.looseObject({ taskId: z.string(), status: z.string() });
type DetailedTask = z.infer<typeof detailedTask> & { result?: { structuredContent?: unknown; isError?: boolean } };

/**
 * A v2 client that declares the Tasks extension. The v2 client (2.4.0) has no Tasks support of its
 * own: callTool rejects a `resultType: "task"` answer (UnsupportedResultType), so the handle is read
 * off its transport as it passes, and tasks/* go through `request` with explicit schemas.
 */
async function tasksClient(user: TestUser, path = '/mcp') {
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}${path}`), {
    requestInit: { headers: { authorization: `Bearer ${user.apiKey}` } },
  });
  const client = new Client(
    { name: 'switchboard-test-tasks', version: '1.0.0' },
    { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: { pin: REVISION } } },
  );
  await client.connect(transport);
  const seen: { method?: string; params?: Record<string, unknown>; result?: Record<string, unknown> }[] = [];
  const deliver = transport.onmessage!;
  transport.onmessage = (message) => {
    seen.push(message as (typeof seen)[number]);
    deliver(message);
  };
  return {
    client,
    seen,
    /** A tools/call the server answers with a task: its CreateTaskResult, exactly as sent. */
    async callAsTask(name: string, args: Record<string, unknown>): Promise<TaskHandle> {
      const before = seen.length;
      const err = await client.callTool({ name, arguments: args }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SdkError);
      expect((err as SdkError).code).toBe(SdkErrorCode.UnsupportedResultType);
      const handle = seen.slice(before).find((m) => m.result?.resultType === 'task')?.result;
      expect(handle).toBeDefined();
      return handle as unknown as TaskHandle;
    },
    get: (taskId: string) => client.request({ method: 'tasks/get', params: { taskId } }, detailedTask) as Promise<DetailedTask>,
    cancel: (taskId: string) => client.request({ method: 'tasks/cancel', params: { taskId } }, z.looseObject({})),
    update: (taskId: string) => client.request({ method: 'tasks/update', params: { taskId, inputResponses: {} } }, z.looseObject({})),
    /** Polls tasks/get (at the task's pollIntervalMs) until `done` holds. */
    async until(taskId: string, done: (task: DetailedTask) => boolean, timeoutMs = 30_000): Promise<DetailedTask> {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const task = await client.request({ method: 'tasks/get', params: { taskId } }, detailedTask);
        if (done(task as DetailedTask)) return task as DetailedTask;
        if (Date.now() > end) throw new Error(`task ${taskId} still ${task.status}`);
        await new Promise((r) => setTimeout(r, Number(task.pollIntervalMs ?? 500)));
      }
    },
  };
}

async function protocolErrorOf(promise: Promise<unknown>): Promise<ProtocolError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProtocolError);
  return err as ProtocolError;
}

describe('Tasks (the io.modelcontextprotocol/tasks extension)', () => {
  it('a call runs as a task for a client that declares the extension: the handle before the work ends, then the same result tasks/get', async () => {
    const tina = await world.githubUser('tina-2026');
    const { client, callAsTask, until } = await tasksClient(tina);
    expect(client.getServerCapabilities()).toMatchObject({ extensions: { [TASKS]: {} } });
    world.apis.behave.set(ISSUES_PATH, { delayMs: 1500, times: 1 });
    const handle = await callAsTask('execute_tools', { executions: [createIssue('From a 2026 task')] });
    expect(handle).toMatchObject({
      resultType: 'task',
      taskId: expect.stringMatching(/^tsk_/),
      status: 'working',
      ttlMs: expect.any(Number),
      pollIntervalMs: expect.any(Number),
    });
    expect(handle).not.toHaveProperty('content');
    const done = await until(handle.taskId, (t) => t.status !== 'working');
    expect(done.status).toBe('completed');
    expect(done.result?.structuredContent).toEqual({ results: [{ result: expect.objectContaining({ title: 'From a 2026 task' }) }] });
    // Quick tools are answered directly, tasks or not.
    const listed = await client.callTool({ name: 'list_integrations', arguments: {} });
    expect(structured<{ integrations: unknown[] }>(listed).integrations.length).toBeGreaterThan(0);
    await client.close();
  });

  it('a tool error is a completed task carrying the error result (failed is for JSON-RPC errors)', async () => {
    const { client, callAsTask, until } = await tasksClient(alice, '/mcp/agent');
    const handle = await callAsTask('connections_execute', { name: 'github__no_such_tool', arguments: {} });
    const done = await until(handle.taskId, (t) => t.status !== 'working');
    expect(done.status).toBe('completed');
    expect(done.result?.structuredContent).toMatchObject({ ok: false, error: { code: 'not_found' } });
    await client.close();

    // Arguments the tool refuses: the task ends with the tool's error body as an isError result.
    const meta = await tasksClient(alice);
    const refused = await meta.callAsTask('execute_tools', { executions: [] });
    const ended = await meta.until(refused.taskId, (t) => t.status !== 'working');
    expect(ended.status).toBe('completed');
    expect(ended.result?.isError).toBe(true);
    expect(ended.result?.structuredContent).toEqual({ error: expect.stringMatching(/^Invalid arguments for execute_tools: executions/) });
    await meta.client.close();
  });

  it("cancel ends a wait; another user's task id answers as unknown to get, update, cancel and a subscription", async () => {
    const hugo = await world.user({ tenantId: alice.user.tenantId, email: 'hugo-2026@example.com' });
    const owner = await tasksClient(hugo);
    const started = await owner.client.callTool({ name: 'connect', arguments: { integration: 'github' } });
    const { connectionId } = structured<{ connectionId: string }>(started);
    const handle = await owner.callAsTask('wait_for_connection', { connectionId, timeoutSec: 600 });
    expect(handle.status).toBe('working');

    const other = await tasksClient(mallory);
    for (const attempt of [other.get, other.update, other.cancel]) {
      const err = await protocolErrorOf(attempt(handle.taskId));
      expect(err.code).toBe(-32602);
      expect(err.message).toMatch(/Task not found/);
    }
    // The same answer as an id nobody has.
    expect((await protocolErrorOf(other.get('tsk_made_up_0000000000000000000000000'))).message).toMatch(/Task not found/);
    // Mallory's subscription acknowledges nothing and ends at once.
    const subscription = await other.client.listen({ taskIds: [handle.taskId] } as never);
    expect(await subscription.closed).toBe('graceful');
    const ack = other.seen.find((m) => m.method === 'notifications/subscriptions/acknowledged');
    expect(ack?.params?.notifications).toEqual({ taskIds: [] });
    expect(other.seen.some((m) => m.method === 'notifications/tasks')).toBe(false);
    // Hugo's task never noticed.
    expect((await owner.get(handle.taskId)).status).toBe('working');

    expect(await owner.update(handle.taskId)).toBeDefined();
    await owner.cancel(handle.taskId);
    const cancelled = await owner.until(handle.taskId, (t) => t.status !== 'working');
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled).not.toHaveProperty('result');
    await Promise.all([owner.client.close(), other.client.close()]);
  });

  it('a subscription naming a task gets notifications/tasks as it changes, the last one with the result, then ends', async () => {
    const uma = await world.githubUser('uma-2026');
    const { client, callAsTask, seen } = await tasksClient(uma);
    const heard: DetailedTask[] = [];
    client.setNotificationHandler('notifications/tasks', { params: detailedTask }, (params) => {
      heard.push(params as DetailedTask);
    });
    world.apis.behave.set(ISSUES_PATH, { delayMs: 2000, times: 1 });
    const handle = await callAsTask('execute_tools', { executions: [createIssue('Heard of in 2026')] });
    const subscription = await client.listen({ taskIds: [handle.taskId] } as never);
    expect(seen.find((m) => m.method === 'notifications/subscriptions/acknowledged')?.params?.notifications).toEqual({
      taskIds: [handle.taskId],
    });
    expect(await subscription.closed).toBe('graceful');
    expect(heard[0]).toMatchObject({ taskId: handle.taskId, status: 'working' });
    expect(heard.at(-1)).toMatchObject({ taskId: handle.taskId, status: 'completed' });
    expect(heard.at(-1)?.result?.structuredContent).toEqual({
      results: [{ result: expect.objectContaining({ title: 'Heard of in 2026' }) }],
    });
    await client.close();
  });

  it('one user holds at most five task subscriptions at once; the sixth is refused, and ended ones free their place', async () => {
    const vera = await world.user({ tenantId: alice.user.tenantId, email: 'vera-2026@example.com' });
    const owner = await tasksClient(vera);
    const { connectionId } = structured<{ connectionId: string }>(
      await owner.client.callTool({ name: 'connect', arguments: { integration: 'github' } }),
    );
    const handle = await owner.callAsTask('wait_for_connection', { connectionId, timeoutSec: 600 });
    const listeners = await Promise.all(Array.from({ length: 5 }, () => tasksClient(vera)));
    const subscriptions = await Promise.all(listeners.map((l) => l.client.listen({ taskIds: [handle.taskId] } as never)));
    const sixth = await tasksClient(vera);
    const refused = await sixth.client.listen({ taskIds: [handle.taskId] } as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ProtocolError);
    expect((refused as ProtocolError).message).toMatch(/Subscription limit reached/);
    // Another user is not held back by Vera's subscriptions.
    const others = await tasksClient(mallory);
    expect(await (await others.client.listen({ taskIds: [] } as never)).closed).toBe('graceful');

    await owner.cancel(handle.taskId);
    expect(await Promise.all(subscriptions.map((sub) => sub.closed))).toEqual(Array(5).fill('graceful'));
    // Each heard the task end.
    for (const l of listeners) expect(l.seen.filter((m) => m.method === 'notifications/tasks').at(-1)?.params?.status).toBe('cancelled');
    // Their places are free again.
    expect(await (await sixth.client.listen({ taskIds: [handle.taskId] } as never)).closed).toBe('graceful');
    await Promise.all([owner, sixth, others, ...listeners].map((l) => l.client.close()));
  });

  it('a client that does not declare the extension is answered directly, and tasks/* answer -32021', async () => {
    const client = await modernClient(alice);
    const answer = await client.callTool({ name: 'execute_tools', arguments: { executions: [{ tool: 'jots_list_notes' }] } });
    expect(structured<{ results: unknown[] }>(answer).results).toHaveLength(1);
    const err = await protocolErrorOf(client.request({ method: 'tasks/get', params: { taskId: 'tsk_x' } }, detailedTask));
    expect(err.code).toBe(-32021);
    expect(err.data).toEqual({ requiredCapabilities: { extensions: { [TASKS]: {} } } });
    await client.close();
  });
});
