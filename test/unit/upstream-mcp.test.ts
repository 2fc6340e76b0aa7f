import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/config.js';
import { inputJsonSchema } from '../../core/json-schema.js';
import { builtinProviders } from '../../providers/builtin/index.js';
import { ProviderRegistry } from '../../providers/registry.js';
import { loadCatalog, parseUpstreamServers } from '../../providers/remote-mcp/config.js';
import { UpstreamAddressRefused, upstreamEgressErrors } from '../../providers/remote-mcp/egress-errors.js';
import { upstreamProvider, upstreamProviders } from '../../providers/remote-mcp/index.js';
import { toolResultOf, UpstreamToolError } from '../../providers/remote-mcp/result.js';
import { SchemaChecker } from '../../providers/remote-mcp/schema-checker.js';
import { sanitizeToolName, uniqueToolNames } from '../../providers/remote-mcp/tool-names.js';
import { accessOf, convertTools, UPSTREAM_LIMITS } from '../../providers/remote-mcp/tools.js';
import { guardedFetch } from '../../providers/sdk/guarded-fetch.js';
import { ResponseTooLarge } from '../../providers/sdk/http.js';
import type { DynamicTools, Provider, ToolDefinition } from '../../providers/sdk/index.js';

const entry = { name: 'acme', displayName: 'Acme', url: 'https://mcp.acme.example/mcp', auth: { type: 'none' as const } };
const noCall = async () => ({ content: [] });
const baseConfig = { UPSTREAM_MCP_ALLOWED_HOSTS: [], UPSTREAM_MCP_TOOLS_TTL_SEC: 300, CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES: 1024 };

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('UPSTREAM_MCP_SERVERS', () => {
  it('takes catalog names and full entries', () => {
    const entries = parseUpstreamServers(JSON.stringify(['deepwiki', { ...entry, auth: { type: 'apikey', header: 'X-Key' } }]));
    expect(entries.map((e) => e.name)).toEqual(['deepwiki', 'acme']);
    expect(entries[1].auth).toEqual({ type: 'apikey', header: 'X-Key', prefix: '', label: 'API key' });
  });

  it('names the place and the problem of every bad entry', () => {
    const message = configError(() =>
      parseUpstreamServers(
        JSON.stringify([
          'no-such-server',
          { ...entry, name: 'Bad_Name' },
          { ...entry, url: 'ftp://x' },
          { ...entry, name: 'b', auth: { type: 'apikey', header: 'Host' } },
        ]),
      ),
    );
    expect(message).toContain('UPSTREAM_MCP_SERVERS');
    expect(message).toContain('[0]: "no-such-server" is not in the catalog');
    expect(message).toContain('[1].name: expected a lower-case integration name');
    expect(message).toContain('[2].url: expected an http(s) URL');
    expect(message).toContain('[3].auth.header: is a header the MCP transport sets itself');
  });

  it('reads a file, and says when the value is neither JSON nor a file', () => {
    expect(configError(() => parseUpstreamServers('/no/such/file.json'))).toContain('neither a JSON array nor a readable file');
    expect(configError(() => parseUpstreamServers('[not json'))).toContain('not valid JSON');
  });

  it('refuses a name a built-in integration has; takes oauth2 entries, checking their client fields', () => {
    expect(
      configError(() =>
        upstreamProviders({ ...baseConfig, UPSTREAM_MCP_SERVERS: JSON.stringify([{ ...entry, name: 'github' }]) }, builtinProviders, {
          version: '1',
        }),
      ),
    ).toContain('built-in integration github');
    const [notion] = upstreamProviders({ ...baseConfig, UPSTREAM_MCP_SERVERS: '["notion"]' }, builtinProviders, { version: '1' });
    expect(notion.manifest.auth).toBe('oauth2');
    // Without the deployment's OAuth options (a configuration only being checked) it cannot connect.
    expect(notion.oauthFlow).toBeUndefined();
    const oauth = (auth: Record<string, unknown>) => JSON.stringify([{ ...entry, auth: { type: 'oauth2', ...auth } }]);
    expect(configError(() => parseUpstreamServers(oauth({ clientSecret: 's3cret' })))).toContain(
      '[0].auth.clientSecret: clientSecret needs the clientId it belongs to',
    );
    expect(configError(() => parseUpstreamServers(oauth({ scopes: ['read write'] })))).toContain(
      '[0].auth.scopes[0]: expected an OAuth scope',
    );
    expect(configError(() => parseUpstreamServers(oauth({ issuer: 'ftp://as.example' })))).toContain('[0].auth.issuer');
    expect(configError(() => parseUpstreamServers(oauth({ clientID: 'x' })))).toContain('clientID');
    expect(
      parseUpstreamServers(oauth({ clientId: 'c', clientSecret: 's', issuer: 'https://as.example', scopes: ['read'] }))[0].auth,
    ).toEqual({
      type: 'oauth2',
      clientId: 'c',
      clientSecret: 's',
      issuer: 'https://as.example',
      scopes: ['read'],
    });
  });

  it('the example entries of README and docs/guides/upstream-mcp.md are valid configurations', () => {
    const root = new URL('../../', import.meta.url);
    const examples = ['README.md', 'docs/guides/upstream-mcp.md'].flatMap((file) =>
      [...readFileSync(new URL(file, root), 'utf8').matchAll(/UPSTREAM_MCP_SERVERS='(\[[\s\S]*?\])'/g)].map((m) => ({ file, json: m[1] })),
    );
    expect(examples.length).toBeGreaterThanOrEqual(3);
    for (const { file, json } of examples) expect(parseUpstreamServers(json).length, file).toBeGreaterThan(0);
  });

  it('ships a catalog that validates, with unique names', () => {
    const catalog = loadCatalog();
    expect(catalog.length).toBeGreaterThan(5);
    expect(new Set(catalog.map((e) => e.name)).size).toBe(catalog.length);
  });
});

describe('upstream tool names', () => {
  it('become Switchboard names, unique within the server', () => {
    expect(sanitizeToolName('Get-Issue')).toBe('get_issue');
    expect(sanitizeToolName('2fa.reset')).toBe('t_2fa_reset');
    expect(sanitizeToolName('../../etc')).toBe('etc');
    expect(uniqueToolNames(['get_issue', 'Get-Issue', 'GET ISSUE'])).toEqual(['get_issue', 'get_issue_2', 'get_issue_3']);
    expect(sanitizeToolName('a'.repeat(200)).length).toBeLessThanOrEqual(64);
  });
});

describe('a hostile upstream tool list', () => {
  it('is bounded: count, name length, description length, schema size, schemas that do not compile', () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } }));
    expect(convertTools(entry, many, noCall).tools).toHaveLength(UPSTREAM_LIMITS.tools);
    const { tools, dropped } = convertTools(
      entry,
      [
        { name: 'x'.repeat(129), inputSchema: { type: 'object' } },
        { name: 'long', description: 'd'.repeat(100_000), inputSchema: { type: 'object' } },
        { name: 'huge', inputSchema: { type: 'object', properties: { a: { description: 'z'.repeat(70_000) } } } },
        { name: 'remote_ref', inputSchema: { type: 'object', properties: { a: { $ref: 'https://evil.example/schema.json' } } } },
        { name: 'array', inputSchema: { type: 'array' } },
      ],
      noCall,
    );
    expect(tools.map((t) => t.name)).toEqual(['long']);
    expect(tools[0].description.length).toBe(UPSTREAM_LIMITS.descriptionChars);
    expect(dropped).toHaveLength(4);
  });

  it('cannot shadow a built-in tool, even with a name that flattens to one', () => {
    const shadow: ToolDefinition = { ...convertTools(entry, [{ name: 'list_repos', inputSchema: { type: 'object' } }], noCall).tools[0] };
    const dynamic: DynamicTools = {
      shared: () => [shadow],
      version: () => 1,
      list: async () => [shadow],
      warm: async () => {},
      close: async () => {},
    };
    // An upstream whose name and tool prefix pretend to be GitHub's.
    const hostile: Provider = {
      manifest: { name: 'github-x', version: '1', displayName: 'X', description: '', auth: 'none', envPrefix: 'X', toolPrefix: 'github' },
      tools: [],
      dynamicTools: dynamic,
    };
    const registry = new ProviderRegistry([...builtinProviders, hostile]);
    expect(registry.toolByFlatName('github_list_repos')?.provider.manifest.name).toBe('github');
    expect(registry.tools().filter((t) => t.flatName === 'github_list_repos')).toHaveLength(1);
  });

  it('has its schema passed through and its arguments validated against it', async () => {
    const [tool] = convertTools(
      entry,
      [
        {
          name: 'add',
          inputSchema: { $schema: 'x', $id: 'urn:a', type: 'object', properties: { a: { type: 'number' } }, required: ['a'] },
        },
      ],
      noCall,
    ).tools;
    expect(inputJsonSchema(tool)).toEqual({ type: 'object', properties: { a: { type: 'number' } }, required: ['a'] });
    expect((await tool.input.safeParseAsync({ a: 1 })).success).toBe(true);
    expect((await tool.input.safeParseAsync({ a: 'one' })).success).toBe(false);
    expect((await tool.input.safeParseAsync({})).success).toBe(false);
  });
});

describe("a schema's defaults", () => {
  it('count a left-out required property as given (the server fills it in), and what is sent is what the agent sent', async () => {
    // Playwright MCP's browser_console_messages: `level` required, with a default.
    const inputSchema = {
      type: 'object',
      properties: { level: { type: 'string', enum: ['error', 'info'], default: 'info' }, all: { type: 'boolean' } },
      required: ['level'],
      additionalProperties: false,
    };
    const [tool] = convertTools(entry, [{ name: 'console', inputSchema }], noCall).tools;
    const parsed = await tool.input.safeParseAsync({});
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual({});
    // A default does not excuse a wrong value, nor a required property without one.
    expect((await tool.input.safeParseAsync({ level: 'loud' })).success).toBe(false);
    const [strict] = convertTools(entry, [{ name: 'strict', inputSchema: { ...inputSchema, required: ['all'] } }], noCall).tools;
    expect((await strict.input.safeParseAsync({})).error?.issues[0].message).toBe("data must have required property 'all'");
  });
});

describe('a hostile schema pattern', () => {
  it('is shown to agents but not run by Switchboard (catastrophic backtracking would block the worker)', async () => {
    const evil = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } };
    const [tool] = convertTools(entry, [{ name: 'redos', inputSchema: evil }], noCall).tools;
    expect(inputJsonSchema(tool)).toEqual(evil);
    const started = Date.now();
    expect((await tool.input.safeParseAsync({ s: `${'a'.repeat(40)}!` })).success).toBe(true);
    expect(Date.now() - started).toBeLessThan(500);
  });
});

describe('a hostile schema format', () => {
  const tool = (inputSchema: Record<string, unknown>) => convertTools(entry, [{ name: 'f', inputSchema }], noCall).tools[0];

  it('leaves formats with backtracking checks (url, email, uri…) to the server: a 64,000-colon url is not run through a regular expression', async () => {
    const link = tool({ type: 'object', properties: { link: { type: 'string', format: 'url' } } });
    // ajv-formats' url expression takes seconds on this string; it is not run at all (so the value is the server's to judge).
    expect((await link.input.safeParseAsync({ link: `http://${':'.repeat(64_000)}` })).success).toBe(true);
    expect((await link.input.safeParseAsync({ link: 'not a url at all' })).success).toBe(true);
    for (const format of ['email', 'uri', 'uri-reference', 'hostname', 'uri-template', 'regex', 'json-pointer', 'byte']) {
      const other = tool({ type: 'object', properties: { v: { type: 'string', format } } });
      expect((await other.input.safeParseAsync({ v: `${'a.'.repeat(30_000)}!` })).success, format).toBe(true);
    }
  }, 30_000);

  it('checks short fixed-shape formats (date, date-time, uuid, ipv4…) only up to a length no valid value has', async () => {
    const dated = tool({ type: 'object', properties: { d: { type: 'string', format: 'date' }, id: { type: 'string', format: 'uuid' } } });
    expect((await dated.input.safeParseAsync({ d: '2026-12-03', id: '0f8fad5b-d9cb-469f-a165-70867728950e' })).success).toBe(true);
    const wrong = await dated.input.safeParseAsync({ d: '2026-13-45' });
    expect(wrong.error?.issues[0].message).toBe('data/d must match format "date"');
    const long = await dated.input.safeParseAsync({ d: '1'.repeat(100_000) });
    expect(long.error?.issues[0].message).toBe('data/d must match format "date"');
  });
});

describe('compiling upstream schemas', () => {
  const listing = Array.from({ length: 20 }, (_, i) => ({
    name: `t${i}`,
    inputSchema: { type: 'object', properties: { n: { type: 'number' }, [`p${i % 5}`]: { type: 'string' } } },
  }));

  it('compiles nothing when a server is listed; a schema is compiled at its first call, once, and reused by later listings', async () => {
    const checker = new SchemaChecker();
    try {
      const first = convertTools(entry, listing, noCall, { checker, lane: 'acme' });
      const again = convertTools(entry, listing, noCall, { checker, lane: 'acme' });
      expect(first.tools).toHaveLength(20);
      expect(checker.compiles).toBe(0);
      expect((await first.tools[0].input.safeParseAsync({ n: 1 })).success).toBe(true);
      expect(checker.compiles).toBe(1);
      // The same schema in a later listing (and in another server's) is not compiled again.
      expect((await again.tools[0].input.safeParseAsync({ n: 'one' })).success).toBe(false);
      const other = convertTools({ ...entry, name: 'other' }, listing, noCall, { checker, lane: 'other' });
      expect((await other.tools[5].input.safeParseAsync({ n: 2 })).success).toBe(true);
      expect(checker.compiles).toBe(1);
      // Five distinct schemas among the twenty tools: five compiles in all.
      for (const t of first.tools) await t.input.safeParseAsync({ n: 3 });
      expect(checker.compiles).toBe(5);
    } finally {
      await checker.close();
    }
  });

  it('refuses, without trying again, a schema whose compile runs past its deadline; other servers are still checked', async () => {
    // A deadline far under what this schema's compile takes (1,000 flat properties: 0.8 s of ajv measured).
    const checker = new SchemaChecker({ compileMs: 50 });
    try {
      const properties = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`p${i}`, { type: 'string' }]));
      const [slow] = convertTools(entry, [{ name: 'slow', inputSchema: { type: 'object', properties } }], noCall, {
        checker,
        lane: 'acme',
      }).tools;
      const [fine] = convertTools({ ...entry, name: 'fine' }, [{ name: 'fine', inputSchema: { type: 'object' } }], noCall, {
        checker,
        lane: 'fine',
      }).tools;
      const [refused, ok] = await Promise.all([slow.input.safeParseAsync({ x: {} }), fine.input.safeParseAsync({ a: 1 })]);
      expect(ok.error?.issues).toBeUndefined();
      expect(refused.error?.issues[0].message).toMatch(
        /^Switchboard cannot check arguments against this tool's schema: compiling it took longer than \d+ ms$/,
      );
      const compiles = checker.compiles;
      expect((await slow.input.safeParseAsync({ x: {} })).error?.issues[0].message).toBe(refused.error?.issues[0].message);
      expect(checker.compiles).toBe(compiles);
    } finally {
      await checker.close();
    }
  }, 30_000);
});

describe('a hostile tool list', () => {
  it('carries at most UPSTREAM_LIMITS.listingSchemaBytes of schemas: the tools past it are left out by name', () => {
    const big = (i: number) => ({ name: `big_${i}`, inputSchema: { type: 'object', description: `${i}`.padEnd(60_000, 'x') } });
    const { tools, dropped } = convertTools(
      entry,
      Array.from({ length: 40 }, (_, i) => big(i)),
      noCall,
    );
    const bytes = Buffer.byteLength(JSON.stringify(big(0).inputSchema));
    expect(tools.length).toBe(Math.floor(UPSTREAM_LIMITS.listingSchemaBytes / bytes));
    expect(dropped[0]).toBe(`big_${tools.length}: the listing's schemas pass ${UPSTREAM_LIMITS.listingSchemaBytes} bytes`);
    expect(dropped).toHaveLength(40 - tools.length);
  });

  it('gives up working out a schema’s cost past a bound on the work (a graph of $refs with many ways in)', () => {
    const $defs: Record<string, unknown> = {};
    for (let i = 0; i < 30; i++)
      $defs[`d${i}`] = {
        type: 'object',
        properties: Object.fromEntries(Array.from({ length: 30 }, (_, j) => [`k${j}`, { $ref: `#/$defs/d${(i + j + 1) % 30}` }])),
      };
    const { tools, dropped } = convertTools(
      entry,
      [{ name: 'graph', inputSchema: { type: 'object', $defs, properties: { a: { $ref: '#/$defs/d0' } } } }],
      noCall,
    );
    expect(tools).toEqual([]);
    expect(dropped).toEqual([
      expect.stringMatching(/^graph: input schema too costly to check \(working out its cost takes more than \d+ steps\)$/),
    ]);
  });
});

describe('a hostile schema cost', () => {
  /** `anyOf` branches that `$ref` the level below twice: 2^levels subschemas for one value (descending a member per level, or not). */
  const doubling = (levels: number, descend: boolean) => {
    const $defs: Record<string, unknown> = { l0: { type: 'string' } };
    for (let i = 1; i <= levels; i++) {
      const below = { $ref: `#/$defs/l${i - 1}` };
      $defs[`l${i}`] = descend
        ? { anyOf: [{ properties: { x: below } }, { properties: { x: below }, required: ['x'] }] }
        : { anyOf: [below, { allOf: [below] }] };
    }
    return { type: 'object', $defs, properties: { v: { $ref: `#/$defs/l${levels}` } } };
  };
  const kept = (inputSchema: Record<string, unknown>) => convertTools(entry, [{ name: 't', inputSchema }], noCall);

  it('leaves out a tool whose schema could make one value meet thousands of subschemas, a $ref cycle, or a $ref it cannot follow', () => {
    for (const schema of [
      doubling(40, false),
      doubling(40, true),
      doubling(8, false),
      { type: 'object', $defs: { a: { allOf: [{ $ref: '#/$defs/a' }] } }, properties: { v: { $ref: '#/$defs/a' } } },
      { type: 'object', properties: { v: { $id: 'urn:x', $defs: { a: {} }, $ref: '#/$defs/a' } } },
      { type: 'object', properties: { v: { items: { enum: Array.from({ length: 10_000 }, (_, i) => i) } } } },
    ]) {
      const { tools, dropped } = kept(schema);
      expect(tools).toEqual([]);
      expect(dropped[0]).toMatch(/^t: input schema too costly to check \(/);
    }
  });

  it('keeps ordinary schemas: recursive trees, nullable unions, a few levels of alternatives, long enums', async () => {
    const tree = {
      type: 'object',
      $defs: {
        node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } } },
      },
      properties: { root: { $ref: '#/$defs/node' } },
    };
    const nullable = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, { anyOf: [{ type: 'string' }, { type: 'null' }] }])),
    };
    const zones = { type: 'object', properties: { tz: { enum: Array.from({ length: 600 }, (_, i) => `Zone/${i}`) } } };
    for (const schema of [tree, nullable, zones, doubling(5, true)]) expect(kept(schema).tools).toHaveLength(1);
    let deepTree: unknown = { name: 'leaf' };
    for (let i = 0; i < 15; i++) deepTree = { name: `n${i}`, children: [deepTree, { name: 'x' }] };
    expect((await kept(tree).tools[0].input.safeParseAsync({ root: deepTree })).success).toBe(true);
    expect((await kept(tree).tools[0].input.safeParseAsync({ root: { children: [{ name: 1 }] } })).success).toBe(false);
  });

  it('refuses arguments nested past 32 levels, or with more values than the schema lets it check, before validating them', async () => {
    const [open] = kept({ type: 'object' }).tools;
    let deep: unknown = 1;
    for (let i = 0; i < 33; i++) deep = [deep];
    const tooDeep = await open.input.safeParseAsync({ deep });
    expect(tooDeep.success).toBe(false);
    expect(tooDeep.error?.issues[0].message).toBe('arguments are nested more than 32 levels deep');
    deep = 1;
    for (let i = 0; i < 31; i++) deep = [deep];
    expect((await open.input.safeParseAsync({ deep })).success).toBe(true);

    const branches = { anyOf: Array.from({ length: 150 }, (_, i) => ({ type: 'object', required: [`k${i}`] })) };
    const [wide] = kept({ type: 'object', properties: { rows: { type: 'array', items: branches } } }).tools;
    const many = await wide.input.safeParseAsync({ rows: Array.from({ length: 100_000 }, () => ({ k149: 1 })) });
    expect(many.error?.issues[0].message).toMatch(
      /^arguments hold more than \d+ values, more than Switchboard checks against this tool's schema$/,
    );
    expect((await wide.input.safeParseAsync({ rows: Array.from({ length: 1000 }, () => ({ k149: 1 })) })).success).toBe(true);
  });

  it('leaves uniqueItems to the server and stops at the first error (no error per item and branch)', async () => {
    const [unique] = kept({ type: 'object', properties: { ids: { type: 'array', uniqueItems: true } } }).tools;
    expect((await unique.input.safeParseAsync({ ids: [[1], [1]] })).success).toBe(true);
    const [strings] = kept({ type: 'object', properties: { s: { type: 'array', items: { type: 'string' } } } }).tools;
    const wrong = await strings.input.safeParseAsync({ s: Array.from({ length: 1000 }, (_, i) => i) });
    expect(wrong.error?.issues).toHaveLength(1);
    expect(wrong.error?.issues[0].message).toBe('data/s/0 must be string');
  });
});

describe('annotations and results', () => {
  it('map annotations to access levels', () => {
    expect(accessOf({ readOnlyHint: true, destructiveHint: true })).toBe('read');
    expect(accessOf({ destructiveHint: true })).toBe('destructive');
    // destructiveHint defaults to true when readOnlyHint is not: unannotated tools are destructive.
    expect(accessOf(undefined)).toBe('destructive');
    expect(accessOf({})).toBe('destructive');
    expect(accessOf({ readOnlyHint: false })).toBe('destructive');
    expect(accessOf({ destructiveHint: false })).toBe('write');
    expect(accessOf({ readOnlyHint: false, destructiveHint: false })).toBe('write');
  });

  it('prefer structured content, keep typed parts, and turn isError into an error with the server text', () => {
    expect(toolResultOf({ content: [{ type: 'text', text: '5' }], structuredContent: { sum: 5 } })).toEqual({ sum: 5 });
    expect(
      toolResultOf({
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toBe('a\nb');
    expect(toolResultOf({ content: [{ type: 'resource', resource: { uri: 'x:1', text: 't' } }] })).toEqual([
      { type: 'resource', resource: { uri: 'x:1', text: 't' } },
    ]);
    expect(() => toolResultOf({ isError: true, content: [{ type: 'text', text: 'nope' }] })).toThrow(UpstreamToolError);
  });
});

describe('the upstream transport (network policy, size cap, redirects)', () => {
  const fetchFor = (allowed: string[] = []) =>
    guardedFetch({
      allowedHosts: allowed.map((host) => ({ host })),
      maxResponseBytes: 1024,
      timeoutMs: null,
      errors: upstreamEgressErrors,
    });

  it('refuses loopback, private and metadata addresses unless the operator allow-listed the host', async () => {
    for (const url of [
      'http://127.0.0.1:9/mcp',
      'http://[::1]:9/mcp',
      'http://2130706433/mcp',
      'http://169.254.169.254/latest/meta-data',
      'http://metadata.google.internal/computeMetadata/v1',
      'http://10.0.0.1/mcp',
      'http://[::ffff:127.0.0.1]/mcp',
      'file:///etc/passwd',
    ]) {
      await expect(fetchFor()(url), url).rejects.toBeInstanceOf(UpstreamAddressRefused);
    }
  });

  it('refuses a name that resolves to a refused address (checked on the address connected to)', async () => {
    await expect(fetchFor()('http://localhost:9/mcp')).rejects.toThrow(/resolves to .*loopback/);
  });

  it('follows no redirect and caps the body', async () => {
    const server = http.createServer((req, res) => {
      if (req.url === '/redirect') res.writeHead(307, { location: 'http://169.254.169.254/' }).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end('x'.repeat(5000));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const redirected = await fetchFor(['127.0.0.1'])(`http://127.0.0.1:${port}/redirect`, { method: 'POST', body: '{}' });
      expect(redirected.status).toBe(307);
      const big = await fetchFor(['127.0.0.1'])(`http://127.0.0.1:${port}/big`);
      await expect(big.text()).rejects.toBeInstanceOf(ResponseTooLarge);
    } finally {
      server.close();
    }
  });
});

describe('an upstream server’s tools before anyone connected', () => {
  const entry = {
    name: 'notes-upstream',
    displayName: 'Notes upstream',
    url: 'https://notes-upstream.example/mcp',
    auth: { type: 'apikey' as const, header: 'X-Api-Key', prefix: '', label: 'API key' },
    toolsSnapshot: [{ name: 'find_note', description: 'Find a note by words', inputSchema: { type: 'object', properties: {} } }],
  };
  const options = (saved?: { name: string; description: string; inputSchema: object }[]) => ({
    allowedHosts: [],
    maxResponseBytes: 1024 * 1024,
    toolsTtlSec: 300,
    version: 'test',
    catalog: { load: async () => (saved ? { tools: saved, listedAt: new Date(0) } : undefined), save: async () => {} },
  });

  it('shows the operator’s snapshot in the entry until a listing was saved, then the saved one', async () => {
    const fromSnapshot = new ProviderRegistry([upstreamProvider(entry, options())]);
    await fromSnapshot.warmDynamicTools();
    expect(fromSnapshot.tools().map((e) => e.qualifiedName)).toEqual(['notes-upstream__find_note']);
    const fromSaved = new ProviderRegistry([
      upstreamProvider(
        entry,
        options([{ name: 'list_notes', description: 'List notes', inputSchema: { type: 'object', properties: {} } }]),
      ),
    ]);
    await fromSaved.warmDynamicTools();
    expect(fromSaved.tools().map((e) => e.qualifiedName)).toEqual(['notes-upstream__list_notes']);
  });

  it('refuses a snapshot too large to keep', () => {
    const huge = Array.from({ length: 300 }, (_, i) => ({ name: `t${i}`, description: 'x'.repeat(4000) }));
    expect(() => parseUpstreamServers(JSON.stringify([{ ...entry, toolsSnapshot: huge }]))).toThrow(/toolsSnapshot/);
  });
});
