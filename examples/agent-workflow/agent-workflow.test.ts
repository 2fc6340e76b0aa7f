import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { consentAtDemo } from '../../bin/support/demo-person.js';
import type { ConnectUrlNotice } from '../../surfaces/workflow-sdk/index.js';
import { launchBrowser } from '../../test/support/browser.js';
import { consentAs, signedInPage } from '../../test/support/consent.js';
import { type FakeApis, startFakeApis } from '../../test/support/fake-apis.js';
import { createTestUser, type Stack, spawnWorkerProcess, startStack, type TestUser } from '../../test/support/harness.js';
import { startAuthServer, type TestAuthServer } from '../../test/support/oauth-server.js';
import { freePort } from '../../test/support/ports.js';

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

/** What the example's own processes get: where Temporal is, the payload keys alone, their queue. */
const exampleEnv = (more: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  TEMPORAL_ADDRESS: stack.env.TEMPORAL_ADDRESS,
  // The payload keys alone (finding 6): the agent's worker can open no stored credential.
  ENCRYPTION_KEYS: '',
  SWITCHBOARD_PAYLOAD_KEYS: stack.services.keyring.exportPayloadKeys(),
  AGENT_TASK_QUEUE: agentQueue,
  GITHUB_CLIENT_ID: '',
  ...more,
});

/** An example process (its worker, or start.ts) as a user runs it; `output` grows as it prints. */
function spawnExample(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', `examples/agent-workflow/${script}`, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  processes.push(child);
  // Listened for from the start: a process that ends before a test waits for it still counts as ended
  // (a quick consent let start.ts finish before the wait began, and the wait then never ended).
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let output = '';
  child.stdout?.on('data', (d) => {
    output += d;
  });
  child.stderr?.on('data', (d) => {
    output += d;
  });
  return { child, output: () => output, exited };
}

/** The example app's worker as its own process, as a user would run it (links to the webhook, or its console). */
async function spawnAgentWorker(webhook: boolean = true): Promise<{ child: ChildProcess; output: () => string }> {
  const worker = spawnExample('worker.ts', [], exampleEnv(webhook ? { NOTIFY_WEBHOOK_URL: webhookUrl } : { NOTIFY_WEBHOOK_URL: '' }));
  await new Promise<void>((resolve, reject) => {
    const poll = setInterval(() => {
      if (worker.output().includes('agent worker running')) {
        clearInterval(poll);
        resolve();
      }
    }, 50);
    worker.child.once('exit', (code) => {
      clearInterval(poll);
      reject(new Error(`agent worker exited (${code}):\n${worker.output()}`));
    });
  });
  return worker;
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
    // The demo integration, as `npm start` serves it: the example's default.
    demo: true,
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
}, 240_000);

afterAll(async () => {
  for (const p of processes) p.kill('SIGKILL');
  await browser?.close();
  await new Promise((r) => webhook?.close(r));
  await stack?.close();
  await apis?.close();
  await auth?.close();
});

describe('examples/agent-workflow', () => {
  it('by default, against the demo: start.ts waits while the worker prints the connect link, and completes once the user consents', async () => {
    // The demo is served by the process that registers it (npm start): Switchboard's worker runs here.
    await stack.startWorker();
    const user: TestUser = await createTestUser(stack, { email: 'demo-agent-user@example.com' });
    const agentWorker = await spawnAgentWorker(false);
    // This worker prints links instead of posting them: it must not outlive this test, whatever happens,
    // or it would take the next test's activities from the shared queue.
    onTestFinished(() => kill(agentWorker.child));
    const started = spawnExample(
      'start.ts',
      [user.user.tenantId, user.user.id],
      exampleEnv({ TEMPORAL_TASK_QUEUE: stack.env.TEMPORAL_TASK_QUEUE }),
    );
    await expect.poll(() => agentWorker.output(), { timeout: 90_000 }).toMatch(/Please connect demo: (\S+)/);
    const link = /Please connect demo: (\S+)/.exec(agentWorker.output())![1];
    expect(started.output()).toMatch(/started digest-demo-\S+ \(demo\); waiting/);

    const page = await signedInPage(browser, user);
    await page.goto(link);
    await consentAtDemo(page, stack.demo!.origin);
    expect(await page.locator('h1').textContent()).toBe('Connected');
    await page.context().close();

    // Bounded below the test's own timeout, so a hang says where it hung (both processes' output).
    const code = await Promise.race([
      started.exited,
      new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error(`start.ts did not end:\n${started.output()}\nthe agent worker printed:\n${agentWorker.output()}`)),
          150_000,
        ).unref(),
      ),
    ]);
    expect(code, started.output()).toBe(0);
    const result = JSON.parse(started.output().slice(started.output().indexOf('{')));
    expect(result).toEqual({ ok: true, result: { tasks: expect.arrayContaining([expect.objectContaining({ done: false })]) } });
    expect(notices).toEqual([]);
    await stack.stopWorker();
  }, 300_000);

  it('with GitHub: connects through the user, survives both workers being killed while it waits, and runs the tool', async () => {
    let switchboardWorker = await spawnWorkerProcess(stack);
    processes.push(switchboardWorker);
    let agentWorker = (await spawnAgentWorker()).child;
    const user: TestUser = await createTestUser(stack, { email: 'agent-user@example.com' });

    // start.ts picks GitHub because this Switchboard has a GitHub client (the same environment).
    const started = spawnExample(
      'start.ts',
      [user.user.tenantId, user.user.id],
      exampleEnv({ GITHUB_CLIENT_ID: stack.env.GITHUB_CLIENT_ID, TEMPORAL_TASK_QUEUE: stack.env.TEMPORAL_TASK_QUEUE }),
    );
    await expect.poll(() => started.output(), { timeout: 90_000 }).toMatch(/started (digest-github-\S+) \(github\)/);
    const handle = stack.services.temporal.workflow.getHandle(/started (\S+)/.exec(started.output())![1]);

    // The tool answered not_connected, so the app's activity posted a connect link.
    await expect.poll(() => notices.length, { timeout: 90_000 }).toBe(1);
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
    agentWorker = (await spawnAgentWorker()).child;

    const page = await signedInPage(browser, user);
    await page.goto(notices[0].url);
    await consentAs(page, auth, 'agent-octo');
    expect(await page.locator('h1').textContent()).toBe('Connected');
    await page.context().close();

    const outcome = await handle.result();
    expect(outcome).toEqual({ ok: true, result: expect.arrayContaining([expect.objectContaining({ full_name: 'agent-octo/repo-0' })]) });
    expect(notices).toHaveLength(1);
    await started.exited;
    expect(started.output()).toContain('agent-octo/repo-0');
  }, 360_000);
});
