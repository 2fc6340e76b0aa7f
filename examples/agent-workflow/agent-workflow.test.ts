import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../test/support/browser.js';
import { consentAs, signedInPage } from '../../test/support/consent.js';
import { type FakeApis, startFakeApis } from '../../test/support/fake-apis.js';
import { createTestUser, type Stack, spawnWorkerProcess, startStack, type TestUser } from '../../test/support/harness.js';
import { startAuthServer, type TestAuthServer } from '../../test/support/oauth-server.js';
import { freePort } from '../../test/support/ports.js';
import type { ConnectUrlNotice } from '../../workflows/sdk/index.js';
import { repoDigest } from './workflows.js';

const ROOT = new URL('../..', import.meta.url).pathname;

let auth: TestAuthServer;
let apis: FakeApis;
let stack: Stack;
let browser: Browser;
let webhook: Server;
const notices: ConnectUrlNotice[] = [];
const processes: ChildProcess[] = [];
let webhookUrl: string;
const agentQueue = `agent-example-${Date.now()}`;

/** The example app's worker as its own process, as a user would run it. */
async function spawnAgentWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/agent-workflow/worker.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: stack.env.TEMPORAL_ADDRESS,
      // The payload keys alone (finding 6): the agent's worker can open no stored credential.
      ENCRYPTION_KEYS: '',
      SWITCHBOARD_PAYLOAD_KEYS: stack.services.keyring.exportPayloadKeys(),
      AGENT_TASK_QUEUE: agentQueue,
      NOTIFY_WEBHOOK_URL: webhookUrl,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      output += d;
      if (output.includes('agent worker running')) resolve();
    });
    child.stderr?.on('data', (d) => {
      output += d;
    });
    child.once('exit', (code) => reject(new Error(`agent worker exited (${code}):\n${output}`)));
  });
  processes.push(child);
  return child;
}

const kill = async (child: ChildProcess) => {
  child.kill('SIGKILL');
  if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
};

beforeAll(async () => {
  const port = await freePort();
  const github = {
    clientId: 'gh-agent',
    clientSecret: 'gh-agent-secret-0123456789',
    redirectUris: [`http://127.0.0.1:${port}/oauth/callback`],
  };
  auth = await startAuthServer([github]);
  apis = await startFakeApis((token) => auth.subjectOf(token));
  stack = await startStack({
    worker: false,
    env: {
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      ...auth.envFor('GITHUB', github),
      GITHUB_API_BASE_URL: `${apis.baseUrl}/github`,
    },
  });
  const hookPort = await freePort();
  webhookUrl = `http://127.0.0.1:${hookPort}/hook`;
  webhook = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      notices.push(JSON.parse(body));
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => webhook.listen(hookPort, '127.0.0.1', resolve));
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  for (const p of processes) p.kill('SIGKILL');
  await browser?.close();
  await new Promise((r) => webhook?.close(r));
  await stack?.close();
  await apis?.close();
  await auth?.close();
});

describe('examples/agent-workflow', () => {
  it('connects through the user, survives both workers being killed while it waits, and runs the tool', async () => {
    let switchboardWorker = await spawnWorkerProcess(stack);
    processes.push(switchboardWorker);
    let agentWorker = await spawnAgentWorker();
    const user: TestUser = await createTestUser(stack, { email: 'agent-user@example.com' });

    const handle = await stack.services.temporal.workflow.start(repoDigest, {
      workflowId: `repo-digest-${user.user.id}`,
      taskQueue: agentQueue,
      args: [{ tenantId: user.user.tenantId, userId: user.user.id, switchboardTaskQueue: stack.env.TEMPORAL_TASK_QUEUE }],
    });

    // The tool answered not_connected, so the app's activity posted a connect link.
    await expect.poll(() => notices.length, { timeout: 30_000 }).toBe(1);
    expect(notices[0]).toMatchObject({
      integration: 'github',
      reason: 'not_connected',
      userId: user.user.id,
      url: expect.stringContaining('/connect/github?t='),
    });

    // The activity that posted the link has reported back: the workflow now only waits. (Killed
    // before that, the activity would rightly run again after its timeout and post a second link.)
    await expect.poll(async () => (await handle.describe()).raw.pendingActivities?.length ?? 0, { timeout: 30_000 }).toBe(0);

    // Every worker dies while the workflow waits; new ones take over.
    await kill(switchboardWorker);
    await kill(agentWorker);
    switchboardWorker = await spawnWorkerProcess(stack);
    processes.push(switchboardWorker);
    agentWorker = await spawnAgentWorker();

    const page = await signedInPage(browser, user);
    await page.goto(notices[0].url);
    await consentAs(page, auth, 'agent-octo');
    expect(await page.locator('h1').textContent()).toBe('Connected');
    await page.context().close();

    const outcome = await handle.result();
    expect(outcome).toEqual({ ok: true, result: expect.arrayContaining([expect.objectContaining({ full_name: 'agent-octo/repo-0' })]) });
    expect(notices).toHaveLength(1);
  }, 180_000);
});
