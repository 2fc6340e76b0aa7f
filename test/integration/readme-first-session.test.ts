import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { consentAtDemo, signInWithLink } from '../../bin/support/demo-person.js';
import { type LocalStack, startLocalStack } from '../../bin/support/local-stack.js';
import { launchBrowser } from '../support/browser.js';
import { ShellSession } from '../support/shell-session.js';

// README's first session, run as written against `npm start` (bin/start.ts on free ports, with a data
// directory and schema of its own): the shell blocks marked `first-session` pasted into one bash
// after the `export` line npm start printed, the MCP calls marked `first-session-mcp-calls` sent by
// an MCP client built from the config marked `first-session-mcp-config`, and the person's part (the
// printed sign-in link, the connect links, the demo's sign-in and consent) in chromium. The shell
// also gets what a person's shell has by default and this stack has elsewhere: where its data
// directory, database schema and Temporal are (LocalStack.shellEnv).

const ROOT = join(import.meta.dirname, '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The bodies of README's fenced blocks whose info string is `<language> <marker>`, in order. */
function markedBlocks(marker: string): string[] {
  return [...README.matchAll(/^```\S+ (\S+)\n([\s\S]*?)^```$/gm)].filter((m) => m[1] === marker).map((m) => m[2]);
}

const shellBlocks = markedBlocks('first-session');
const [mcpConfigText] = markedBlocks('first-session-mcp-config');
const [mcpCallsText] = markedBlocks('first-session-mcp-calls');

let stack: LocalStack;
let shell: ShellSession;
let browser: Browser;
let person: Page;

/** The operator port's gauge of wait_for_connection calls in flight: the agent is waiting now. */
async function pendingWaits(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${stack.ports.metrics}/metrics`)).text();
  return Number(/^switchboard_pending_connection_waits (\d+)/m.exec(text)?.[1] ?? 0);
}

/** The person, once the agent waits: opens the connect link in their signed-in browser and allows at the demo. */
async function personConnects(url: string): Promise<void> {
  await expect.poll(pendingWaits, { timeout: 30_000 }).toBeGreaterThan(0);
  await person.goto(url);
  await consentAtDemo(person, stack.printed.demoOrigin);
  expect(await person.locator('h1').textContent()).toBe('Connected');
}

/** Runs the next marked shell block to its end; fails on a non-zero status. */
async function runBlock(index: number): Promise<string> {
  const { done } = shell.start(shellBlocks[index]);
  const { output, status } = await done;
  expect(status, output).toBe(0);
  return output;
}

beforeAll(async () => {
  expect(shellBlocks.length, 'README marks its first-session shell blocks').toBe(5);
  stack = await startLocalStack({ databaseUrl: inject('testDatabaseUrl'), temporalCli: inject('temporalCli') });
  shell = new ShellSession({ cwd: ROOT, env: { ...process.env, ...stack.shellEnv } });
  browser = await launchBrowser();
  person = await (await browser.newContext()).newPage();
}, 180_000);

afterAll(async () => {
  shell?.close();
  await browser?.close();
  await stack?.stop();
});

describe("README's first session, as written", () => {
  it('npm start prints the export line, the sign-in link and the demo; pasting the line sets the variables', async () => {
    expect(stack.printed.exportLine).toMatch(/^export SB=http:\/\/localhost:\d+ KEY=sbk_\S+ SB_USER=usr_\S+$/);
    expect(stack.printed.demoOrigin).toBe(`http://127.0.0.1:${stack.ports.demo}`);
    const { output } = await shell.start(`${stack.printed.exportLine}\necho "$SB $SB_USER"`).done;
    expect(output.trim()).toBe(`${stack.printed.baseUrl} ${stack.printed.userId}`);
    // README: open the portal sign-in link npm start printed (Sign in).
    await signInWithLink(person, stack.printed.signInLink);
  });

  let connectUrl = '';
  it('with curl: list, then connect, after which npm start prints the Temporal UI link of the connection workflow', async () => {
    const printedBefore = stack.output().length;
    const output = await runBlock(0);
    expect(output).toContain('{"name":"demo","version":"1.0.0","connected":false}');
    const connect = JSON.parse(/^\{"connectionId".*$/m.exec(output)![0]);
    expect(connect).toMatchObject({ type: 'oauth2', url: expect.stringMatching(/\/connect\/demo\?t=/) });
    connectUrl = connect.url;
    const [, link] = await stack.waitFor(/First connect: .*\n\s+(http\S+)/, { from: printedBefore, timeoutMs: 10_000 });
    expect(link).toContain(`/workflows/connection-${connect.connectionId}/`);
    expect(link.startsWith(stack.printed.temporalUi)).toBe(true);
    expect((await fetch(link)).status).toBe(200);
  });

  it('wait_for_connection answers CONNECTED once the person allows, not before', async () => {
    const { printed, done } = shell.start(shellBlocks[1]);
    await expect.poll(pendingWaits, { timeout: 30_000 }).toBeGreaterThan(0);
    expect(printed(), 'the wait has not answered before the person consented').toBe('');
    await personConnects(connectUrl);
    const { output, status } = await done;
    expect(status).toBe(0);
    expect(output.trim()).toBe('{"status":"CONNECTED"}');
    expect(printed()).toBe(output);
  }, 60_000);

  let firstRefreshes = -1;
  it('search finds the demo tools, and a batch of them runs', async () => {
    const output = await runBlock(2);
    const [search, batch] = output
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(search.tools[0]).toMatchObject({ name: expect.stringMatching(/^demo_/), integration: 'demo' });
    expect(batch.results).toEqual([
      { result: { account: 'demo-user', token: expect.objectContaining({ refreshes: expect.any(Number) }) } },
      { result: { tasks: expect.arrayContaining([expect.objectContaining({ done: false })]) } },
      { result: { task: expect.objectContaining({ title: 'Read the README', done: false }) } },
    ]);
    firstRefreshes = batch.results[0].result.token.refreshes;
  }, 60_000);

  it('half a minute later the token has been refreshed on its own; disconnect revokes it at the demo', async () => {
    const printedBefore = stack.output().length;
    const output = await runBlock(3);
    const [whoami, disconnected] = output
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(whoami.results[0].result.token.refreshes).toBeGreaterThan(firstRefreshes);
    expect(disconnected).toMatchObject({ disconnected: true, integration: 'demo', revoked: true });
    expect(stack.output().slice(printedBefore)).toMatch(/demo: refreshed demo-user's access token/);
    expect(stack.output().slice(printedBefore)).toMatch(/demo: revoked demo-user's grant/);
  }, 90_000);

  it('with an MCP client configured as README says: connect, wait, search, execute, disconnect', async () => {
    const server = JSON.parse(mcpConfigText).mcpServers.switchboard;
    // The two things a reader puts in the config: their key, and their address.
    const url = server.url.replace('http://localhost:3000', stack.printed.baseUrl);
    const headers = { Authorization: server.headers.Authorization.replace('sbk_…', stack.printed.apiKey) };
    const client = new Client({ name: 'readme-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toEqual(
        expect.arrayContaining(['list_integrations', 'connect', 'wait_for_connection', 'search_tools', 'execute_tools']),
      );
      const answers: Record<string, any> = {};
      let connectionId = '';
      for (const line of mcpCallsText.trim().split('\n')) {
        const call = JSON.parse(line.replace('"connectionId":"…"', `"connectionId":"${connectionId}"`));
        const running = client.callTool(call, undefined, { timeout: 120_000 });
        if (call.name === 'wait_for_connection') await personConnects(answers.connect.url);
        const result = await running;
        expect(result.isError, JSON.stringify(result)).toBeFalsy();
        answers[call.name] = JSON.parse((result.content as { text: string }[])[0].text);
        if (call.name === 'connect') connectionId = answers.connect.connectionId;
      }
      expect(answers.list_integrations.integrations).toContainEqual({ name: 'demo', version: '1.0.0', connected: false });
      expect(answers.wait_for_connection).toEqual({ status: 'CONNECTED' });
      expect(answers.search_tools.tools[0].integration).toBe('demo');
      expect(answers.execute_tools.results[0].result.tasks.length).toBeGreaterThan(0);
      expect(answers.disconnect).toMatchObject({ disconnected: true, revoked: true });
    } finally {
      await client.close();
    }
  }, 120_000);

  it('the agent workflow example asks the person to connect through its worker, waits, and completes', async () => {
    const { printed, done } = shell.start(shellBlocks[4]);
    const [, link] = await shell.waitFor(printed, /Please connect demo: (\S+)/, 90_000);
    expect(printed()).toMatch(/started digest-demo-\S+ \(demo\); waiting/);
    await person.goto(link);
    await consentAtDemo(person, stack.printed.demoOrigin);
    expect(await person.locator('h1').textContent()).toBe('Connected');
    const { output, status } = await done;
    expect(status, output).toBe(0);
    // start.ts prints the result as indented JSON: from a line `{` to a line `}`.
    const printedResult = /^\{\n[\s\S]*?^\}$/m.exec(output);
    expect(printedResult, output).not.toBeNull();
    const result = JSON.parse(printedResult![0]);
    expect(result).toEqual({
      ok: true,
      result: { tasks: expect.arrayContaining([expect.objectContaining({ title: 'Read the README' })]) },
    });
  }, 150_000);

  it('Ctrl-C stops npm start', async () => {
    shell.close();
    expect(await stack.stop()).toBe(0);
  }, 60_000);
});
