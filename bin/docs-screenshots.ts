// `npm run docs:screenshots`: README's first session, driven through chromium against a stack of its
// own (bin/start.ts on npm start's ports where they are free, else free ones; a temporary data
// directory and database schema), photographed
// into docs/screenshots/: the portal's integrations, the demo's consent page, Switchboard's
// Connected page, and the connection and tool-batch workflows in Temporal UI with their payloads
// decoded by Switchboard's codec endpoint.
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { chromium, type Page } from 'playwright-core';
import { findChromium, QUIET_CHROMIUM_ARGS } from '../platform/browser/chromium.js';
import { consentAtDemo, signInWithLink } from './support/demo-person.js';
import { type LocalStack, startLocalStack } from './support/local-stack.js';

const OUT = resolve(import.meta.dirname, '..', 'docs', 'screenshots');
const say = (msg: string) => process.stderr.write(`[docs:screenshots] ${msg}\n`);

const cachedCli = join(homedir(), '.cache', 'switchboard', 'bin', 'temporal');
const temporalCli = process.env.TEMPORAL_CLI ?? (existsSync(cachedCli) ? cachedCli : undefined);
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/switchboard';

/** One tool call over the JSON API, as README's `call` does. */
async function call(stack: LocalStack, tool: string, args: unknown = {}): Promise<any> {
  const res = await fetch(`${stack.printed.baseUrl}/v1/tools/${tool}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.printed.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(args),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`${tool} answered HTTP ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

/** The page as it is now, at a viewport that fits it (the pictures are shown side by side in README). */
async function shoot(page: Page, name: string, viewport: { width: number; height: number }): Promise<void> {
  const path = join(OUT, `${name}.png`);
  await page.setViewportSize(viewport);
  await page.screenshot({ path });
  say(`wrote ${path}`);
}

const TEMPORAL_UI_VIEWPORT = { width: 1280, height: 1100 };

/** A workflow's page in Temporal UI, once its payloads show decoded (`decoded` is text only the decoded JSON has). */
async function shootWorkflow(page: Page, url: string, decoded: string, name: string): Promise<void> {
  await page.setViewportSize(TEMPORAL_UI_VIEWPORT);
  await page.goto(url);
  await page.getByText(decoded).first().waitFor({ timeout: 30_000 });
  // Let the event history finish drawing below the decoded input and result.
  await page.waitForLoadState('networkidle');
  await shoot(page, name, TEMPORAL_UI_VIEWPORT);
}

/** The id and run of the most recent workflow of a type, once visibility lists it. */
async function latestWorkflow(stack: LocalStack, type: string): Promise<{ workflowId: string; runId: string }> {
  const connection = await Connection.connect({ address: stack.shellEnv.TEMPORAL_ADDRESS });
  try {
    const client = new Client({ connection });
    for (let attempt = 0; attempt < 100; attempt++) {
      for await (const run of client.workflow.list({ query: `WorkflowType = '${type}'` }))
        return { workflowId: run.workflowId, runId: run.runId };
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`Temporal lists no ${type}`);
  } finally {
    await connection.close();
  }
}

mkdirSync(OUT, { recursive: true });
say("starting a stack of its own (bin/start.ts; npm start's ports where free)…");
const stack = await startLocalStack({ databaseUrl, temporalCli, preferDefaultPorts: true });
const executablePath = findChromium(process.env.CHROMIUM_PATH);
if (!executablePath) throw new Error('chromium is not installed (CHROMIUM_PATH, or `npm test` installs it)');
const browser = await chromium.launch({ executablePath, headless: true, args: QUIET_CHROMIUM_ARGS });
try {
  const page = await (await browser.newContext({ viewport: { width: 1100, height: 720 } })).newPage();
  await signInWithLink(page, stack.printed.signInLink);

  await page.goto(`${stack.printed.baseUrl}/portal/integrations`);
  await page.locator('tr[data-integration="demo"]').scrollIntoViewIfNeeded();
  await shoot(page, 'portal-integrations', { width: 1100, height: 720 });

  const printedBefore = stack.output().length;
  const connect = await call(stack, 'connect', { integration: 'demo' });
  const [, connectionWorkflowUrl] = await stack.waitFor(/First connect: .*\n\s+(http\S+)/, { from: printedBefore });
  const waiting = call(stack, 'wait_for_connection', { connectionId: connect.connectionId, timeoutSec: 120 });
  await page.goto(connect.url);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Allow' }).waitFor();
  await shoot(page, 'demo-consent', { width: 900, height: 540 });
  await consentAtDemo(page, stack.printed.demoOrigin);
  await shoot(page, 'connected', { width: 900, height: 260 });
  say(`wait_for_connection answered ${JSON.stringify(await waiting)}`);

  await call(stack, 'execute_tools', {
    executions: [{ tool: 'demo_whoami' }, { tool: 'demo_list_tasks' }, { tool: 'demo_create_task', args: { title: 'Read the README' } }],
  });
  await shootWorkflow(page, connectionWorkflowUrl, 'CONNECTED', 'temporal-connection-workflow');
  const batch = await latestWorkflow(stack, 'toolBatchWorkflow');
  const batchUrl = `${stack.printed.temporalUi}/${encodeURIComponent(batch.workflowId)}/${batch.runId}/history`;
  await shootWorkflow(page, batchUrl, 'Read the README', 'temporal-tool-batch-workflow');
} finally {
  await browser.close();
  await stack.stop();
}
say('done');
