import type { ServerResponse } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../bin/admin/main.js';
import { insertAccount } from '../../features/accounts/store/accounts.js';
import { listTenantUpstreams } from '../../platform/database/tenant-upstream-servers.js';
import { parseDocument } from '../../providers/openapi/document.js';
import { TENANT_DOCUMENT_LIMITS } from '../../providers/openapi/tenant.js';
import { launchBrowser } from '../support/browser.js';
import { signedInPage } from '../support/consent.js';
import { createTestUser, type Stack, startStack, type TestUser } from '../support/harness.js';
import { type LocalServer, startLocalServer } from '../support/local-server.js';
import { type FakeOpenApiServer, startFakeOpenApiServer } from '../support/openapi-fake-server.js';

// A tenant's own OpenAPI integration (issue 32), added by the URL of its document through the admin
// CLI and the portal, on real parts: the whole stack, a document server and a fake service built
// from the document that checks every request, over real HTTP. The attackers: a document URL at an
// internal address, a document without end, hostile documents, a name that shadows a built-in, a
// member who is not an administrator, another tenant, and a document whose server is internal.

const petPaths = {
  '/pets': {
    get: {
      operationId: 'listPets',
      summary: 'List the pets in the shelter',
      parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer' } }],
      responses: { '200': { description: 'pets' } },
    },
  },
  '/pets/{petId}': {
    get: {
      operationId: 'getPet',
      summary: 'Show one pet of the shelter by its id',
      parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { '200': { description: 'a pet' } },
    },
  },
};
const petDocument = (serverUrl: string) =>
  JSON.stringify({ openapi: '3.0.3', info: { title: 'Shelter', version: '1.0.0' }, servers: [{ url: serverUrl }], paths: petPaths });

/** 10,000 operations: more than a document may have. */
const manyOperations = () =>
  JSON.stringify({
    openapi: '3.1.0',
    info: { title: 'Many', version: '1' },
    servers: [{ url: 'https://many.example' }],
    paths: Object.fromEntries(
      Array.from({ length: 10_000 }, (_, i) => [
        `/op${i}`,
        { get: { operationId: `op${i}`, responses: { '200': { description: 'ok' } } } },
      ]),
    ),
  });

/** One body schema: a `$ref` to `schema`, with `schemas` as the document's components. */
const bodyDocument = (title: string, schemas: Record<string, unknown>) =>
  JSON.stringify({
    openapi: '3.1.0',
    info: { title, version: '1' },
    servers: [{ url: `https://${title}.example` }],
    components: { schemas },
    paths: {
      '/op': {
        post: { operationId: 'op', requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/A' } } } } },
      },
    },
  });
/** A `$ref` that loops back to itself. */
const refCycle = () => bodyDocument('cycle', { A: { $ref: '#/components/schemas/B' }, B: { $ref: '#/components/schemas/A' } });
/** A recursive type (a tree). */
const recursiveType = () => bodyDocument('tree', { A: { type: 'object', properties: { child: { $ref: '#/components/schemas/A' } } } });

/** One operation whose body schema has 100,000 properties. */
const enormousSchema = () =>
  JSON.stringify({
    openapi: '3.1.0',
    info: { title: 'Enormous', version: '1' },
    servers: [{ url: 'https://enormous.example' }],
    paths: {
      '/big': {
        post: {
          operationId: 'big',
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: Object.fromEntries(
                    Array.from({ length: 100_000 }, (_, i) => [`p${i}`, { type: 'object', properties: { x: { type: 'string' } } }]),
                  ),
                },
              },
            },
          },
        },
      },
    },
  });

let stack: Stack;
let service: FakeOpenApiServer;
let documents: LocalServer;
let browser: Browser;
let adminA: TestUser;
let memberA: TestUser;
let adminB: TestUser;
let memberB: TestUser;
/** Bytes of the endless document sent before its reader stopped. */
let endlessSent = 0;

/** The admin CLI against the stack's database, in this process. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const [stdout, stderr]: string[][] = [[], []];
  const code = await runAdmin(args, { stdout: (s) => stdout.push(s), stderr: (s) => stderr.push(s), env: stack.env });
  return { code, stdout: stdout.join(''), stderr: stderr.join('') };
}

const entry = (name: string, document: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ kind: 'openapi', name, displayName: `API ${name}`, document, ...extra });
const execute = (user: TestUser, name: string, args: Record<string, unknown> = {}) =>
  user.call('connections_execute', { name, arguments: args }).then((r) => r.body);
const searchNames = async (user: TestUser, query: string): Promise<string[]> =>
  (await user.call('search_tools', { query, limit: 20 })).body.tools.map((t: { name: string }) => t.name);
const integrations = async (user: TestUser): Promise<string[]> =>
  (await user.call('list_integrations')).body.integrations.map((i: { name: string }) => i.name);
const serverNames = async (tenantId: string) => (await listTenantUpstreams(stack.services.pool, tenantId)).map((s) => s.name).sort();
const csrfOf = (page: Page) => page.locator('input[name="_csrf"]').first().inputValue();
const postForm = (page: Page, path: string, form: Record<string, string>) =>
  page.request.post(`${stack.baseUrl}${path}`, { form, maxRedirects: 0 });

function serveEndless(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, ' ');
  const write = () => {
    while (!res.destroyed && res.write(chunk)) endlessSent += chunk.length;
    if (!res.destroyed) res.once('drain', write);
  };
  res.write('{"openapi":"3.1.0","x":"');
  write();
}

/** API keys that reached the documents' server (which a hostile re-added entry names as its base URL). */
const keysAtDocuments: string[] = [];

beforeAll(async () => {
  service = await startFakeOpenApiServer(parseDocument(petDocument('https://unused.example')));
  const servicePort = new URL(service.baseUrl).port;
  const bodies: Record<string, () => string> = {
    '/pets.json': () => petDocument(service.baseUrl),
    '/pets-at-documents.json': () => petDocument(documents.url),
    '/many.json': manyOperations,
    '/cycle.json': refCycle,
    '/tree.json': recursiveType,
    '/enormous.json': enormousSchema,
    '/metadata-server.json': () => petDocument('https://169.254.169.254/latest'),
    '/localhost-server.json': () => petDocument(`http://localhost:${servicePort}`),
  };
  documents = await startLocalServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://documents').pathname;
    if (req.headers['x-pet-key']) keysAtDocuments.push(String(req.headers['x-pet-key']));
    if (path === '/endless.json') return serveEndless(res);
    if (path === '/moved.json') return void res.writeHead(302, { location: '/pets.json' }).end();
    const body = bodies[path];
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(body());
  });
  stack = await startStack({ env: { CONNECTIONS_TOOL_TIMEOUT_MS: '5000', UPSTREAM_MCP_ALLOWED_HOSTS: '127.0.0.1' } });
  adminA = await createTestUser(stack, { roles: ['admin'] });
  memberA = await createTestUser(stack, { tenantId: adminA.user.tenantId });
  adminB = await createTestUser(stack, { roles: ['admin'] });
  memberB = await createTestUser(stack, { tenantId: adminB.user.tenantId });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await Promise.all([documents?.close(), service?.close()]);
});

describe("a tenant's OpenAPI integration", () => {
  it('added by URL with the admin CLI: its tools are listed, searched and run for that tenant alone', async () => {
    const added = await cli('upstream', 'add', '--tenant', adminA.user.tenantId, entry('shelter', `${documents.url}/pets.json`));
    expect(added).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(added.stdout)).toMatchObject({
      name: 'shelter',
      entry: { kind: 'openapi', document: `${documents.url}/pets.json`, documentSha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    await expect.poll(() => integrations(memberA), { timeout: 10_000, interval: 500 }).toContain('shelter');
    expect(await searchNames(memberA, 'show one pet of the shelter')).toContain('shelter_get_pet');
    const seen = service.seen.length;
    expect(await execute(memberA, 'shelter__get_pet', { petId: 'rex' })).toEqual({
      ok: true,
      result: { operationId: 'getPet', path: { petId: 'rex' }, query: {}, body: null },
    });
    expect(await execute(memberA, 'shelter__list_pets', { limit: 2 })).toMatchObject({ ok: true, result: { query: { limit: '2' } } });
    expect(service.seen.slice(seen).map((r) => [r.method, r.url, r.problem])).toEqual([
      ['GET', '/pets/rex', undefined],
      ['GET', '/pets?limit=2', undefined],
    ]);
    // Another tenant neither lists, finds nor runs it.
    expect(await integrations(memberB)).not.toContain('shelter');
    expect(await searchNames(memberB, 'show one pet of the shelter')).not.toContain('shelter_get_pet');
    expect(await execute(memberB, 'shelter__get_pet', { petId: 'rex' })).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(service.seen.length).toBe(seen + 2);
  }, 30_000);

  it('binds a stored key to the base URL it was entered for: removed and added again at another base URL, the entry never gets it', async () => {
    const tenant = adminA.user.tenantId;
    const keyed = (doc: string) => entry('keyed-pets', `${documents.url}${doc}`, { auth: { type: 'apikey', name: 'X-Pet-Key' } });
    expect((await cli('upstream', 'add', '--tenant', tenant, keyed('/pets.json'))).code).toBe(0);
    stack.services.registry.forgetTenant(tenant);
    // What the portal's key form stores (integration-page.ts): the key bound to the provider's credentialBinding.
    const provider = (await stack.services.registry.forTenant(tenant)).get('keyed-pets');
    expect(provider?.credentialBinding).toBe(`openapi:${service.baseUrl}`);
    await insertAccount(stack.services.pool, stack.services.keyring, {
      tenantId: tenant,
      ownerUserId: memberA.user.id,
      integration: 'keyed-pets',
      label: 'Pet key',
      credential: { type: 'apikey', fields: { apiKey: 'pet-key-secret' }, boundTo: provider!.credentialBinding },
    });
    const first = await execute(memberA, 'keyed-pets__get_pet', { petId: 'rex' });
    expect(first, JSON.stringify(first)).toMatchObject({ ok: true });
    // The administrator swaps the entry for one whose base URL is a server of its own.
    expect((await cli('upstream', 'remove', '--tenant', tenant, 'keyed-pets')).code).toBe(0);
    expect((await cli('upstream', 'add', '--tenant', tenant, keyed('/pets-at-documents.json'))).code).toBe(0);
    stack.services.registry.forgetTenant(tenant);
    expect(await execute(memberA, 'keyed-pets__get_pet', { petId: 'rex' })).toMatchObject({ ok: false, error: { code: 'needs_reauth' } });
    expect(keysAtDocuments).toEqual([]);
    await cli('upstream', 'remove', '--tenant', tenant, 'keyed-pets');
  }, 30_000);

  it('added by URL in the portal by an administrator; a member gets 403 and adds nothing', async () => {
    const page = await signedInPage(browser, adminB);
    try {
      await page.goto(`${stack.baseUrl}/portal/upstreams`);
      const res = await postForm(page, '/portal/upstreams', {
        _csrf: await csrfOf(page),
        entry: entry('kennel', `${documents.url}/pets.json`),
      });
      expect(res.status()).toBe(303);
      await page.goto(`${stack.baseUrl}/portal/upstreams`);
      expect(await page.locator('tr[data-upstream="kennel"]').textContent()).toContain(`${documents.url}/pets.json`);
      // This process's own change shows at once.
      expect(await execute(memberB, 'kennel__get_pet', { petId: 'fido' })).toMatchObject({ ok: true, result: { path: { petId: 'fido' } } });
      expect(await execute(memberA, 'kennel__get_pet', { petId: 'fido' })).toMatchObject({ ok: false, error: { code: 'not_found' } });
    } finally {
      await page.context().close();
    }
    const memberPage = await signedInPage(browser, memberA);
    try {
      await memberPage.goto(`${stack.baseUrl}/portal/integrations`);
      const _csrf = await csrfOf(memberPage);
      const res = await postForm(memberPage, '/portal/upstreams', { _csrf, entry: entry('sneaky', `${documents.url}/pets.json`) });
      expect(res.status()).toBe(403);
      expect(await serverNames(adminA.user.tenantId)).toEqual(['shelter']);
    } finally {
      await memberPage.context().close();
    }
  }, 60_000);

  it('refuses a document at an internal address, one without end, a redirect and a built-in’s name, by name; nothing is stored', async () => {
    const tenant = adminA.user.tenantId;
    const cases: [string, RegExp][] = [
      [entry('meta', 'http://169.254.169.254/openapi.json'), /169\.254\.169\.254 is a cloud metadata address/],
      [entry('ten', 'https://10.1.2.3/openapi.json'), /10\.1\.2\.3 is a private address/],
      [entry('loop', `http://localhost:${new URL(documents.url).port}/pets.json`), /localhost resolves to .*a loopback address/],
      [
        entry('endless', `${documents.url}/endless.json`),
        new RegExp(`document: the document is larger than ${TENANT_DOCUMENT_LIMITS.bytes} bytes`),
      ],
      [entry('moved', `${documents.url}/moved.json`), /document: fetching the document answered HTTP 302; it redirects/],
      [entry('gone', `${documents.url}/nothing.json`), /document: fetching the document answered HTTP 404/],
      [entry('github', `${documents.url}/pets.json`), /"github" is the name of the deployment's integration github/],
      [entry('jira', `${documents.url}/pets.json`), /would name its tools like the deployment's integration atlassian-jira/],
      [entry('shelter', `${documents.url}/pets.json`), /already has an upstream server named "shelter"/],
      [entry('file', './pets.json'), /document: expected the https URL/],
    ];
    for (const [text, message] of cases) {
      const run = await cli('upstream', 'add', '--tenant', tenant, text);
      expect({ text, code: run.code, stdout: run.stdout }).toEqual({ text, code: 2, stdout: '' });
      expect(run.stderr, text).toMatch(message);
    }
    // The endless document was read to the cap, not further (a little more is in flight in buffers).
    expect(endlessSent).toBeLessThan(TENANT_DOCUMENT_LIMITS.bytes + 8 * 1024 * 1024);
    expect(await serverNames(tenant)).toEqual(['shelter']);
  }, 60_000);

  it('a hostile document is refused or bounded by name, without stalling', async () => {
    const tenant = adminA.user.tenantId;
    const started = Date.now();
    const many = await cli('upstream', 'add', '--tenant', tenant, entry('many', `${documents.url}/many.json`));
    expect(many).toMatchObject({ code: 2, stderr: expect.stringMatching(/document: paths: more than 5000 operations/) });
    // The loop is refused by its place; the recursive type is cut where it recurs.
    const cycle = await cli('upstream', 'add', '--tenant', tenant, entry('cycle', `${documents.url}/cycle.json`));
    expect(cycle).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        'document: paths./op.post.requestBody.content.application/json.schema: $ref #/components/schemas/A refers to itself',
      ),
    });
    const tree = await cli('upstream', 'add', '--tenant', tenant, entry('tree', `${documents.url}/tree.json`));
    expect(tree).toMatchObject({ code: 0, stderr: '' });
    const enormous = await cli('upstream', 'add', '--tenant', tenant, entry('enormous', `${documents.url}/enormous.json`));
    expect(enormous).toMatchObject({ code: 0, stderr: '' });
    expect(Date.now() - started).toBeLessThan(20_000);
    await expect
      .poll(() => integrations(memberA), { timeout: 10_000, interval: 500 })
      .toEqual(expect.arrayContaining(['enormous', 'tree']));
    const view = await stack.services.registry.forTenant(tenant);
    const treeSchema = view.toolByQualifiedName('tree__op')?.tool.inputSchema;
    expect(JSON.stringify(treeSchema)).toContain('"child":{}');
    // 100,000 properties in the document: past the node bound the body accepts anything (the service checks it).
    const big = view.toolByQualifiedName('enormous__big')?.tool.inputSchema as { properties: { body: object } };
    expect(big.properties.body).toEqual({ description: 'The JSON request body (application/json)' });
    expect(JSON.stringify(big).length).toBeLessThan(10_000);
    const storedDocuments = async () =>
      (await stack.services.pool.query('SELECT count(*)::int AS n FROM tenant_openapi_documents WHERE tenant_id = $1', [tenant])).rows[0].n;
    expect(await storedDocuments()).toBe(3);
    for (const name of ['enormous', 'tree']) expect(await cli('upstream', 'remove', '--tenant', tenant, name)).toMatchObject({ code: 0 });
    // Only the document an entry still names (shelter's) is kept.
    expect(await storedDocuments()).toBe(1);
  }, 60_000);

  it('a document whose server is an internal address is stored, but its tools cannot reach it; nothing does', async () => {
    const tenant = adminA.user.tenantId;
    expect(await cli('upstream', 'add', '--tenant', tenant, entry('metapets', `${documents.url}/metadata-server.json`))).toMatchObject({
      code: 0,
    });
    expect(await cli('upstream', 'add', '--tenant', tenant, entry('localpets', `${documents.url}/localhost-server.json`))).toMatchObject({
      code: 0,
    });
    await expect.poll(() => integrations(memberA), { timeout: 10_000, interval: 500 }).toContain('localpets');
    const seen = service.seen.length;
    for (const [name, why] of [
      ['metapets', '169.254.169.254 is a cloud metadata address'],
      ['localpets', /localhost resolves to .*a loopback address/],
    ] as const) {
      const answer = await execute(memberA, `${name}__get_pet`, { petId: 'rex' });
      expect(answer, name).toMatchObject({ ok: false, error: { code: 'tool_failed' } });
      expect(answer.error.message, name).toMatch(why);
    }
    // The fake service listens on the port `localhost` named: no request reached it.
    expect(service.seen.length).toBe(seen);
  }, 30_000);
});
