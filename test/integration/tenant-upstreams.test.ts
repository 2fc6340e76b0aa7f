import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../bin/admin/main.js';
import { upstreamEntrySchema } from '../../core/upstream-entry.js';
import { issuerCallbackUrl } from '../../core/urls.js';
import { Keyring } from '../../platform/database/keyring.js';
import {
  addTenantUpstream,
  listTenantUpstreams,
  loadTenantUpstreamEntries,
  resealTenantUpstreams,
  TENANT_UPSTREAM_MAX,
} from '../../platform/database/tenant-upstream-servers.js';
import { registry as metricsRegistry } from '../../platform/telemetry/metrics.js';
import { loadCatalog } from '../../providers/remote-mcp/config.js';
import { launchBrowser } from '../support/browser.js';
import { signedInPage } from '../support/consent.js';
import { createTestUser, type Stack, startStack, type TestUser } from '../support/harness.js';
import { type LocalServer, startLocalServer } from '../support/local-server.js';
import { startTestUpstream, type TestUpstream } from '../support/mcp-upstream-server.js';

// A tenant's own upstream MCP servers (admin CLI `upstream`, the portal's /portal/upstreams), on
// real parts: SDK-built upstream servers over real HTTP, the whole stack, chromium for the page.
// The attackers: another tenant's admin and users, a member of the same tenant who is not an
// administrator, a page on another site posting the portal's form, an entry taking a deployment
// integration's name, and an entry pointing at a private address.

const KEY = 'tenant-upstream-key-0123456789';
const CLIENT_SECRET = `client-secret-${randomBytes(8).toString('hex')}`;

let stack: Stack;
/** Tenant A's `acme` (it alone has alpha_only_tool). */
let alphaServer: TestUpstream;
/** Tenant B's own server, also named `acme` (it alone has bravo_only_tool); also the operator's `opsrv`. */
let bravoServer: TestUpstream;
/** Tenant A's `akey`, which needs an API key. */
let keyedServer: TestUpstream;
/** Reached only as `localhost`, which UPSTREAM_MCP_ALLOWED_HOSTS does not list. */
let internalServer: TestUpstream;
let attacker: LocalServer;
let browser: Browser;
let adminA: TestUser;
let memberA: TestUser;
let adminB: TestUser;
let memberB: TestUser;
let adminC: TestUser;

const onlyTool = (name: string) => (server: import('@modelcontextprotocol/sdk/server/mcp.js').McpServer) =>
  server.registerTool(name, { description: `Answers ${name.replace(/_/g, ' ')}`, annotations: { readOnlyHint: true } }, async () => ({
    content: [{ type: 'text', text: name }],
  }));

const entry = (name: string, url: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name, displayName: `Server ${name}`, url, ...extra });

/** The admin CLI against the stack's database, in this process. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const [stdout, stderr]: string[][] = [[], []];
  const code = await runAdmin(args, { stdout: (s) => stdout.push(s), stderr: (s) => stderr.push(s), env: stack.env });
  return { code, stdout: stdout.join(''), stderr: stderr.join('') };
}

const execute = (user: TestUser, name: string, args: Record<string, unknown> = {}) =>
  user.call('connections_execute', { name, arguments: args }).then((r) => r.body);
const searchNames = async (user: TestUser, query: string, integration?: string): Promise<string[]> =>
  (await user.call('search_tools', { query, ...(integration && { integration }), limit: 20 })).body.tools.map(
    (t: { name: string }) => t.name,
  );
const integrations = async (user: TestUser): Promise<string[]> =>
  (await user.call('list_integrations')).body.integrations.map((i: { name: string }) => i.name);
const serverNames = async (tenantId: string) => (await listTenantUpstreams(stack.services.pool, tenantId)).map((s) => s.name).sort();

const csrfOf = (page: Page) => page.locator('input[name="_csrf"]').first().inputValue();
const postForm = (page: Page, path: string, form: Record<string, string>) =>
  page.request.post(`${stack.baseUrl}${path}`, { form, maxRedirects: 0 });

beforeAll(async () => {
  [alphaServer, bravoServer, keyedServer, internalServer] = await Promise.all([
    startTestUpstream({ extraTools: onlyTool('alpha_only_tool') }),
    startTestUpstream({ extraTools: onlyTool('bravo_only_tool') }),
    startTestUpstream({ apiKey: KEY }),
    startTestUpstream(),
  ]);
  stack = await startStack({
    env: {
      CONNECTIONS_TOOL_TIMEOUT_MS: '5000',
      UPSTREAM_MCP_ALLOWED_HOSTS: '127.0.0.1',
      UPSTREAM_MCP_SERVERS: JSON.stringify([{ name: 'opsrv', displayName: 'Operator server', url: bravoServer.url }]),
    },
  });
  adminA = await createTestUser(stack, { roles: ['admin'] });
  memberA = await createTestUser(stack, { tenantId: adminA.user.tenantId });
  adminB = await createTestUser(stack, { roles: ['admin'] });
  memberB = await createTestUser(stack, { tenantId: adminB.user.tenantId });
  adminC = await createTestUser(stack, { roles: ['admin'] });
  // A page on another site that posts the portal's add form as soon as it loads (with whatever fields its URL carries).
  attacker = await startLocalServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://attacker');
    const fields = [...url.searchParams].map(([k, v]) => `<input type="hidden" name="${k}" value="${v.replace(/"/g, '&quot;')}">`).join('');
    res.setHeader('content-type', 'text/html');
    res.end(
      `<!doctype html><form method="post" action="${stack.baseUrl}/portal/upstreams">${fields}</form><script>document.forms[0].submit()</script>`,
    );
  });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await attacker?.close();
  await stack?.close();
  await Promise.all([alphaServer?.close(), bravoServer?.close(), keyedServer?.close(), internalServer?.close()]);
});

describe('admin CLI: upstream add / list / remove', () => {
  it('adds a JSON entry for one tenant; the running server shows it to that tenant within the view TTL', async () => {
    const added = await cli('upstream', 'add', '--tenant', adminA.user.tenantId, entry('acme', alphaServer.url));
    expect(added).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(added.stdout)).toMatchObject({ name: 'acme', entry: { name: 'acme', url: alphaServer.url, auth: { type: 'none' } } });
    const keyed = entry('akey', keyedServer.url, { auth: { type: 'apikey', header: 'X-Api-Key', label: 'Akey key' } });
    expect(await cli('upstream', 'add', '--tenant', adminA.user.tenantId, keyed)).toMatchObject({ code: 0, stderr: '' });
    expect(await cli('upstream', 'add', '--tenant', adminB.user.tenantId, entry('acme', bravoServer.url))).toMatchObject({ code: 0 });
    // Another process (this CLI) changed the rows: the server reads them again within TENANT_VIEW_TTL_MS (5 s).
    await expect.poll(() => searchNames(memberA, 'alpha only tool'), { timeout: 10_000, interval: 500 }).toContain('acme_alpha_only_tool');
    const listed = JSON.parse((await cli('upstream', 'list', '--tenant', adminA.user.tenantId)).stdout);
    expect(listed.map((s: { name: string }) => s.name)).toEqual(['acme', 'akey']);
  }, 30_000);

  it('a tenant’s own OAuth client is shown (CLI and portal) with the redirect URI of its issuer alone, never the shared callback', async () => {
    const tenant = adminB.user.tenantId;
    const issuer = 'https://auth.bravo.example';
    const oauth = entry('bravo-oauth', bravoServer.url, {
      auth: { type: 'oauth2', clientId: 'bravo-client', clientSecret: CLIENT_SECRET, issuer },
    });
    const own = issuerCallbackUrl({ PUBLIC_BASE_URL: stack.baseUrl }, issuer);
    expect(own.startsWith(`${stack.baseUrl}/oauth/callback/`)).toBe(true);
    const added = await cli('upstream', 'add', '--tenant', tenant, oauth);
    expect(added).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(added.stdout)).toMatchObject({ name: 'bravo-oauth', hasClientSecret: true, redirectUri: own });
    // A server without a client of the tenant's own registers one itself: nothing to show.
    const plain = entry('bravo-plain', bravoServer.url, { auth: { type: 'oauth2' } });
    expect(await cli('upstream', 'add', '--tenant', tenant, plain)).toMatchObject({ code: 0, stderr: '' });
    const listed = JSON.parse((await cli('upstream', 'list', '--tenant', tenant)).stdout);
    expect(listed.find((s: { name: string }) => s.name === 'bravo-oauth')).toMatchObject({ redirectUri: own });
    expect(listed.find((s: { name: string }) => s.name === 'bravo-plain')).not.toHaveProperty('redirectUri');
    // The portal's page says it too.
    const page = await signedInPage(browser, adminB);
    await page.goto(`${stack.baseUrl}/portal/upstreams`);
    expect(await page.locator('[data-upstream="bravo-oauth"] [data-redirect-uri]').textContent()).toBe(own);
    expect(await page.locator('[data-upstream="bravo-plain"]').count()).toBe(1);
    expect(await page.locator('[data-upstream="bravo-plain"] [data-redirect-uri]').count()).toBe(0);
    await page.context().close();
    for (const name of ['bravo-oauth', 'bravo-plain'])
      expect(await cli('upstream', 'remove', '--tenant', tenant, name)).toMatchObject({ code: 0 });
  });

  it("refuses a built-in's or an operator server's name, a name in use, bad JSON and bad fields, and an unknown tenant (exit 2)", async () => {
    const tenant = adminA.user.tenantId;
    const cases: [string[], RegExp][] = [
      [['--tenant', tenant, entry('github', alphaServer.url)], /entry: "github" is the name of the deployment's integration github/],
      [['--tenant', tenant, entry('opsrv', alphaServer.url)], /entry: "opsrv" is the name of the deployment's integration opsrv/],
      [['--tenant', tenant, entry('jira', alphaServer.url)], /would name its tools like the deployment's integration atlassian-jira/],
      [['--tenant', tenant, entry('acme', bravoServer.url)], /already has an upstream server named "acme"; remove it first/],
      [['--tenant', tenant, '{"name": "x"'], /entry: not valid JSON/],
      [['--tenant', tenant, entry('ftp', 'ftp://files.example/mcp')], /entry: url: expected an http\(s\) URL/],
      [['--tenant', tenant, 'no-such-catalog-entry'], /"no-such-catalog-entry" is not in the catalog/],
      [['--tenant', 'tenant_nope', 'deepwiki'], /unknown tenant tenant_nope/],
      [['--tenant', tenant], /missing entry/],
    ];
    for (const [args, message] of cases) {
      const run = await cli('upstream', 'add', ...args);
      expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(run.stderr).toMatch(message);
    }
    expect(await serverNames(tenant)).toEqual(['acme', 'akey']);
  });

  it('adds a catalog entry by name and removes it; removing what is not there is exit 2; every command answers --help', async () => {
    const tenant = adminC.user.tenantId;
    expect(JSON.parse((await cli('upstream', 'add', '--tenant', tenant, 'deepwiki')).stdout)).toMatchObject({ name: 'deepwiki' });
    expect(await serverNames(tenant)).toEqual(['deepwiki']);
    expect(await cli('upstream', 'remove', '--tenant', tenant, 'deepwiki')).toEqual({ code: 0, stdout: 'removed deepwiki\n', stderr: '' });
    expect(await cli('upstream', 'remove', '--tenant', tenant, 'deepwiki')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(`tenant ${tenant} has no upstream server "deepwiki"`),
    });
    // A JSON escape the shell passes through (argv itself carries no NUL byte and no lone surrogate).
    for (const jsonEscape of ['\\u0000', '\\ud800']) {
      const typed = `{"name":"escaped","displayName":"a${jsonEscape}b","url":"http://127.0.0.1:9/mcp"}`;
      expect(await cli('upstream', 'add', '--tenant', tenant, typed)).toEqual({
        code: 2,
        stdout: '',
        stderr: 'admin: entry: displayName: U+0000 or an unpaired surrogate, which no entry can hold (see --help)\n',
      });
    }
    expect(await serverNames(tenant)).toEqual([]);
    // Tenant B cannot be used to remove tenant A's server: the name is looked up in the tenant given.
    expect((await cli('upstream', 'remove', '--tenant', adminB.user.tenantId, 'akey')).code).toBe(2);
    expect(await serverNames(adminA.user.tenantId)).toEqual(['acme', 'akey']);
    for (const sub of ['add', 'list', 'remove']) {
      const help = await cli('upstream', sub, '--help');
      expect(help).toMatchObject({ code: 0, stderr: '' });
      expect(help.stdout).toMatch(new RegExp(`^Usage: npm run admin -- upstream ${sub} --tenant <id>`));
    }
  });
});

describe("admin CLI: a tenant's own servers in its settings and organisation accounts", () => {
  it("settings set --enable-providers and org-account create take the tenant's own servers, and no other tenant's", async () => {
    const [c, a] = [adminC.user.tenantId, adminA.user.tenantId];
    const keyed = entry('ckey', keyedServer.url, { auth: { type: 'apikey', header: 'X-Api-Key' } });
    expect((await cli('upstream', 'add', '--tenant', c, keyed)).code).toBe(0);
    const set = await cli('settings', 'set', '--tenant', c, '--enable-providers', 'ckey,github');
    expect(set).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(set.stdout)).toEqual({ enabledProviders: ['ckey', 'github'] });
    expect(await cli('settings', 'set', '--tenant', a, '--enable-providers', 'ckey')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('unknown provider "ckey"'),
    });
    const org = await cli('org-account', 'create', '--tenant', c, '--integration', 'ckey', '--label', 'C org key');
    expect(org).toMatchObject({ code: 0, stderr: '' });
    expect(await cli('org-account', 'create', '--tenant', a, '--integration', 'ckey', '--label', 'x')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('unknown integration "ckey"'),
    });
    expect(await cli('settings', 'set', '--tenant', c, '--all-providers')).toMatchObject({ code: 0 });
    expect(await cli('upstream', 'remove', '--tenant', c, 'ckey')).toMatchObject({ code: 0 });
  });
});

describe("another tenant's people cannot see, search, call or connect tenant A's servers", () => {
  it('list_integrations, search_tools, get_tool_schema and execute answer each tenant its own servers only', async () => {
    expect(await integrations(memberA)).toEqual(expect.arrayContaining(['acme', 'akey', 'opsrv']));
    const bIntegrations = await integrations(memberB);
    expect(bIntegrations).toContain('acme');
    expect(bIntegrations).not.toContain('akey');
    expect(await integrations(adminC)).not.toContain('acme');

    // Both tenants have an `acme`; each reaches its own server.
    expect(await searchNames(memberA, 'alpha only tool')).toContain('acme_alpha_only_tool');
    await expect.poll(() => searchNames(memberB, 'bravo only tool'), { timeout: 10_000 }).toContain('acme_bravo_only_tool');
    expect(await searchNames(memberB, 'alpha only tool')).not.toContain('acme_alpha_only_tool');
    expect(await searchNames(memberA, 'bravo only tool')).not.toContain('acme_bravo_only_tool');
    expect((await searchNames(adminC, 'alpha only tool')).filter((n) => n.startsWith('acme_'))).toEqual([]);

    expect(await execute(memberA, 'acme__alpha_only_tool')).toEqual({ ok: true, result: 'alpha_only_tool' });
    expect(await execute(memberB, 'acme__alpha_only_tool')).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await execute(memberB, 'acme__bravo_only_tool')).toEqual({ ok: true, result: 'bravo_only_tool' });
    // The same tool name: each tenant's call reaches its own server, once.
    const [alphaCalls, bravoCalls] = [alphaServer.calls.length, bravoServer.calls.length];
    expect(await execute(memberA, 'acme__echo', { message: 'a' })).toEqual({ ok: true, result: 'echo: a' });
    expect(await execute(memberB, 'acme__echo', { message: 'b' })).toEqual({ ok: true, result: 'echo: b' });
    expect(await execute(adminC, 'acme__echo', { message: 'c' })).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect([alphaServer.calls.length, bravoServer.calls.length]).toEqual([alphaCalls + 1, bravoCalls + 1]);
    // Metrics label tenants' servers as one provider: names chosen by tenants never become labels.
    const metrics = await metricsRegistry.getSingleMetricAsString('switchboard_tool_calls_total');
    expect(metrics).toContain('provider="tenant-upstream",tool="tenant-upstream"');
    expect(metrics).not.toContain('alpha_only_tool');

    const schemaA = await memberA.call('get_tool_schema', { tool: 'acme_alpha_only_tool' });
    expect(schemaA.status).toBe(200);
    const schemaB = await memberB.call('get_tool_schema', { tool: 'acme_alpha_only_tool' });
    expect(schemaB).toEqual({ status: 404, body: { error: 'Tool not found' } });

    // execute_tools on the nine-meta-tool surface, too.
    const ran = await memberB.call('execute_tools', { executions: [{ tool: 'acme_alpha_only_tool', args: {} }] });
    expect(JSON.stringify(ran.body)).toContain('Tool not found');
  }, 30_000);

  it("connect and the portal's integration page know tenant A's API-key server for A only", async () => {
    const forA = await memberA.call('connect', { integration: 'akey' });
    expect(forA.status).toBe(400);
    expect(forA.body.error).toContain('akey is connected with an API key in the portal');
    expect(await memberB.call('connect', { integration: 'akey' })).toEqual({ status: 404, body: { error: 'Integration not found' } });

    const pageA = await signedInPage(browser, memberA);
    const pageB = await signedInPage(browser, memberB);
    try {
      expect((await pageB.goto(`${stack.baseUrl}/portal/integrations/akey`))?.status()).toBe(404);
      expect((await pageA.goto(`${stack.baseUrl}/portal/integrations/akey`))?.status()).toBe(200);
      // The key is tested by listing the server's tools with it, then saved; the tools then run with it.
      await pageA.getByLabel('Akey key').fill(KEY);
      await pageA.getByRole('button', { name: 'Test and save' }).click();
      await pageA.waitForLoadState();
      expect(await execute(memberA, 'akey__echo', { message: 'keyed' })).toEqual({ ok: true, result: 'echo: keyed' });
      expect(await execute(memberB, 'akey__echo', { message: 'keyed' })).toMatchObject({ ok: false, error: { code: 'not_found' } });
      await pageB.goto(`${stack.baseUrl}/portal/integrations`);
      expect(await pageB.locator('tr[data-integration="akey"]').count()).toBe(0);
      await pageA.goto(`${stack.baseUrl}/portal/integrations`);
      expect(await pageA.locator('tr[data-integration="akey"]').count()).toBe(1);
    } finally {
      await pageA.context().close();
      await pageB.context().close();
    }
  }, 60_000);

  it('the agent surface /mcp/agent and /mcp answer each tenant its own servers only', async () => {
    const mcp = async (user: TestUser, path: string) => {
      const client = new Client({ name: 'test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}${path}`), {
          requestInit: { headers: { authorization: `Bearer ${user.apiKey}` } },
        }),
      );
      return client;
    };
    const [agentA, agentB, metaB] = await Promise.all([mcp(memberA, '/mcp/agent'), mcp(memberB, '/mcp/agent'), mcp(memberB, '/mcp')]);
    try {
      const search = async (client: Client) =>
        JSON.stringify((await client.callTool({ name: 'connections_search', arguments: { query: 'alpha only tool' } })).content);
      expect(await search(agentA)).toContain('acme__alpha_only_tool');
      expect(await search(agentB)).not.toContain('acme__alpha_only_tool');
      const ranB = await agentB.callTool({ name: 'connections_execute', arguments: { name: 'acme__alpha_only_tool', arguments: {} } });
      expect(JSON.stringify(ranB.content)).toContain('not_found');
      const foundB = await metaB.callTool({ name: 'search_tools', arguments: { query: 'alpha only tool' } });
      expect(JSON.stringify(foundB.content)).not.toContain('alpha_only_tool');
    } finally {
      await Promise.all([agentA.close(), agentB.close(), metaB.close()]);
    }
  });
});

describe('the portal page /portal/upstreams', () => {
  it('lets an administrator add a catalog entry and a JSON entry and remove one; the tenant sees the change at once', async () => {
    const page = await signedInPage(browser, adminA);
    try {
      await page.getByRole('link', { name: 'Upstream servers' }).click();
      await page.waitForURL(/\/portal\/upstreams$/);
      expect(await page.locator('tr[data-upstream]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-upstream')))).toEqual([
        'acme',
        'akey',
      ]);
      // The operator's server and the tenant's own are not offered again from the catalog.
      const offered = await page.locator('#catalog option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
      expect(offered).toContain('deepwiki');
      // Nothing is offered that adding would refuse (in this build: the oauth2 entries, until the upstream OAuth module).
      const refused = loadCatalog()
        .map((e) => e.name)
        .filter((name) => {
          try {
            stack.services.registry.tenantEntry(name);
            return false;
          } catch {
            return true;
          }
        });
      expect(offered.filter((name) => refused.includes(name))).toEqual([]);

      await page.selectOption('#catalog', 'deepwiki');
      await page.getByRole('button', { name: 'Add server' }).click();
      await page.waitForURL(/done=added/);
      expect(await page.getByRole('status').textContent()).toContain('The server was added');
      expect(await serverNames(adminA.user.tenantId)).toEqual(['acme', 'akey', 'deepwiki']);
      await page.locator('tr[data-upstream="deepwiki"]').getByRole('button', { name: 'Remove' }).click();
      await page.waitForURL(/done=removed/);
      expect(await page.locator('tr[data-upstream="deepwiki"]').count()).toBe(0);
      expect(await serverNames(adminA.user.tenantId)).toEqual(['acme', 'akey']);

      await page.locator('#entry').fill(entry('beta', alphaServer.url, { description: 'The beta server' }));
      await page.getByRole('button', { name: 'Add server' }).click();
      await page.waitForURL(/done=added/);
      expect(await page.locator('tr[data-upstream="beta"]').count()).toBe(1);
      // Same process: the tenant's view was dropped, so no TTL to wait out.
      expect(await integrations(memberA)).toContain('beta');
      expect(await execute(memberA, 'beta__echo', { message: 'new' })).toEqual({ ok: true, result: 'echo: new' });
      expect(await integrations(memberB)).not.toContain('beta');
    } finally {
      await page.context().close();
    }
  }, 60_000);

  it("refuses an entry taking a built-in's name, a bad entry, and both fields at once, with the reason, keeping the text", async () => {
    const page = await signedInPage(browser, adminA);
    try {
      await page.goto(`${stack.baseUrl}/portal/upstreams`);
      const submit = async () => {
        const [response] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/portal/upstreams'),
          page.getByRole('button', { name: 'Add server' }).click(),
        ]);
        await page.waitForLoadState();
        return response.status();
      };
      const github = entry('github', alphaServer.url);
      await page.locator('#entry').fill(github);
      expect(await submit()).toBe(400);
      expect(await page.getByRole('alert').textContent()).toContain(`"github" is the name of the deployment's integration github`);
      expect(await page.locator('#entry').inputValue()).toBe(github);
      await page.locator('#entry').fill('{"name": "Bad Name", "displayName": "x", "url": "https://x.example/mcp"}');
      expect(await submit()).toBe(400);
      expect(await page.getByRole('alert').textContent()).toContain('name: expected a lower-case integration name');
      await page.selectOption('#catalog', 'deepwiki');
      await page.locator('#entry').fill(entry('gamma', alphaServer.url));
      expect(await submit()).toBe(400);
      expect(await page.getByRole('alert').textContent()).toContain('not both');
      // Markup in an entry is shown as text, never run.
      await page.selectOption('#catalog', '');
      await page.locator('#entry').fill('{"name": "<img src=x onerror=window.__pwned=1>"}');
      expect(await submit()).toBe(400);
      expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
      expect(await serverNames(adminA.user.tenantId)).toEqual(['acme', 'akey', 'beta']);
    } finally {
      await page.context().close();
    }
  }, 60_000);

  it('a member who is not an administrator gets 403 for the page, adding and removing, and no link to it', async () => {
    const page = await signedInPage(browser, memberA);
    try {
      await page.goto(`${stack.baseUrl}/portal/accounts`);
      expect(await page.getByRole('link', { name: 'Upstream servers' }).count()).toBe(0);
      const _csrf = await csrfOf(page);
      expect((await page.goto(`${stack.baseUrl}/portal/upstreams`))?.status()).toBe(403);
      expect((await postForm(page, '/portal/upstreams', { _csrf, entry: entry('evil', alphaServer.url) })).status()).toBe(403);
      expect((await postForm(page, '/portal/upstreams/acme/remove', { _csrf })).status()).toBe(403);
      expect(await serverNames(adminA.user.tenantId)).toEqual(['acme', 'akey', 'beta']);
    } finally {
      await page.context().close();
    }
  });

  it("another tenant's administrator sees only their own servers and cannot remove tenant A's", async () => {
    const page = await signedInPage(browser, adminB);
    try {
      await page.goto(`${stack.baseUrl}/portal/upstreams`);
      expect(await page.locator('tr[data-upstream]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-upstream')))).toEqual([
        'acme',
      ]);
      expect(await page.locator(`tr[data-upstream="acme"]`).textContent()).toContain(bravoServer.url);
      const _csrf = await csrfOf(page);
      for (const name of ['akey', 'beta']) {
        const res = await postForm(page, `/portal/upstreams/${name}/remove`, { _csrf });
        expect(res.status()).toBe(404);
      }
      // Removing B's own `acme` leaves A's `acme` alone.
      expect((await postForm(page, '/portal/upstreams/acme/remove', { _csrf })).status()).toBe(303);
      expect(await serverNames(adminB.user.tenantId)).toEqual([]);
      expect(await serverNames(adminA.user.tenantId)).toEqual(['acme', 'akey', 'beta']);
      expect(await execute(memberA, 'acme__alpha_only_tool')).toEqual({ ok: true, result: 'alpha_only_tool' });
      expect(await execute(memberB, 'acme__bravo_only_tool')).toMatchObject({ ok: false, error: { code: 'not_found' } });
    } finally {
      await page.context().close();
    }
  });

  it('refuses a form without the portal token, with a wrong one, and one posted by another site (even with the right token)', async () => {
    const page = await signedInPage(browser, adminA);
    try {
      await page.goto(`${stack.baseUrl}/portal/upstreams`);
      const _csrf = await csrfOf(page);
      for (const form of [{}, { _csrf: 'wrong' }, { _csrf: `${_csrf}x` }] as Record<string, string>[]) {
        const res = await postForm(page, '/portal/upstreams', { ...form, entry: entry('forged', alphaServer.url) });
        expect(res.status()).toBe(403);
        expect(await res.text()).toContain('refused');
        expect((await postForm(page, '/portal/upstreams/acme/remove', form)).status()).toBe(403);
      }
      for (const origin of [`http://localhost:${attacker.port}`, attacker.url]) {
        const query = new URLSearchParams({ _csrf, entry: entry('forged', alphaServer.url) });
        const [response] = await Promise.all([
          page.waitForResponse((r) => r.url() === `${stack.baseUrl}/portal/upstreams` && r.request().method() === 'POST'),
          page.goto(`${origin}/?${query}`),
        ]);
        expect(response.status(), origin).toBe(403);
      }
      expect(await serverNames(adminA.user.tenantId)).toEqual(['acme', 'akey', 'beta']);
    } finally {
      await page.context().close();
    }
  }, 60_000);
});

describe('an entry at a private address', () => {
  it('is stored, but the guarded fetch refuses it at call time unless its host is on UPSTREAM_MCP_ALLOWED_HOSTS; nothing reaches it', async () => {
    const tenant = adminA.user.tenantId;
    const add = (name: string, url: string) => cli('upstream', 'add', '--tenant', tenant, entry(name, url));
    expect((await add('intra', `http://localhost:${internalServer.port}/mcp`)).code).toBe(0);
    expect((await add('tenten', 'https://10.0.0.1/mcp')).code).toBe(0);
    expect((await add('metadata', 'https://169.254.169.254/mcp')).code).toBe(0);
    await expect.poll(() => integrations(memberA), { timeout: 10_000 }).toContain('metadata');
    const intra = await execute(memberA, 'intra__echo', { message: 'x' });
    expect(intra).toMatchObject({ ok: false, error: { code: 'tool_failed' } });
    expect(intra.error.message).toMatch(/localhost resolves to .*a loopback address/);
    for (const [name, why] of [
      ['tenten', '10.0.0.1 is a private address'],
      ['metadata', '169.254.169.254 is a cloud metadata address'],
    ]) {
      const answer = await execute(memberA, `${name}__echo`, { message: 'x' });
      expect(answer, name).toMatchObject({ ok: false, error: { code: 'tool_failed' } });
      expect(answer.error.message, name).toContain(why);
    }
    expect(internalServer.requests).toHaveLength(0);
  }, 30_000);
});

describe('secrets of an entry', () => {
  it('seals a client secret apart from the entry, never prints it, binds it to its row, and re-seals it under a new key', async () => {
    const { pool, keyring } = stack.services;
    const tenant = adminC.user.tenantId;
    // The oauth2 fields are the upstream OAuth module's; the store seals whatever client secret an entry carries.
    const oauth = upstreamEntrySchema.parse({
      name: 'sealed',
      displayName: 'Sealed',
      url: 'https://mcp.sealed.example/mcp',
      auth: { type: 'oauth2', clientId: 'sb-client', clientSecret: CLIENT_SECRET },
    });
    await addTenantUpstream(pool, keyring, { tenantId: tenant, entry: oauth });
    const { rows } = await pool.query('SELECT * FROM tenant_upstream_servers WHERE tenant_id = $1 AND name = $2', [tenant, 'sealed']);
    expect(JSON.stringify(rows[0])).not.toContain(CLIENT_SECRET);
    expect(rows[0].entry.auth).toEqual({ type: 'oauth2', clientId: 'sb-client' });
    expect((await loadTenantUpstreamEntries(pool, keyring, tenant))[0]?.entry).toMatchObject({ auth: { clientSecret: CLIENT_SECRET } });

    const listed = await cli('upstream', 'list', '--tenant', tenant);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(CLIENT_SECRET);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ name: 'sealed', hasClientSecret: true })]);
    const page = await signedInPage(browser, adminC);
    try {
      await page.goto(`${stack.baseUrl}/portal/upstreams`);
      expect(await page.locator('tr[data-upstream="sealed"]').count()).toBe(1);
      expect(await page.content()).not.toContain(CLIENT_SECRET);
    } finally {
      await page.context().close();
    }

    // The sealed value copied to another tenant's row does not open there.
    await addTenantUpstream(pool, keyring, { tenantId: adminB.user.tenantId, entry: { ...oauth, auth: { type: 'oauth2' } } });
    await pool.query('UPDATE tenant_upstream_servers SET client_secret_sealed = $1 WHERE tenant_id = $2 AND name = $3', [
      rows[0].client_secret_sealed,
      adminB.user.tenantId,
      'sealed',
    ]);
    // …and that one server is left out (said why), not the tenant's every request.
    const copied = await loadTenantUpstreamEntries(pool, keyring, adminB.user.tenantId);
    expect(copied.find((r) => r.name === 'sealed')).toMatchObject({ unusable: expect.stringContaining('does not open') });
    expect(JSON.stringify(copied)).not.toContain(CLIENT_SECRET);
    expect((await adminB.call('list_integrations')).status).toBe(200);
    await pool.query('DELETE FROM tenant_upstream_servers WHERE tenant_id = $1 AND name = $2', [adminB.user.tenantId, 'sealed']);

    // Key rotation: `keys reseal` moves it under the new active key; the old key can then go.
    const k2 = randomBytes(32);
    const rotated = new Keyring(new Map([...stack.services.config.ENCRYPTION_KEYS!, ['k2', k2]]), 'k2');
    expect(await resealTenantUpstreams(pool, rotated)).toBe(1);
    expect(await resealTenantUpstreams(pool, rotated)).toBe(0);
    const k2Only = new Keyring(new Map([['k2', k2]]), 'k2');
    expect((await loadTenantUpstreamEntries(pool, k2Only, tenant))[0]?.entry).toMatchObject({ auth: { clientSecret: CLIENT_SECRET } });
    // Back under the stack's own key (the rotated keyring still holding k2 to open it), for the running server.
    const back = new Keyring(new Map([...stack.services.config.ENCRYPTION_KEYS!, ['k2', k2]]), keyring.activeKeyId);
    expect(await resealTenantUpstreams(pool, back)).toBe(1);
    expect((await loadTenantUpstreamEntries(pool, keyring, tenant))[0]?.entry).toMatchObject({ auth: { clientSecret: CLIENT_SECRET } });
    expect(stack.logs.text()).not.toContain(CLIENT_SECRET);
  }, 30_000);
});

describe('the per-tenant bound', () => {
  it(`holds under concurrent adds: at most ${TENANT_UPSTREAM_MAX} servers, whatever arrives at once`, async () => {
    const tenant = (await createTestUser(stack)).user.tenantId;
    const adds = Array.from({ length: TENANT_UPSTREAM_MAX + 10 }, (_, i) =>
      addTenantUpstream(stack.services.pool, stack.services.keyring, {
        tenantId: tenant,
        entry: upstreamEntrySchema.parse({ name: `many-${i}`, displayName: `Many ${i}`, url: `https://mcp${i}.example/mcp` }),
      }),
    );
    const settled = await Promise.allSettled(adds);
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(TENANT_UPSTREAM_MAX);
    expect(await serverNames(tenant)).toHaveLength(TENANT_UPSTREAM_MAX);
  });
});
