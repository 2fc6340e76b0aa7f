import { describe, expect, it } from 'vitest';
import { inputJsonSchema } from '../../core/json-schema.js';
import { AGENT_TOOLS, META_TOOLS } from '../../features/meta-tools.js';
import { startWorld } from '../support/harness.js';

/**
 * Malformed and hostile input against every HTTP and MCP route, from a seeded generator (same
 * requests every run): no 5xx, no stack trace in any answer, no prototype pollution, and the
 * server still answers afterwards.
 */

const SEED = 0x5eed_2026;
const REQUESTS = 3000;
const CONCURRENCY = 16;
const STACK_TRACE = /\bat \S+ \(|\bat (file:|node:|\/)|node_modules|\n\s+at |\w*Error: .*\n/;

/** mulberry32: a tiny deterministic PRNG. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  return { next, int, pick };
}

const rnd = prng(SEED);

const HOSTILE_STRINGS = [
  '',
  ' ',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '-0',
  'undefined',
  'null',
  'true',
  '__proto__',
  'constructor',
  'prototype',
  '\u0000',
  '\ud800',
  '\udfff\ud800',
  '\u202e\u0007',
  "'; DROP TABLE audit_log; --",
  '../../../../etc/passwd',
  '<script>alert(1)</script>',
  `$${'{'}process.exit(1)}`,
  '%s%s%s%n',
  'github',
  'github_list_repos',
  'github__create_issue',
  'con_00000000000000000000000000',
  'http://127.0.0.1:1/',
  'javascript:alert(1)',
  '😀'.repeat(500),
  'x'.repeat(10_000),
];
const HOSTILE_NUMBERS = [0, -1, 1, 1.5, -0, 2 ** 53 + 1, -(2 ** 63), 1e308, Number.MAX_VALUE, Number.MIN_VALUE, 4294967296];
const HOSTILE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '', 'a.b', '$where'];

function value(depth = 0): unknown {
  switch (rnd.int(depth > 3 ? 4 : 7)) {
    case 0:
      return rnd.pick([null, true, false]);
    case 1:
      return rnd.pick(HOSTILE_NUMBERS);
    case 2:
    case 3:
      return rnd.pick(HOSTILE_STRINGS);
    case 4:
      return Array.from({ length: rnd.int(4) }, () => value(depth + 1));
    default: {
      const obj: Record<string, unknown> = {};
      for (let i = rnd.int(4); i > 0; i--)
        obj[rnd.next() < 0.4 ? rnd.pick(HOSTILE_KEYS) : rnd.pick(HOSTILE_STRINGS).slice(0, 20)] = value(depth + 1);
      return obj;
    }
  }
}

const deepArray = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;
const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
const INVALID_UTF8 = Buffer.concat([
  Buffer.from('{"query":"'),
  Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82, 0xed, 0xa0, 0x80]),
  Buffer.from('"}'),
]);

/** A raw JSON (or not) body, with `field` names the target knows so hostile values reach its validation. */
function body(fields: string[], wrap: (inner: string) => string = (s) => s): string | Buffer {
  const key = () => (fields.length && rnd.next() < 0.8 ? rnd.pick(fields) : rnd.pick(HOSTILE_KEYS));
  switch (rnd.int(16)) {
    case 0:
      return wrap('{"__proto__":{"polluted":1}}');
    case 1:
      return wrap(`{"constructor":{"prototype":{"polluted":1}},"${key()}":{"__proto__":{"polluted":1}}}`);
    case 2:
      return wrap(rnd.next() < 0.5 ? deepArray(10_000) : deepObject(10_000));
    case 3:
      return wrap(`{"${key()}":${rnd.next() < 0.5 ? deepArray(10_000) : deepObject(10_000)}}`);
    case 4:
      return wrap(`{"${key()}":"${'x'.repeat(2 * 1024 * 1024)}"}`);
    case 5:
      return wrap(`{"${key()}":"${'y'.repeat(900 * 1024)}"}`);
    case 6:
      return wrap(`{"${key()}":${rnd.pick(['1e309', '-1e309', '1e-400', '123456789012345678901234567890', '-0', '0.1e1'])}}`);
    case 7:
      return wrap(JSON.stringify(rnd.pick([[], [{}], 'string', 42, null, true])));
    case 8:
      return rnd.next() < 0.5 ? INVALID_UTF8 : Buffer.from(Array.from({ length: 1 + rnd.int(64) }, () => rnd.int(256)));
    case 9:
      return rnd.pick(['{', '{"a":', '{"a":1,}', "{'a':1}", '{"a":undefined}', '{"a":NaN}', '\u0000', ']', '{"a":1}{"b":2}']);
    default: {
      const obj: Record<string, unknown> = {};
      for (const f of fields) if (rnd.next() < 0.6) obj[f] = value();
      if (rnd.next() < 0.3) obj[rnd.pick(HOSTILE_KEYS)] = value();
      return wrap(JSON.stringify(obj));
    }
  }
}

/** Every UTF-8 byte as %XX (a lone surrogate becomes U+FFFD, where encodeURIComponent would throw). */
const percentEncode = (s: string) => Buffer.from(s).toString('hex').replace(/../g, '%$&');

function hostileQuery(names: string[]): string {
  const parts: string[] = [];
  for (const name of names) {
    switch (rnd.int(8)) {
      case 0:
        parts.push(`${name}=${percentEncode(rnd.pick(HOSTILE_STRINGS).slice(0, 2000))}`);
        break;
      case 1:
        parts.push(`${name}[]=1&${name}[]=2`);
        break;
      case 2:
        parts.push(`${name}[__proto__][polluted]=1&__proto__[polluted]=1`);
        break;
      case 3:
        parts.push(`${name}=%ff%fe%c3%28%E0%A4%A`);
        break;
      case 4:
        parts.push(`${name}=${'z'.repeat(6000)}`);
        break;
      case 5:
        parts.push(`${name}=a.b.c&${name}=d`);
        break;
      case 6:
        parts.push(`constructor[prototype][polluted]=1&${name}=x`);
        break;
      default:
        break;
    }
  }
  return parts.join('&');
}

interface FuzzRequest {
  label: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

const CONTENT_TYPES = [
  'application/json',
  'application/json',
  'application/json',
  'text/plain',
  'application/json; charset=utf-16',
  'application/json; charset=bogus',
];

const world = await startWorld({
  // A (dummy) GitHub OAuth client, so connect's deliberate 503 "not configured" is not what the fuzz hits.
  env: {
    RATE_LIMIT_PER_MINUTE: '100000',
    RATE_LIMIT_CALLS_PER_MINUTE: '1000000',
    TENANT_RATE_LIMIT_CALLS_PER_MINUTE: '1000000',
    LOG_LEVEL: 'fatal',
    GITHUB_CLIENT_ID: 'fuzz',
    GITHUB_CLIENT_SECRET: 'fuzz-secret-0123456789',
    // A codec operator (and encoding on), so the fuzz reaches the codec's parsing, not only its 403.
    CODEC_OPERATOR_TENANT: 'ten_fuzz_platform',
    CODEC_OPERATORS: 'ops@fuzz.example',
    CODEC_ALLOW_ENCODE: 'true',
  },
});
const { stack } = world;
const user = await world.user();
const operator = await world.user({ tenantId: 'ten_fuzz_platform', email: 'ops@fuzz.example' });

function generate(): FuzzRequest[] {
  const tools = [...META_TOOLS, ...AGENT_TOOLS];
  const fieldsOf = new Map(tools.map((t) => [t.name, Object.keys((inputJsonSchema(t).properties as object | undefined) ?? {})]));
  const auth = (): Record<string, string> =>
    rnd.next() < 0.9
      ? { authorization: `Bearer ${user.apiKey}` }
      : rnd.pick<Record<string, string>>([{}, { authorization: 'Bearer sb_nope' }, { authorization: 'Basic Og==' }]);
  const out: FuzzRequest[] = [];
  const kinds = ['tool', 'tool', 'tool', 'mcp', 'mcp', 'mcp', 'codec', 'portal', 'get'] as const;
  for (let i = 0; i < REQUESTS; i++) {
    const kind = rnd.pick(kinds);
    if (kind === 'tool') {
      const tool = rnd.next() < 0.95 ? rnd.pick(tools).name : rnd.pick(['nope', '__proto__', 'constructor', '%E0%A4%A', 'toString']);
      out.push({
        label: `tool ${tool}`,
        method: 'POST',
        path: `/v1/tools/${tool}`,
        headers: { ...auth(), 'content-type': rnd.pick(CONTENT_TYPES) },
        body: body(fieldsOf.get(tool) ?? []),
      });
    } else if (kind === 'mcp') {
      const agent = rnd.next() < 0.3;
      const list = agent ? AGENT_TOOLS : META_TOOLS;
      const tool = rnd.next() < 0.9 ? rnd.pick(list).name : rnd.pick(HOSTILE_STRINGS).slice(0, 30);
      const id = JSON.stringify(rnd.pick([1, 'x', null, { a: 1 }, [], 1e308, true]));
      const method =
        rnd.next() < 0.8 ? 'tools/call' : rnd.pick(['tools/list', 'initialize', '__proto__', 'constructor', 'resources/read', '', 'ping']);
      const envelope = (params: string) =>
        `{"jsonrpc":${rnd.next() < 0.9 ? '"2.0"' : '"1.0"'},"id":${id},"method":${JSON.stringify(method)},"params":${params}}`;
      // A third speak MCP 2026-07-28 (served by the v2 SDK): the per-request envelope, mostly with its headers.
      const modern = rnd.next() < 0.35;
      const capabilities = rnd.pick([
        '{}',
        '{"elicitation":{"url":{}}}',
        '{"extensions":{"io.modelcontextprotocol/tasks":{}}}',
        '[]',
        'null',
      ]);
      const meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"fuzz","version":"1"},"io.modelcontextprotocol/clientCapabilities":${capabilities}}`;
      const params = (args: string) =>
        rnd.next() < 0.85 ? `{"name":${JSON.stringify(tool)},"arguments":${args}${modern ? meta : ''}}` : args;
      let raw = body(fieldsOf.get(tool) ?? [], (args) => envelope(params(args)));
      if (rnd.next() < 0.05 && typeof raw === 'string') raw = `[${raw},${raw}]`;
      out.push({
        label: `mcp${agent ? '/agent' : ''}${modern ? ' (2026-07-28)' : ''} ${method} ${tool}`,
        method: 'POST',
        path: agent ? '/mcp/agent' : '/mcp',
        headers: {
          ...auth(),
          'content-type': rnd.pick(CONTENT_TYPES),
          accept: rnd.next() < 0.9 ? 'application/json, text/event-stream' : rnd.pick(['*/*', 'text/html']),
          ...(modern &&
            rnd.next() < 0.8 && {
              'mcp-protocol-version': '2026-07-28',
              'mcp-method': method,
              'mcp-name': tool.replace(/[^\x21-\x7e]/g, ''),
            }),
        },
        body: raw,
      });
    } else if (kind === 'codec') {
      out.push({
        label: 'codec decode',
        method: 'POST',
        path: rnd.next() < 0.8 ? '/codec/decode' : '/codec/encode',
        headers: { authorization: `Bearer ${rnd.next() < 0.8 ? operator.apiKey : user.apiKey}`, 'content-type': rnd.pick(CONTENT_TYPES) },
        body:
          rnd.next() < 0.5
            ? body(['payloads'])
            : JSON.stringify({ payloads: Array.from({ length: rnd.int(3) }, () => ({ metadata: value(), data: value() })) }),
      });
    } else if (kind === 'portal') {
      const form = rnd.next() < 0.7;
      out.push({
        label: 'portal form',
        method: 'POST',
        path: rnd.pick(['/portal/login-link', '/portal/login-link', '/portal/logout']),
        headers: {
          'content-type': form ? 'application/x-www-form-urlencoded' : rnd.pick(CONTENT_TYPES),
          cookie: rnd.pick(['', 'sb_portal=%ff', 'sb_portal=x.y.z']),
        },
        body: form ? hostileQuery(['token', 'next', 'token']) : body(['token', 'next']),
      });
    } else {
      const route = rnd.pick([
        ['/connect/github', ['t']],
        ['/connect/x', ['t']],
        ['/connect/%E0%A4%A', ['t']],
        ['/connect/__proto__', ['t']],
        ['/oauth/callback', ['state', 'code', 'error', 'error_description']],
        ['/oauth/callback/AAAAAAAAAAAAAAAAAAAAAA', ['state', 'code', 'iss', 'error']],
        ['/oauth/callback/%E0%A4%A', ['state', 'code']],
        ['/portal/login-link', ['token', 'next']],
        ['/portal/login', ['next']],
        ['/portal/oidc/callback', ['state', 'code']],
        ['/portal', ['x']],
        ['/readyz', ['x']],
      ] as const);
      out.push({
        label: `get ${route[0]}`,
        method: 'GET',
        path: `${route[0]}?${hostileQuery([...route[1]])}`,
        headers: { accept: rnd.pick(['text/html', 'application/json', '*/*']) },
      });
    }
  }
  return out;
}

describe('malformed and hostile input', () => {
  it('a seeded fuzz of every route: no 5xx, no stack trace, no pollution, still healthy', async () => {
    const requests = generate();
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let resets = 0;
    let resent = 0;
    const started = Date.now();
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const r = requests[next++]!;
        const send = () =>
          fetch(`${stack.baseUrl}${r.path}`, {
            method: r.method,
            headers: r.headers,
            body: typeof r.body === 'string' || r.body === undefined ? r.body : new Uint8Array(r.body),
            redirect: 'manual',
            signal: AbortSignal.timeout(20_000),
          });
        try {
          // A kept-alive connection the server closed (after an early answer to an earlier request on it)
          // just as the client reused it is the transport's race, not this request's answer: it is sent
          // once more, on a new connection; failing again is a failure.
          const res = await send().catch((err: Error & { cause?: { code?: string } }) => {
            if (err.cause?.code !== 'UND_ERR_SOCKET') throw err;
            resent++;
            return send();
          });
          const text = await res.text();
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status >= 500) failures.push(`${r.label}: ${res.status} ${text.slice(0, 300)}`);
          else if (STACK_TRACE.test(text)) failures.push(`${r.label}: stack trace in ${res.status} ${text.slice(0, 500)}`);
        } catch (err) {
          const cause = (err as { cause?: { code?: string; message?: string } }).cause;
          // A server may answer 413/400 and close before an oversized upload is fully sent; that reset is
          // the client's to see, not a crash (the server answering /healthz afterwards is checked below).
          if ((r.body?.length ?? 0) > 16 * 1024 && (err as Error).name !== 'TimeoutError') {
            resets++;
            continue;
          }
          failures.push(
            `${r.label}: ${(err as Error).message} ${cause?.code ?? ''} ${cause?.message ?? ''} (${r.headers['content-type']}, ${r.body?.length} bytes)`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const ms = Date.now() - started;
    console.log(
      `[fuzz] ${requests.length} requests in ${ms} ms (${resets} oversized uploads reset, ${resent} sent again after a reused connection closed); statuses`,
      Object.fromEntries([...statuses].sort()),
    );
    expect(failures.slice(0, 20)).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    expect((await fetch(`${stack.baseUrl}/healthz`)).status).toBe(200);
    expect((await user.call('list_integrations')).status).toBe(200);
  }, 120_000);
});
