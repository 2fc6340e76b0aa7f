// `npm start`: the whole stack on local defaults — Temporal dev server (unless TEMPORAL_ADDRESS
// is set), Postgres schema, worker and HTTP server in one process tree. Ctrl-C stops all of it.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { RunningDemo } from '../demo/index.js';
import { createApiKey } from '../features/accounts/store/api-keys.js';
import { createLoginToken } from '../features/accounts/store/login-tokens.js';
import { createTenant, getTenant } from '../features/accounts/store/tenants.js';
import { createUser, findUserByEmail } from '../features/accounts/store/users.js';
import { listen } from './support/listen.js';
import { ensureLocalSecrets } from './support/local-secrets.js';
import { configFromEnv, createWorker, openServices } from './support/services.js';
import { type DevServer, startDevServer } from './support/temporal-dev-server.js';

const say = (msg: string) => process.stderr.write(`[switchboard] ${msg}\n`);
const DEMO_TENANT = 'ten_demo';
const DEMO_EMAIL = 'demo@example.com';

const dataDir = resolve(process.env.SWITCHBOARD_DATA_DIR ?? '.data');
ensureLocalSecrets(dataDir);
// The local Temporal UI reads payloads through the codec endpoint without credentials; the HTTP
// server binds to loopback, so only this machine can call it. Set CODEC_AUTH=operator to require them:
// the demo user is then the one codec operator (a platform privilege, never a tenant role).
process.env.CODEC_AUTH ||= 'none';
process.env.CODEC_OPERATOR_TENANT ||= DEMO_TENANT;
process.env.CODEC_OPERATORS ||= DEMO_EMAIL;
// Metrics and health for the operator, on loopback only (never on the service port).
process.env.METRICS_PORT ||= '9464';
// The demo integration (demo/) makes the first session work with no account anywhere. Production
// never gets it by default, and refuses it when asked for (core/config.ts).
if (process.env.NODE_ENV !== 'production') process.env.DEMO_INTEGRATION ||= 'on';
const config = configFromEnv();
const stops: (() => Promise<void>)[] = [];
let stopping = false;

async function stopAll(code: number) {
  if (stopping) return;
  stopping = true;
  say('stopping…');
  for (const stop of stops.reverse()) await stop().catch((err) => say(`stop failed: ${(err as Error).message}`));
  say('stopped');
  process.exit(code);
}
// `on`, not `once`: Ctrl-C reaches us from the terminal and from scripts/start.mjs; a second
// SIGINT must not fall through to Node's default handler and kill us mid-drain.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void stopAll(0));

async function startTemporal(): Promise<string> {
  if (config.TEMPORAL_ADDRESS) {
    say(`using Temporal at ${config.TEMPORAL_ADDRESS}`);
    return config.TEMPORAL_ADDRESS;
  }
  const dbFilename = join(dataDir, 'temporal.db');
  if (process.env.TEMPORAL_CLI) {
    say(`starting the Temporal dev server (${process.env.TEMPORAL_CLI}), database ${dbFilename}`);
    const server: DevServer = await startDevServer({
      cli: process.env.TEMPORAL_CLI,
      port: config.TEMPORAL_PORT,
      uiPort: config.TEMPORAL_UI_PORT,
      dbFilename,
      namespace: config.TEMPORAL_NAMESPACE,
      codecEndpoint: `${config.PUBLIC_BASE_URL}/codec`,
      log: (line) => say(`temporal: ${line}`),
    });
    stops.push(() => server.stop());
    return server.address;
  }
  say('no Temporal CLI found: downloading one through @temporalio/testing (needs internet)');
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const { SEARCH_ATTRIBUTE_FLAGS } = await import('../core/search-attributes.js');
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      ip: '127.0.0.1',
      port: config.TEMPORAL_PORT,
      ui: true,
      uiPort: config.TEMPORAL_UI_PORT,
      dbFilename,
      namespace: config.TEMPORAL_NAMESPACE,
      extraArgs: SEARCH_ATTRIBUTE_FLAGS.flatMap((f) => ['--search-attribute', f]),
    },
  });
  stops.push(() => env.teardown());
  return `127.0.0.1:${config.TEMPORAL_PORT}`;
}

/** First run: a demo tenant, user and API key. The key is kept in the data dir to print again. */
async function ensureDemoUser(services: Awaited<ReturnType<typeof openServices>>) {
  const keyFile = join(dataDir, 'demo-api-key');
  if (!(await getTenant(services.pool, DEMO_TENANT))) {
    await createTenant(services.pool, { id: DEMO_TENANT, name: 'Demo' });
    say('created the demo tenant');
  }
  const user =
    (await findUserByEmail(services.pool, DEMO_EMAIL)) ??
    (await createUser(services.pool, { tenantId: DEMO_TENANT, email: DEMO_EMAIL, roles: ['member', 'admin'] }));
  if (!existsSync(keyFile)) {
    const { key } = await createApiKey(services.pool, { tenantId: DEMO_TENANT, userId: user.id, label: 'demo' });
    writeFileSync(keyFile, key, { mode: 0o600 });
  }
  return { user, key: readFileSync(keyFile, 'utf8').trim() };
}

/**
 * The demo integration's authorization server and MCP server (demo/), loaded only when on: its
 * libraries (oidc-provider) are development dependencies, absent from a production install.
 */
async function startDemoIntegration(): Promise<RunningDemo | undefined> {
  if (!config.DEMO_INTEGRATION) return undefined;
  const { startDemo } = await import('../demo/index.js');
  const demo = await startDemo({
    port: config.DEMO_PORT,
    stateFile: join(dataDir, 'demo-state.json'),
    log: (line) => say(`demo: ${line}`),
  });
  stops.push(() => demo.close());
  return demo;
}

/** After the first connect of this run, the link to its workflow in Temporal UI (where the wait shows). */
function noticeFirstConnect(): WorkflowClientInterceptor {
  let noticed = false;
  return {
    async start(input, next) {
      const runId = await next(input);
      if (!noticed && input.workflowType === 'connectionWorkflow') {
        noticed = true;
        const link = `${temporalUiUrl()}/${encodeURIComponent(input.options.workflowId)}/${runId}/history`;
        process.stdout.write(`\nFirst connect: its workflow waits for the person's consent — watch it in Temporal UI:\n  ${link}\n\n`);
      }
      return runId;
    },
  };
}

const temporalUiUrl = () => `http://127.0.0.1:${config.TEMPORAL_UI_PORT}/namespaces/${config.TEMPORAL_NAMESPACE}/workflows`;

try {
  const address = await startTemporal();
  process.env.TEMPORAL_ADDRESS = address;
  const demo = await startDemoIntegration();
  say('connecting to Postgres and applying migrations');
  const services = await openServices({ ...config, TEMPORAL_ADDRESS: address }, undefined, {
    demo: demo?.integration,
    workflowInterceptors: [noticeFirstConnect()],
  });
  stops.push(() => services.close());

  const worker = await createWorker(services);
  const running = worker.run();
  stops.push(async () => {
    worker.shutdown();
    await running;
  });
  running.catch((err) => {
    say(`worker stopped: ${(err as Error).message}`);
    void stopAll(1);
  });

  const http = await listen(services);
  stops.push(() => http.close());

  const user = await ensureDemoUser(services);
  const loginLink = `${config.PUBLIC_BASE_URL}/portal/login-link?token=${await createLoginToken(services.pool, user.user.id)}`;
  process.stdout.write(`
Switchboard is running.

  MCP              ${config.PUBLIC_BASE_URL}/mcp   (meta-tools; ${config.PUBLIC_BASE_URL}/mcp/agent for the two agent tools)
  HTTP API         ${config.PUBLIC_BASE_URL}/v1/tools/<tool>   (OpenAPI: ${config.PUBLIC_BASE_URL}/openapi.json)
  Portal           ${config.PUBLIC_BASE_URL}/portal
  Portal sign-in   ${loginLink}   (one-time, 15 minutes)
  Temporal UI      ${temporalUiUrl()}
  Ready check      ${config.PUBLIC_BASE_URL}/readyz
  Metrics          ${http.operator?.url ?? '(METRICS_PORT unset)'}/metrics   (operator port, ${config.METRICS_HOST} only)

  Demo user        ${DEMO_EMAIL} (${user.user.id}, tenant ${DEMO_TENANT}, roles member admin; codec operator)
  Demo API key     ${user.key}
${
  demo
    ? `  Demo integration ${demo.origin}   ("demo": a to-do list behind its own OAuth server; development only)
`
    : ''
}
README's first session, in another terminal:
  export SB=${config.PUBLIC_BASE_URL} KEY=${user.key} SB_USER=${user.user.id}

Press Ctrl-C to stop everything.
`);
} catch (err) {
  say(`could not start: ${(err as Error).message}`);
  await stopAll(1);
}
