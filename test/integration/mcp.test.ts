import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { consentAs, signedInPage } from '../support/consent.js';
import { createTestUser, startWorld } from '../support/harness.js';

const world = await startWorld({ clients: { github: {} }, apis: true });
const { auth, stack } = world;
const alice = await world.user({ email: 'alice-mcp@example.com' });
const browser = await world.browser();

async function mcpClient(path: string, apiKey: string): Promise<Client> {
  const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}${path}`), {
      requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
    }),
  );
  return client;
}

/** The JSON body a tool answered (its text content). */
const bodyOf = (result: Awaited<ReturnType<Client['callTool']>>) => JSON.parse((result.content as { text: string }[])[0].text);

describe('MCP at /mcp (the nine meta-tools and read_result)', () => {
  it('lists the nine meta-tools and read_result with input schemas and descriptions', async () => {
    const client = await mcpClient('/mcp', alice.apiKey);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'list_integrations',
      'connect',
      'get_auth_url',
      'wait_for_connection',
      'search_tools',
      'get_tool_schema',
      'execute_tools',
      'wait_for_approval',
      'list_connections',
      'disconnect',
      'read_result',
    ]);
    for (const tool of tools) {
      expect(tool.description?.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
    }
    const wait = tools.find((t) => t.name === 'wait_for_connection');
    expect(wait?.inputSchema.properties?.timeoutSec).toMatchObject({ type: 'integer', default: 300, maximum: 900 });
    await client.close();
  });

  it('answers errors as tool results with the spec bodies, not JSON-RPC errors', async () => {
    const client = await mcpClient('/mcp', alice.apiKey);
    const notFound = await client.callTool({ name: 'connect', arguments: { integration: 'nope' } });
    expect(notFound.isError).toBe(true);
    expect(bodyOf(notFound)).toEqual({ error: 'Integration not found' });
    const bad = await client.callTool({ name: 'wait_for_connection', arguments: { connectionId: 'x', timeoutSec: 0 } });
    expect(bad.isError).toBe(true);
    expect(bodyOf(bad).error).toMatch(/^Invalid arguments for wait_for_connection: timeoutSec: /);
    const unknown = await client.callTool({ name: 'wait_for_connection', arguments: { connectionId: 'nope', timeoutSec: 1 } });
    expect(bodyOf(unknown)).toEqual({ error: 'Unknown connectionId' });
    await client.close();
  });

  it('connects GitHub end to end: a long wait_for_connection completes when the browser finishes consent', async () => {
    const client = await mcpClient('/mcp', alice.apiKey);
    const started = bodyOf(await client.callTool({ name: 'connect', arguments: { integration: 'github' } }));
    expect(started).toMatchObject({ type: 'oauth2', url: expect.stringContaining('/connect/github?t=') });
    const waiting = client.callTool(
      { name: 'wait_for_connection', arguments: { connectionId: started.connectionId, timeoutSec: 300 } },
      undefined,
      {
        timeout: 320_000,
      },
    );
    const page = await signedInPage(browser, alice);
    await page.goto(started.url);
    await consentAs(page, auth, 'mcp-octo');
    expect(await page.locator('h1').textContent()).toBe('Connected');
    await page.context().close();
    const waited = await waiting;
    expect(waited.isError).toBeFalsy();
    expect(bodyOf(waited)).toEqual({ status: 'CONNECTED' });
    expect(waited.structuredContent).toEqual({ status: 'CONNECTED' });

    const integrations = bodyOf(await client.callTool({ name: 'list_integrations', arguments: {} })).integrations;
    expect(integrations[0]).toEqual({ name: 'github', version: '1.0.0', connected: true });
    const found = bodyOf(await client.callTool({ name: 'search_tools', arguments: { query: 'github repos' } }));
    expect(found.tools[0].name).toBe('github_list_repos');
    const schema = bodyOf(await client.callTool({ name: 'get_tool_schema', arguments: { tool: 'github_list_repos' } }));
    expect(schema.schema.properties.perPage.default).toBe(30);
    const executed = bodyOf(
      await client.callTool({
        name: 'execute_tools',
        arguments: { executions: [{ tool: 'github_list_repos', args: { perPage: 1 } }, { tool: 'nope' }] },
      }),
    );
    expect(executed.results).toEqual([
      { result: [expect.objectContaining({ full_name: 'mcp-octo/repo-0' })] },
      { error: 'Tool not found' },
    ]);
    const connections = bodyOf(await client.callTool({ name: 'list_connections', arguments: {} })).connections;
    expect(connections).toEqual([expect.objectContaining({ label: 'mcp-octo', integration: 'github' })]);
    expect(bodyOf(await client.callTool({ name: 'get_auth_url', arguments: { integration: 'github' } }))).toMatchObject({ type: 'oauth2' });
    expect(bodyOf(await client.callTool({ name: 'disconnect', arguments: { integration: 'github' } }))).toMatchObject({
      disconnected: true,
    });
    await client.close();
  }, 120_000);
});

describe('JSON-RPC batches', () => {
  it('a POST of 100 messages (one rate-limit count for 100 calls) is refused whole: 400, -32600, nothing answered', async () => {
    const batch = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list' }));
    for (const path of ['/mcp', '/mcp/agent']) {
      const res = await fetch(`${stack.baseUrl}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${alice.apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify(batch),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        jsonrpc: '2.0',
        error: { code: -32600, message: 'JSON-RPC batches are not accepted (MCP 2025-06-18 and later): send one message per POST' },
        id: null,
      });
    }
  });
});

describe('MCP at /mcp/agent (the two agent tools and read_result)', () => {
  it('serves connections_search, connections_execute and read_result only', async () => {
    const bob = await createTestUser(stack);
    const client = await mcpClient('/mcp/agent', bob.apiKey);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      'connections_search',
      'connections_execute',
      'wait_for_approval',
      'read_result',
    ]);
    const unknown = await client.callTool({ name: 'read_result', arguments: { resultRef: 'res_made_up' } });
    expect(unknown.isError).toBe(true);
    expect(bodyOf(unknown)).toEqual({ error: 'Unknown resultRef' });
    const search = bodyOf(await client.callTool({ name: 'connections_search', arguments: { query: 'list repos' } }));
    expect(search.ok).toBe(true);
    expect(search.results[0]).toMatchObject({ name: 'github__list_repos', connected: false, hint: expect.any(String) });
    const run = bodyOf(await client.callTool({ name: 'connections_execute', arguments: { name: 'github__list_repos', arguments: {} } }));
    expect(run).toEqual({
      ok: false,
      error: { code: 'not_connected', message: 'You are not connected to github.', integration: 'github' },
    });
    await client.close();
  });
});

describe('MCP authentication', () => {
  it('answers 401 with WWW-Authenticate without a key or with a bad one', async () => {
    for (const headers of [{}, { authorization: 'Bearer sbk_not-a-real-key' }] as Record<string, string>[]) {
      const res = await fetch(`${stack.baseUrl}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="switchboard"/);
    }
    const client = new Client({ name: 't', version: '1' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`)))).rejects.toThrow();
  });
});
