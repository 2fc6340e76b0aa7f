import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AGENT_TOOLS, META_TOOLS } from '../../features/meta-tools.js';
import pkg from '../../package.json' with { type: 'json' };
import { buildOpenApiDocument } from '../../surfaces/http/openapi-document.js';
import { createTestUser, type Stack, startWorld, type TestUser } from '../support/harness.js';

const ALL_TOOLS = [...META_TOOLS, ...AGENT_TOOLS];

const world = await startWorld({ worker: false });
const { stack } = world;
const limited = await world.startStack({ worker: false, env: { RATE_LIMIT_PER_MINUTE: '5' } });
const alice = await world.user();

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** Every error answer a test saw, to check that none leaks a stack trace. */
const errorAnswers: { what: string; answer: Answer }[] = [];

/** A raw request: the body is sent as given (a string), with the content type asked for. */
async function send(
  path: string,
  options: { method?: string; body?: string; contentType?: string; key?: string | null; accept?: string; base?: Stack } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { accept: options.accept ?? 'application/json' };
  const key = options.key === undefined ? alice.apiKey : options.key;
  if (key) headers.authorization = `Bearer ${key}`;
  if (options.contentType) headers['content-type'] = options.contentType;
  const res = await fetch(`${(options.base ?? stack).baseUrl}${path}`, { method: options.method ?? 'POST', headers, body: options.body });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const answer = { status: res.status, headers: res.headers, text, json };
  if (res.status >= 400) errorAnswers.push({ what: `${options.method ?? 'POST'} ${path}`, answer });
  return answer;
}

const postJson = (tool: string, body: string, options: { key?: string | null } = {}) =>
  send(`/v1/tools/${tool}`, { body, contentType: 'application/json', ...options });

describe('GET /openapi.json', () => {
  let doc: any;
  beforeAll(async () => {
    const res = await send('/openapi.json', { method: 'GET', key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = res.json;
  });

  it('is a valid OpenAPI 3.1 document (checked against the official schema)', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    // Every $ref points at a component that exists.
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs)) {
      const path = ref.slice('"$ref":"#/'.length, -1).split('/');
      expect(
        path.reduce((node: any, part) => node?.[part], doc),
        ref,
      ).toBeDefined();
    }
  });

  it('has info from package.json, the public base URL and bearer auth', () => {
    expect(doc.info).toMatchObject({ title: pkg.name, version: pkg.version });
    expect(doc.servers).toEqual([{ url: stack.baseUrl }]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.schemas.Error).toMatchObject({
      type: 'object',
      properties: { error: { type: 'string' } },
      required: ['error'],
    });
  });

  it('has exactly one POST path per meta-tool and agent tool', () => {
    expect(Object.keys(doc.paths).sort()).toEqual(ALL_TOOLS.map((t) => `/v1/tools/${t.name}`).sort());
    for (const tool of ALL_TOOLS) {
      const item = doc.paths[`/v1/tools/${tool.name}`];
      expect(Object.keys(item)).toEqual(['post']);
      expect(item.post.description).toBe(tool.description);
      expect(tool.description.startsWith(item.post.summary)).toBe(true);
      expect(item.post.security).toEqual([{ bearerAuth: [] }]);
      for (const status of ['400', '401', '404', '413', '415', '429', '503']) expect(item.post.responses[status], status).toBeDefined();
      expect(item.post.responses['401'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
      expect(item.post.responses['429'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
    expect(doc.paths['/v1/tools/get_auth_url'].post.deprecated).toBe(true);
    expect(doc.paths['/v1/tools/connect'].post.deprecated).toBeUndefined();
  });

  it("generates each request schema from the tool's zod schema (not a hand-written copy)", () => {
    for (const tool of ALL_TOOLS) {
      const { $schema, ...expected } = z.toJSONSchema(tool.input, { io: 'input' });
      expect($schema).toBeDefined();
      const schema = doc.paths[`/v1/tools/${tool.name}`].post.requestBody.content['application/json'].schema;
      expect(schema, tool.name).toEqual(expected);
      expect(schema.$schema).toBeUndefined();
    }
    // Spot checks that the conversion carries the constraints handlers enforce.
    const search = doc.paths['/v1/tools/search_tools'].post.requestBody.content['application/json'].schema;
    expect(search.required).toEqual(['query']);
    expect(search.properties.limit).toMatchObject({ minimum: 1, maximum: 20, default: 8 });
    expect(search.additionalProperties).toBe(false);
  });

  it('is built once and served without an API key', async () => {
    expect(buildOpenApiDocument(stack.services.config)).toBe(buildOpenApiDocument(stack.services.config));
    const again = await send('/openapi.json', { method: 'GET', key: 'not-a-key' });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(doc);
  });
});

describe('POST /v1/tools/<name>', () => {
  it('answers every tool with JSON through the same handlers', async () => {
    const list = await postJson('list_integrations', '{}');
    expect(list.status).toBe(200);
    expect(list.json.integrations.map((i: { name: string }) => i.name)).toContain('github');
    const search = await postJson('connections_search', JSON.stringify({ query: 'create issue' }));
    expect(search.status).toBe(200);
    expect(search.json.ok).toBe(true);
  });

  it('takes an empty body, with or without a JSON content type, as no arguments', async () => {
    expect((await send('/v1/tools/list_integrations')).status).toBe(200);
    expect((await send('/v1/tools/list_integrations', { contentType: 'application/json' })).status).toBe(200);
    expect((await send('/v1/tools/list_integrations', { contentType: 'application/json', body: '' })).status).toBe(200);
  });

  it('answers malformed JSON with 400 "Malformed JSON body"', async () => {
    for (const body of ['{"query":', '{query: "x"}', "{'a':1}", '{"a":1}}']) {
      const res = await postJson('search_tools', body);
      expect(res.status, body).toBe(400);
      expect(res.json).toEqual({ error: 'Malformed JSON body' });
    }
  });

  it('answers a body that is JSON but not an object with 400 naming what it is', async () => {
    const cases: [string, string][] = [
      ['[]', 'an array'],
      ['[{"query":"x"}]', 'an array'],
      ['"x"', 'a string'],
      ['null', 'null'],
      ['42', 'a number'],
      ['true', 'a boolean'],
    ];
    for (const tool of ['list_integrations', 'connections_search']) {
      for (const [body, got] of cases) {
        const res = await postJson(tool, body);
        expect(res.status, `${tool} ${body}`).toBe(400);
        expect(res.json).toEqual({ error: `The request body must be a JSON object of the tool's arguments, not ${got}` });
      }
    }
  });

  it('answers arguments of the wrong type with 400 naming each one', async () => {
    const meta = await postJson('search_tools', JSON.stringify({ query: 5, limit: 'many' }));
    expect(meta.status).toBe(400);
    expect(meta.json.error).toMatch(/^Invalid arguments for search_tools: /);
    expect(meta.json.error).toContain('query:');
    expect(meta.json.error).toContain('limit:');

    const unknownArg = await postJson('list_integrations', JSON.stringify({ surprise: 1 }));
    expect(unknownArg.status).toBe(400);
    expect(unknownArg.json.error).toContain('surprise');

    const agent = await postJson('connections_search', JSON.stringify({ query: ['x'] }));
    expect(agent.status).toBe(400);
    expect(agent.json).toMatchObject({ ok: false, error: { code: 'invalid_arguments', issues: [{ path: ['query'] }] } });
  });

  it('answers arguments nested 50,000 levels deep with 400 naming the bound on every surface, never a 5xx, recording nothing', async () => {
    const nested = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    const bodies: [string, string][] = [
      ['connections_execute', `{"name":"jots__list_notes","arguments":{"x":${nested}}}`],
      ['execute_tools', `{"executions":[{"tool":"jots_list_notes","args":{"x":${nested}}}]}`],
      ['execute_tools', `{"executions":[{"tool":"jots_list_notes","args":{"x":${nested}}}],"requestId":"deep-1"}`],
      ['search_tools', `{"query":${nested}}`],
    ];
    for (const [tool, body] of bodies) {
      const res = await postJson(tool, body);
      expect(res.status, `${tool} ${body.slice(-30)}`).toBe(400);
      expect(JSON.stringify(res.json)).toContain('nested more than 64 levels deep');
    }
    const mcp = await send('/mcp', {
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_tools","arguments":{"executions":[{"tool":"jots_list_notes","args":{"x":${nested}}}]}}}`,
      contentType: 'application/json',
      accept: 'application/json, text/event-stream',
    });
    expect(mcp.status).toBeLessThan(500);
    expect(mcp.text).toContain('nested more than 64 levels deep');
    expect(mcp.text).not.toContain('Temporal');
    const recorded = await stack.services.pool.query('SELECT 1 FROM tool_batch_requests WHERE user_id = $1', [alice.user.id]);
    expect(recorded.rows).toEqual([]);
    // 60 levels are arguments like any other: the tool's own schema answers them.
    const fine = await postJson('search_tools', `{"query":${'['.repeat(60)}${']'.repeat(60)}}`);
    expect(fine.status).toBe(400);
    expect(fine.json.error).toMatch(/^Invalid arguments for search_tools: query: /);
    expect(fine.json.error).not.toContain('nested more than');
  });

  it('answers a body that is not declared JSON with 415', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await send('/v1/tools/connect', { body: '{"integration":"github"}', contentType });
      expect(res.status, contentType).toBe(415);
      expect(res.json).toEqual({ error: 'Content-Type must be application/json' });
    }
    const charset = await send('/v1/tools/list_integrations', { body: '{}', contentType: 'application/json; charset=utf-8' });
    expect(charset.status).toBe(200);
  });

  it('answers a body over 1 MB with 413', async () => {
    const body = JSON.stringify({ query: 'x'.repeat(1_100_000) });
    const res = await postJson('search_tools', body);
    expect(res.status).toBe(413);
    expect(res.json).toEqual({ error: 'Request body too large' });
    // Just under the limit is parsed, and then the arguments are checked.
    const near = await postJson('search_tools', JSON.stringify({ query: 'x'.repeat(1_000_000) }));
    expect(near.status).toBe(400);
    expect(near.json.error).toContain('query:');
  });

  it('answers an unknown tool with 404', async () => {
    const res = await postJson('no_such_tool', '{}');
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: 'No tool named no_such_tool' });
  });

  it('answers another method on a tool route with 405 and Allow: POST', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const res = await send('/v1/tools/list_integrations', {
        method,
        ...(method === 'GET' ? {} : { body: '{}', contentType: 'application/json' }),
      });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.json).toEqual({ error: `${method} is not allowed on /v1/tools/list_integrations; use POST` });
    }
  });

  it('answers a missing or bad API key with 401 before anything else about the route', async () => {
    const missing = await send('/v1/tools/list_integrations', { key: null, body: '{}', contentType: 'application/json' });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toContain('Bearer');
    expect(missing.json).toEqual({ error: 'Missing Authorization: Bearer <api key>' });
    const bad = await send('/v1/tools/list_integrations', { key: 'sb_not_a_real_key', method: 'GET' });
    expect(bad.status).toBe(401);
    expect(bad.json).toEqual({ error: 'The API key is not valid or was revoked' });
  });

  it('answers unknown routes with a JSON 404', async () => {
    const inApi = await send('/v1/nowhere', { body: '{}', contentType: 'application/json' });
    expect(inApi.status).toBe(404);
    expect(inApi.json).toEqual({ error: 'No route for POST /v1/nowhere' });
    const nested = await send('/v1/tools/list_integrations/extra', { body: '{}', contentType: 'application/json' });
    expect(nested.status).toBe(404);
    expect(nested.json).toEqual({ error: 'No route for POST /v1/tools/list_integrations/extra' });
    const outside = await send('/no/such/thing', { method: 'GET', key: null });
    expect(outside.status).toBe(404);
    expect(outside.json).toEqual({ error: 'No route for GET /no/such/thing' });
    const deleted = await send('/openapi.json', { method: 'DELETE', key: null });
    expect(deleted.status).toBe(404);
    expect(deleted.json).toEqual({ error: 'No route for DELETE /openapi.json' });
  });

  it('never answered a client mistake with a 500 or a stack trace', () => {
    expect(errorAnswers.length).toBeGreaterThan(30);
    for (const { what, answer } of errorAnswers) {
      expect(answer.status, what).toBeLessThan(500);
      expect(answer.headers.get('content-type'), what).toMatch(/^application\/json/);
      expect(answer.json, what).toBeTypeOf('object');
      expect(answer.text, what).not.toMatch(/\bat .*(:\d+:\d+|\(native\))/);
      expect(answer.text, what).not.toContain('node_modules');
      expect(answer.text, what).not.toMatch(/SyntaxError|TypeError|Error: /);
    }
    expect(stack.logs.text()).not.toContain('unhandled error');
  });
});

describe('rate limiting (RATE_LIMIT_PER_MINUTE=5)', () => {
  it('answers the 6th request of a key in a minute with 429 and the draft-8 RateLimit headers; other keys are unaffected', async () => {
    const [first, second] = await Promise.all([createTestUser(limited), createTestUser(limited)]);
    const call = (user: TestUser) =>
      send('/v1/tools/list_integrations', { base: limited, key: user.apiKey, body: '{}', contentType: 'application/json' });

    for (let i = 1; i <= 5; i++) {
      const res = await call(first);
      expect(res.status, `request ${i}`).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toMatch(/q=5;.*w=60/);
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`r=${5 - i};`));
    }
    const over = await call(first);
    expect(over.status).toBe(429);
    expect(over.json).toEqual({ error: expect.stringMatching(/^Too many requests for this API key/) });
    expect(over.headers.get('ratelimit-policy')).toMatch(/q=5;.*w=60/);
    expect(over.headers.get('ratelimit')).toMatch(/r=0;/);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    // The legacy X-RateLimit-* headers are off.
    expect(over.headers.get('x-ratelimit-limit')).toBeNull();

    // Still limited on any route under /v1 with that key.
    expect(
      (await send('/v1/tools/search_tools', { base: limited, key: first.apiKey, body: '{"query":"x"}', contentType: 'application/json' }))
        .status,
    ).toBe(429);

    // A second key of the same server has its own allowance.
    const other = await call(second);
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit')).toMatch(/r=4;/);
    // The policy header partitions by key: the two keys have different partition keys.
    const pk = (h: string | null) => /pk=:([^:]+):/.exec(h ?? '')?.[1];
    expect(pk(other.headers.get('ratelimit-policy'))).toBeDefined();
    expect(pk(other.headers.get('ratelimit-policy'))).not.toBe(pk(over.headers.get('ratelimit-policy')));
  });
});
