import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitationCompleteNotificationSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_ELICITING_CALLS_PER_USER } from '../../surfaces/mcp/2025-11-25/connect-elicitation.js';
import { consentAs, signedInPage } from '../support/consent.js';
import { startWorld, type TestUser } from '../support/harness.js';

// MCP sessions for 2025-revision clients and URL elicitation for connect (issue 17), with the
// official SDK client, the test authorization server, the fake GitHub API and chromium.

const world = await startWorld({ clients: { github: {} }, apis: true, env: { CONNECTION_TTL_SEC: '600' } });
const { stack, auth } = world;
const browser = await world.browser();
const alice = await world.user({ email: 'alice@example.com' });
const mallory = await world.user({ tenantId: alice.user.tenantId, email: 'mallory@example.com' });

afterAll(() => world.stop());

function transportFor(user: TestUser, sessionId?: string) {
  return new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${user.apiKey}` } },
    ...(sessionId && { sessionId }),
  });
}

const post = (user: TestUser, headers: Record<string, string>, body: unknown) =>
  fetch(`${stack.baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${user.apiKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...headers,
    },
    body: JSON.stringify(body),
  });

describe('sessions of 2025-revision clients', () => {
  it('initialize mints a session any request may carry; another user presenting it, or an ended one, gets 404', async () => {
    const transport = transportFor(alice);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    const sessionId = transport.sessionId;
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('execute_tools');

    const listTools = { jsonrpc: '2.0', id: 7, method: 'tools/list' };
    expect((await post(mallory, { 'mcp-session-id': sessionId! }, listTools)).status).toBe(404);
    expect((await post(alice, { 'mcp-session-id': 'made-up-session-id-000000000000' }, listTools)).status).toBe(404);
    // Without a session id a request is still answered (stateless clients).
    expect((await post(alice, {}, listTools)).status).toBe(200);

    await transport.terminateSession();
    expect((await post(alice, { 'mcp-session-id': sessionId! }, listTools)).status).toBe(404);
    const { rows } = await stack.services.pool.query('SELECT * FROM mcp_sessions');
    expect(JSON.stringify(rows)).not.toContain(sessionId);
    await client.close();
  });
});

describe('URL elicitation for connect', () => {
  it('a call that needs GitHub sends the portal link as elicitation/create, completes when consent ends, and answers the result', async () => {
    const transport = transportFor(alice);
    const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
    const elicited: { url: string; elicitationId: string; mode: string }[] = [];
    const completed: string[] = [];
    let consent: Promise<unknown> | undefined;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as { url: string; elicitationId: string; mode: string };
      elicited.push(params);
      // The human opens the link in their browser: Switchboard's portal, then GitHub's consent.
      consent = (async () => {
        const page = await signedInPage(browser, alice);
        await page.goto(params.url);
        await consentAs(page, auth, 'alice-gh');
        await page.context().close();
      })();
      return { action: 'accept' };
    });
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (n) => {
      completed.push(n.params.elicitationId);
    });
    await client.connect(transport);
    try {
      const answer = await client.callTool(
        { name: 'execute_tools', arguments: { executions: [{ tool: 'github_get_authenticated_user' }] } },
        undefined,
        {
          timeout: 120_000,
        },
      );
      await consent;
      expect(elicited).toHaveLength(1);
      expect(elicited[0].mode).toBe('url');
      expect(elicited[0].url).toMatch(new RegExp(`^${stack.baseUrl}/connect/github\\?t=`));
      expect(completed).toEqual([elicited[0].elicitationId]);
      expect((answer.structuredContent as { results: unknown[] }).results).toEqual([
        { result: expect.objectContaining({ login: 'alice-gh' }) },
      ]);
    } finally {
      await client.close();
    }
  }, 150_000);

  it('in a batch, only the entries that needed the connection run again; the others ran once and keep their answers', async () => {
    const dora = await world.user({ tenantId: alice.user.tenantId });
    const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
    let consent: Promise<unknown> | undefined;
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const { url } = request.params as { url: string };
      asked++;
      consent = (async () => {
        const page = await signedInPage(browser, dora);
        await page.goto(url);
        await consentAs(page, auth, 'dora-gh');
        await page.context().close();
      })();
      return { action: 'accept' };
    });
    await client.connect(transportFor(dora));
    try {
      const request = {
        name: 'execute_tools',
        arguments: {
          executions: [
            { tool: 'jots_create_note', args: { title: 'Before connecting', body: 'written once' } },
            { tool: 'github_get_authenticated_user' },
          ],
          requestId: 'dora-batch-1',
        },
      };
      const answer = await client.callTool(request, undefined, { timeout: 120_000 });
      await consent;
      const results = (answer.structuredContent as { results: { result?: { title?: string; login?: string } }[] }).results;
      expect(results[0].result?.title).toBe('Before connecting');
      expect(results[1].result?.login).toBe('dora-gh');
      // The note was written once: the second run had only the GitHub entry.
      const notes = await client.callTool({ name: 'execute_tools', arguments: { executions: [{ tool: 'jots_list_notes' }] } });
      const listed = (notes.structuredContent as { results: { result: { notes: { title: string }[] } }[] }).results[0].result.notes;
      expect(listed.filter((n) => n.title === 'Before connecting')).toHaveLength(1);

      // The client resends the same requestId (it timed out, say): the recorded answers, the GitHub
      // entry's from the run after connecting; nobody is asked to connect again, nothing runs twice.
      const resent = await client.callTool(request, undefined, { timeout: 60_000 });
      expect(asked).toBe(1);
      expect((resent.structuredContent as { results: unknown[] }).results).toEqual(results);
      const again = await client.callTool({ name: 'execute_tools', arguments: { executions: [{ tool: 'jots_list_notes' }] } });
      const after = (again.structuredContent as { results: { result: { notes: { title: string }[] } }[] }).results[0].result.notes;
      expect(after.filter((n) => n.title === 'Before connecting')).toHaveLength(1);
    } finally {
      await client.close();
    }
  }, 150_000);

  it('the elicited link is bound to the caller: another signed-in user who opens it connects nothing', async () => {
    const transport = transportFor(mallory);
    const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
    let url = '';
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      url = (request.params as { url: string }).url;
      return { action: 'accept' };
    });
    await client.connect(transport);
    try {
      const call = client.callTool({ name: 'execute_tools', arguments: { executions: [{ tool: 'github_list_repos' }] } }, undefined, {
        timeout: 120_000,
      });
      await expect.poll(() => url, { timeout: 30_000 }).not.toBe('');
      const page = await signedInPage(browser, alice);
      await page.goto(url);
      expect(await page.locator('h1').textContent()).toBe('Wrong account');
      await page.context().close();
      // Nobody finished it: after the bounded wait, the call answers what it would have anyway.
      const answer = await call;
      expect((answer.structuredContent as { results: { error: string }[] }).results[0].error).toBe('NOT_CONNECTED');
    } finally {
      await client.close();
    }
  }, 150_000);

  it('a client that did not declare URL elicitation gets the NOT_CONNECTED answer at once, and no request', async () => {
    const carol = await world.user({ tenantId: alice.user.tenantId });
    const client = new Client({ name: 'test', version: '1.0.0' });
    let asked = 0;
    await client.connect(transportFor(carol));
    client.fallbackRequestHandler = async () => {
      asked++;
      return {};
    };
    try {
      const answer = await client.callTool({ name: 'execute_tools', arguments: { executions: [{ tool: 'github_list_repos' }] } });
      expect((answer.structuredContent as { results: { error: string }[] }).results[0].error).toBe('NOT_CONNECTED');
      expect(asked).toBe(0);
    } finally {
      await client.close();
    }
  });
});

describe('URLElicitationRequiredError', () => {
  it(`when the user's ${MAX_ELICITING_CALLS_PER_USER} waiting calls are taken and nothing in a call ran, it answers -32042 with a link bound to the caller`, async () => {
    const gina = await world.user({ tenantId: alice.user.tenantId });
    const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
    let elicited = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      elicited++;
      return { action: 'accept' };
    });
    await client.connect(transportFor(gina));
    const call = { name: 'execute_tools', arguments: { executions: [{ tool: 'github_list_repos' }] } };
    // Five calls wait for gina to connect GitHub (nobody does): every slot of hers is taken.
    const waiting = Array.from({ length: MAX_ELICITING_CALLS_PER_USER }, () => client.callTool(call).catch((err: Error) => err));
    const deadline = Date.now() + 20_000;
    while (elicited < MAX_ELICITING_CALLS_PER_USER && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(elicited).toBe(MAX_ELICITING_CALLS_PER_USER);

    const refused = await client.callTool(call).then(
      () => undefined,
      (err: { code?: number; elicitations?: { mode: string; url: string; elicitationId: string }[] }) => err,
    );
    expect(refused?.code).toBe(-32042);
    expect(refused?.elicitations).toEqual([
      {
        mode: 'url',
        url: expect.stringContaining(stack.baseUrl),
        elicitationId: expect.any(String),
        message: expect.stringContaining('GitHub'),
      },
    ]);
    // The link is gina's: mallory, signed in, opening it connects nothing.
    const page = await signedInPage(browser, mallory);
    await page.goto(refused!.elicitations![0].url);
    expect(await page.locator('h1').textContent()).toBe('Wrong account');
    await page.context().close();
    const { rows } = await stack.services.pool.query('SELECT status FROM connection_attempts WHERE id = $1', [
      refused!.elicitations![0].elicitationId,
    ]);
    expect(rows[0].status).toBe('PENDING');
    await client.close();
    await Promise.all(waiting);
  });
});

describe('URL elicitation for approvals', () => {
  it('a destructive call sends the approval page; once the person approves, the call answers what the approved run did', async () => {
    const erin = await world.user({ tenantId: alice.user.tenantId });
    const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
    const elicited: { url: string; elicitationId: string }[] = [];
    const completed: string[] = [];
    let decided: Promise<unknown> | undefined;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as { url: string; elicitationId: string };
      elicited.push(params);
      // The person (here the caller themself, the default approver) reads what will run and approves.
      decided = (async () => {
        const page = await signedInPage(browser, erin);
        await page.goto(params.url);
        await page.getByRole('button', { name: 'Approve' }).click();
        await page.waitForURL(/done=approved/);
        await page.context().close();
      })();
      return { action: 'accept' };
    });
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (n) => {
      completed.push(n.params.elicitationId);
    });
    await client.connect(transportFor(erin));
    try {
      const created = await client.callTool({
        name: 'execute_tools',
        arguments: { executions: [{ tool: 'jots_create_note', args: { title: 'To delete', body: 'soon gone' } }] },
      });
      const id = (created.structuredContent as { results: { result: { id: string } }[] }).results[0].result.id;
      const answer = await client.callTool(
        { name: 'execute_tools', arguments: { executions: [{ tool: 'jots_delete_note', args: { id } }] } },
        undefined,
        { timeout: 120_000 },
      );
      await decided;
      expect(elicited).toHaveLength(1);
      expect(elicited[0].url).toMatch(new RegExp(`^${stack.baseUrl}/portal/approvals/`));
      expect(completed).toEqual([elicited[0].elicitationId]);
      expect((answer.structuredContent as { results: unknown[] }).results).toEqual([{ result: { deleted: true, id } }]);
    } finally {
      await client.close();
    }
  }, 150_000);
});
