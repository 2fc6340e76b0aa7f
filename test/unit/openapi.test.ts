import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/config.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { documentPath, loadDocumentFile, openapiProviders, parseOpenApiIntegrations } from '../../providers/openapi/config.js';
import { parseDocument } from '../../providers/openapi/document.js';
import { convertOperations, markdownText, nameFromPath, snakeName } from '../../providers/openapi/operations.js';
import { openapiProvider } from '../../providers/openapi/provider.js';
import { buildRequest } from '../../providers/openapi/request.js';
import { createToolContext } from '../../providers/sdk/tool-context.js';
import { UnsafePathArgument } from '../../providers/sdk/url-path.js';

const petstore = {
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1.2.3' },
  servers: [{ url: 'https://{region}.pets.example/v1', variables: { region: { default: 'eu' } } }],
  paths: {
    '/pets': {
      get: {
        operationId: 'listPets',
        summary: 'List **all** pets',
        description: 'See [the docs](https://pets.example/docs) for `paging`.',
        tags: ['pets'],
        parameters: [
          { $ref: '#/components/parameters/limit' },
          { name: 'tags', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
          { name: 'tagsCsv', in: 'query', explode: false, schema: { type: 'array', items: { type: 'string' } } },
          { name: 'filter', in: 'query', style: 'deepObject', schema: { type: 'object' } },
          { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
          { name: 'Authorization', in: 'header', schema: { type: 'string' } },
          { name: 'session', in: 'cookie', schema: { type: 'string' } },
        ],
      },
      post: {
        operationId: 'createPet',
        tags: ['pets'],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } },
      },
    },
    '/pets/{petId}': {
      parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
      get: { operationId: 'show-pet-by-id', tags: ['pets'] },
      delete: { tags: ['pets'] },
      put: { operationId: 'showPetById', requestBody: { content: { 'application/json': { schema: { type: 'object' } } } } },
    },
    '/pets/{petId}/photo': {
      parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
      post: { operationId: 'uploadPhoto', requestBody: { required: true, content: { 'image/png': {} } } },
    },
  },
  components: {
    parameters: { limit: { name: 'limit', in: 'query', schema: { type: 'integer', maximum: 100, exclusiveMaximum: true } } },
    schemas: {
      Pet: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string', example: 'Rex' },
          tag: { type: 'string', nullable: true },
          parent: { $ref: '#/components/schemas/Pet' },
        },
      },
    },
  },
};

const doc = (value: unknown = petstore) => parseDocument(JSON.stringify(value));
const op = (name: string) => {
  const found = convertOperations(doc()).operations.find((o) => o.name === name);
  if (!found) throw new Error(`no operation ${name}`);
  return found;
};

describe('OpenAPI documents', () => {
  it('reads JSON and YAML, 3.0 and 3.1; refuses Swagger 2.0 and other versions by name', () => {
    expect(doc().version).toBe('3.0');
    expect(parseDocument('openapi: 3.1.0\ninfo: {title: t, version: "1"}\npaths: {}\n').version).toBe('3.1');
    expect(() => parseDocument('{"swagger": "2.0", "paths": {}}')).toThrow(
      /^swagger: Swagger 2.0 is not read; convert the document to OpenAPI 3/,
    );
    expect(() => parseDocument('{"openapi": "4.0.0", "paths": {}}')).toThrow('openapi: "4.0.0" is not supported');
    expect(() => parseDocument('{"openapi": "3.0.0"}')).toThrow('paths: missing');
    expect(() => parseDocument('{"openapi": ')).toThrow(/^not valid JSON/);
  });

  it('bounds nesting and YAML aliases', () => {
    expect(() => parseDocument(`{"openapi":"3.0.0","paths":{},"x":${'['.repeat(300)}${']'.repeat(300)}}`)).toThrow(/nested more than 200/);
    const laughs = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      ...Array.from({ length: 9 }, (_, i) => `${'bcdefghij'[i]}: &${'bcdefghij'[i]} [${Array(9).fill(`*${'abcdefghij'[i]}`).join(', ')}]`),
    ];
    expect(() => parseDocument(`openapi: 3.0.0\npaths: {}\n${laughs.join('\n')}\n`)).toThrow(/not valid YAML/);
  });

  it('names the place of a $ref that does not resolve, is external, or loops', () => {
    const broken = structuredClone(petstore) as any;
    broken.paths['/pets'].get.parameters[2] = { $ref: '#/components/parameters/per-page' };
    expect(() => convertOperations(doc(broken))).toThrow(
      'paths./pets.get.parameters[2]: $ref #/components/parameters/per-page does not resolve',
    );
    broken.paths['/pets'].get.parameters[2] = { $ref: 'other.yaml#/x' };
    expect(() => convertOperations(doc(broken))).toThrow('paths./pets.get.parameters[2]: $ref other.yaml#/x is not local');
    broken.components.parameters.a = { $ref: '#/components/parameters/b' };
    broken.components.parameters.b = { $ref: '#/components/parameters/a' };
    broken.paths['/pets'].get.parameters[2] = { $ref: '#/components/parameters/a' };
    expect(() => convertOperations(doc(broken))).toThrow('paths./pets.get.parameters[2]: $ref #/components/parameters/a refers to itself');
    const badSchema = structuredClone(petstore) as any;
    badSchema.components.schemas.Pet.properties.owner = { $ref: '#/components/schemas/Owner' };
    expect(() => convertOperations(doc(badSchema))).toThrow(
      'paths./pets.post.requestBody.content.application/json.schema.properties.owner: $ref #/components/schemas/Owner does not resolve',
    );
  });
});

describe('operations as tools', () => {
  it('names: snake_case from operationId, method and path without one, a deterministic suffix on a collision', () => {
    expect(snakeName('repos/get-content')).toBe('repos_get_content');
    expect(snakeName('listPetsByID')).toBe('list_pets_by_id');
    expect(snakeName('2fa')).toBe('op_2fa');
    expect(nameFromPath('delete', '/pets/{petId}')).toBe('delete_pets_by_pet_id');
    const names = convertOperations(doc()).operations.map((o) => o.name);
    // show-pet-by-id and showPetById meet at show_pet_by_id: the first in document order keeps it.
    expect(names).toEqual(['list_pets', 'create_pet', 'show_pet_by_id', 'show_pet_by_id_2', 'delete_pets_by_pet_id']);
    // A selection never renames the others.
    expect(convertOperations(doc(), { exclude: ['show-pet-by-id'] }).operations.map((o) => o.name)).toContain('show_pet_by_id_2');
  });

  it('description from summary and description, Markdown reduced to text, method and path kept', () => {
    expect(op('list_pets').description).toBe('List all pets. See the docs for paging. (GET /pets)');
    expect(markdownText('# Title\n\n> quoted <b>bold</b> &amp; _em_')).toBe('Title quoted bold & em');
    const long = structuredClone(petstore) as any;
    long.paths['/pets'].get.description = 'word '.repeat(1000);
    const described = convertOperations(doc(long)).operations[0].description;
    expect(described.length).toBeLessThanOrEqual(1000);
    expect(described.endsWith(' … (GET /pets)')).toBe(true);
  });

  it('input schema from parameters and the JSON body; never Authorization or cookies; 3.0 turned into JSON Schema', () => {
    const list = op('list_pets');
    expect(Object.keys(list.inputSchema.properties as object)).toEqual(['limit', 'tags', 'tagsCsv', 'filter', 'X-Trace']);
    expect((list.inputSchema.properties as any).limit).toEqual({ type: 'integer', exclusiveMaximum: 100 });
    const create = op('create_pet');
    expect(create.inputSchema.required).toEqual(['body']);
    const body = (create.inputSchema.properties as any).body;
    expect(body.properties.name).toEqual({ type: 'string' });
    expect(body.properties.tag).toEqual({ type: ['string', 'null'] });
    // The recursive reference is cut to "anything", the rest copied in.
    expect(body.properties.parent).toEqual({});
    expect(op('show_pet_by_id').inputSchema).toEqual({
      type: 'object',
      properties: { petId: { type: 'string' } },
      required: ['petId'],
      additionalProperties: false,
    });
  });

  it('access by method, overridable; include/exclude over operationId, name, tag and METHOD /path; non-JSON bodies refused by name', () => {
    const all = convertOperations(doc());
    expect(Object.fromEntries(all.operations.map((o) => [o.name, o.access]))).toEqual({
      list_pets: 'read',
      create_pet: 'write',
      show_pet_by_id: 'read',
      show_pet_by_id_2: 'write',
      delete_pets_by_pet_id: 'destructive',
    });
    expect(all.refused).toEqual([{ operation: 'uploadPhoto', reason: 'its request body is image/png, not JSON' }]);
    expect(convertOperations(doc(), { access: { createPet: 'destructive' } }).operations[1].access).toBe('destructive');
    const names = (selection: Parameters<typeof convertOperations>[1]) => convertOperations(doc(), selection).operations.map((o) => o.name);
    expect(names({ include: ['GET /pets*'] })).toEqual(['list_pets', 'show_pet_by_id']);
    expect(names({ include: ['tag:pets'], exclude: ['DELETE *', 'create*'] })).toEqual(['list_pets', 'show_pet_by_id']);
    expect(names({ include: ['show_pet_by_id_2'] })).toEqual(['show_pet_by_id_2']);
  });
});

describe('requests from arguments', () => {
  it('each path argument is one segment: no "..", slash, encoded slash or absolute URL leaves the operation path', () => {
    const show = op('show_pet_by_id');
    expect(buildRequest(show, { petId: 'a b' }).path).toBe('/pets/a%20b');
    for (const petId of ['..', '../admin', '%2e%2e', 'a/b', 'a%2Fb', 'a%252Fb', 'https://evil.example/x', 'a\\b', '']) {
      expect(() => buildRequest(show, { petId }), petId).toThrow(UnsafePathArgument);
    }
  });

  it('query per style and explode, declared headers only, JSON body', () => {
    const request = buildRequest(op('list_pets'), {
      limit: 5,
      tags: ['a', 'b c'],
      tagsCsv: ['x', 'y'],
      filter: { kind: 'dog' },
      'X-Trace': 't1',
      Authorization: 'Bearer stolen',
    });
    expect(request.path).toBe('/pets?limit=5&tags=a&tags=b%20c&tagsCsv=x,y&filter%5Bkind%5D=dog');
    expect(request.headers).toEqual({ 'X-Trace': 't1' });
    expect(() => buildRequest(op('list_pets'), { 'X-Trace': 'a\r\nInjected: 1' })).toThrow(/control characters/);
    const create = buildRequest(op('create_pet'), { body: { name: 'Rex' } });
    expect(create).toEqual({ path: '/pets', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Rex"}' });
  });
});

describe('providers from entries', () => {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  const file = join(dir, 'pets.json');
  writeFileSync(file, JSON.stringify(petstore));

  it('builds a provider: base URL from the document, auth, tools', () => {
    const [provider] = openapiProviders(
      {
        OPENAPI_INTEGRATIONS: JSON.stringify([
          { name: 'pets', displayName: 'Pets', document: file, auth: { type: 'apikey', name: 'X-Key' } },
        ]),
      },
      builtinProviders,
    );
    expect(provider.manifest).toMatchObject({
      name: 'pets',
      auth: 'apikey',
      toolPrefix: 'pets',
      apiBaseUrl: 'https://eu.pets.example/v1',
      version: '1.2.3',
    });
    expect(provider.tools.map((t) => t.name)).toEqual([
      'list_pets',
      'create_pet',
      'show_pet_by_id',
      'show_pet_by_id_2',
      'delete_pets_by_pet_id',
    ]);
    const headers = new Headers();
    provider.authorize!({ type: 'apikey', fields: { apiKey: 'k1' } }, headers);
    expect(headers.get('x-key')).toBe('k1');
  });

  it('a bad entry or document stops the start, naming the place', () => {
    const problem = (entries: unknown[]) => {
      try {
        openapiProviders({ OPENAPI_INTEGRATIONS: JSON.stringify(entries) }, builtinProviders);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as ConfigError).problems[0];
      }
      throw new Error('no error');
    };
    const broken = structuredClone(petstore) as any;
    broken.paths['/pets'].get.parameters[2] = { $ref: '#/components/parameters/per-page' };
    const brokenFile = join(dir, 'broken.yaml');
    writeFileSync(brokenFile, JSON.stringify(broken));
    expect(problem([{ name: 'pets', displayName: 'Pets', document: brokenFile }])).toEqual({
      variable: 'OPENAPI_INTEGRATIONS',
      message: '[0].document: paths./pets.get.parameters[2]: $ref #/components/parameters/per-page does not resolve',
    });
    expect(problem([{ name: 'pets', displayName: 'Pets', document: file, auth: { type: 'apikey', name: 'Host' } }]).message).toBe(
      '[0].auth.name: expected an HTTP header name that Switchboard does not set itself',
    );
    expect(problem([{ name: 'github', displayName: 'G', document: file }]).message).toBe(
      '[0].name: "github" is the name of the integration github',
    );
    expect(problem([{ name: 'pets', displayName: 'Pets', document: join(dir, 'missing.json') }]).message).toMatch(
      /^\[0\]\.document: .*missing\.json cannot be read \(ENOENT\)/,
    );
    expect(problem([{ name: 'pets', displayName: 'Pets', document: file, auth: { type: 'oauth2' } }]).message).toBe(
      '[0].document: components.securitySchemes: no oauth2 authorizationCode flow in the document; give auth.authorizeUrl and auth.tokenUrl in the entry',
    );
  });

  it("GitHub's whole REST API, from its published description, loads as tools", () => {
    const path = documentPath('@octokit/openapi/generated/api.github.com.json');
    const started = performance.now();
    const { provider, refused } = openapiProvider(
      { name: 'github-rest', displayName: 'GitHub REST', document: path, auth: { type: 'oauth2', app: 'github' } },
      loadDocumentFile(path),
    );
    const ms = performance.now() - started;
    expect(provider.tools.length).toBeGreaterThan(1000);
    expect(refused).toEqual([]);
    expect(provider.manifest).toMatchObject({ apiBaseUrl: 'https://api.github.com', envPrefix: 'GITHUB', auth: 'oauth2' });
    expect(provider.manifest.oauth2?.tokenUrl).toBe('https://github.com/login/oauth/access_token');
    const names = new Set(provider.tools.map((t) => t.name));
    expect(names.size).toBe(provider.tools.length);
    for (const name of ['repos_get', 'issues_create', 'issues_list_for_repo', 'repos_delete', 'pulls_merge']) expect(names).toContain(name);
    expect(provider.tools.find((t) => t.name === 'repos_delete')?.access).toBe('destructive');
    expect(provider.tools.every((t) => /^[a-z][a-z0-9_]*$/.test(t.name) && t.name.length <= 64)).toBe(true);
    console.log(`GitHub REST: ${provider.tools.length} tools in ${Math.round(ms)} ms`);
  });

  it("the example entries of README and docs/guides/openapi.md are valid; README's loads", () => {
    const root = new URL('../../', import.meta.url);
    const examples = ['README.md', 'docs/guides/openapi.md'].flatMap((file) =>
      [...readFileSync(new URL(file, root), 'utf8').matchAll(/OPENAPI_INTEGRATIONS='(\[[\s\S]*?\])'/g)].map((m) => ({ file, json: m[1] })),
    );
    expect(examples.map((e) => e.file)).toEqual(['README.md', 'docs/guides/openapi.md']);
    for (const { file, json } of examples) expect(parseOpenApiIntegrations(json).length, file).toBeGreaterThan(0);
    const [provider] = openapiProviders({ OPENAPI_INTEGRATIONS: examples[0].json }, builtinProviders);
    expect(provider.manifest.name).toBe('github-rest');
  });

  it('runs a tool over real HTTP: arguments checked, a query key or a bearer token added, JSON answered', async () => {
    const seen: { url?: string; authorization?: string }[] = [];
    const server = createServer((req, res) => {
      seen.push({ url: req.url, authorization: req.headers.authorization });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"pets":[]}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    try {
      for (const auth of [{ type: 'apikey', in: 'query', name: 'api_key' }, { type: 'bearer' }]) {
        const [provider] = openapiProviders(
          { OPENAPI_INTEGRATIONS: JSON.stringify([{ name: 'pets', displayName: 'Pets', document: file, baseUrl, auth }]) },
          builtinProviders,
        );
        const tool = provider.tools.find((t) => t.name === 'list_pets')!;
        expect((await tool.input.safeParseAsync({ limit: 'five' })).success).toBe(false);
        const args = await tool.input.parseAsync({ limit: 5 });
        const ctx = createToolContext({
          provider,
          credential: { type: 'apikey', fields: { apiKey: 'sekret' } },
          apiBaseUrl: baseUrl,
          signal: AbortSignal.timeout(10_000),
          logger: { info() {}, warn() {} },
          caller: { tenantId: 't', userId: 'u' },
        });
        expect(await tool.run(args, ctx)).toEqual({ pets: [] });
      }
      expect(seen).toEqual([
        { url: '/v1/pets?limit=5&api_key=sekret', authorization: undefined },
        { url: '/v1/pets?limit=5', authorization: 'Bearer sekret' },
      ]);
    } finally {
      server.close();
    }
  });
});
