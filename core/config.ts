import { createPrivateKey } from 'node:crypto';
import { z } from 'zod';
import { parseAllowedHosts } from './network-policy.js';
import { isLoopbackHost } from './own-origins.js';
import { encryptionKeysProblem, isPublishedSecret, signingSecretProblem } from './secret-checks.js';

/**
 * Every environment variable Switchboard reads, in one schema. Values arrive as strings; the
 * schema coerces them and applies the defaults. Provider-specific variables (client id/secret
 * and URL overrides) are added by `providerEnvSchema` from each provider's manifest, so the
 * list stays complete as providers are added.
 */

const port = z.coerce.number().int().min(1).max(65535);
const positiveInt = z.coerce.number().int().positive();
const url = z.url({ protocol: /^https?$/ });
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v));

/** `id:base64key,id:base64key` — each key 32 bytes (AES-256). */
const keyring = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (value === undefined || value === '') return undefined;
    const keys = new Map<string, Buffer>();
    for (const part of value
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const sep = part.indexOf(':');
      const id = part.slice(0, sep);
      const key = Buffer.from(part.slice(sep + 1), 'base64');
      if (sep <= 0 || !/^[A-Za-z0-9_-]{1,32}$/.test(id)) {
        ctx.addIssue({ code: 'custom', message: `expected "id:base64key" entries, got "${part.slice(0, 12)}…"` });
        return z.NEVER;
      }
      if (key.length !== 32) {
        ctx.addIssue({ code: 'custom', message: `key "${id}" must be 32 bytes of base64 (got ${key.length} bytes)` });
        return z.NEVER;
      }
      keys.set(id, key);
    }
    if (keys.size === 0) {
      ctx.addIssue({ code: 'custom', message: 'expected at least one "id:base64key" entry' });
      return z.NEVER;
    }
    return keys;
  });

/** A base64url PKCS#8 Ed25519 private key, as `admin create-source-key` prints it. */
function isEd25519PrivateKey(value: string): boolean {
  if (!/^[A-Za-z0-9_-]{40,200}$/.test(value)) return false;
  try {
    return createPrivateKey({ key: Buffer.from(value, 'base64url'), format: 'der', type: 'pkcs8' }).asymmetricKeyType === 'ed25519';
  } catch {
    return false;
  }
}

/**
 * Other Switchboard instances this one answers for too: `[{"name", "url", "apiKey", "assertionKey",
 * "tenants"}]`. apiKey and assertionKey are what the remote's `admin create-source-key` printed;
 * tenants names the local tenants whose users may use the source (required: no source is open to
 * every tenant by default).
 */
const sources = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (!value) return [];
    try {
      return z
        .array(
          z.strictObject({
            name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,30}$/, 'a source name is lower-case letters, digits and dashes'),
            url: z.url({ protocol: /^https?$/ }),
            apiKey: z.string().min(1),
            assertionKey: z.string().refine(isEd25519PrivateKey, 'expected the assertionKey printed by admin create-source-key'),
            tenants: z.array(z.string().min(1)).min(1, 'name at least one local tenant that may use this source'),
          }),
        )
        .parse(JSON.parse(value));
    } catch (err) {
      ctx.addIssue({
        code: 'custom',
        message: `expected a JSON array of {name, url, apiKey, assertionKey, tenants}: ${(err as Error).message.slice(0, 300)}`,
      });
      return z.NEVER;
    }
  });

/** `host,host:port,[::1]:8080`: a host alone stands for every port. */
const hostList = z
  .string()
  .default('')
  .transform((value, ctx) => {
    try {
      return parseAllowedHosts(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  });

export const baseEnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port.default(3000),
  PUBLIC_BASE_URL: url.optional(),
  /**
   * Host names (or host:port) the HTTP server answers for besides PUBLIC_BASE_URL's, e.g. an
   * internal name a proxy forwards. Every other Host is refused (DNS rebinding).
   */
  ALLOWED_HOSTS: hostList,
  /** Most TCP connections the HTTP server holds at once (each wait_for_connection holds one). */
  HTTP_MAX_CONNECTIONS: positiveInt.default(10_000),
  /** wait_for_connection and wait_for_approval calls one user has waiting at once in one server process (features/wait-slots.ts). */
  WAITS_MAX_PER_USER: positiveInt.default(20),
  /** …and one tenant, all its users together, so that one tenant cannot hold every connection. */
  WAITS_MAX_PER_TENANT: positiveInt.default(1000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `1` logs each search result's score parts (text, operation, integration): for operators tuning search. */
  SEARCH_DEBUG: z
    .enum(['0', '1'])
    .default('0')
    .transform((v) => v === '1'),
  SWITCHBOARD_DATA_DIR: z.string().min(1).default('.data'),

  DATABASE_URL: url
    .or(z.string().regex(/^postgres(ql)?:\/\//, 'expected a postgres:// URL'))
    .default('postgres://postgres@127.0.0.1:5432/switchboard'),
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'expected a lower-case SQL identifier')
    .default('public'),
  DATABASE_POOL_MAX: positiveInt.default(10),

  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('switchboard'),
  TEMPORAL_CLI: optionalString,
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),

  ENCRYPTION_KEYS: keyring,
  ENCRYPTION_ACTIVE_KEY_ID: optionalString,
  PORTAL_SIGNING_SECRET: z.string().min(32, 'expected at least 32 characters').optional(),

  PORTAL_OIDC_ISSUER: url.optional(),
  PORTAL_OIDC_CLIENT_ID: optionalString,
  PORTAL_OIDC_CLIENT_SECRET: optionalString,

  CONNECTION_TTL_SEC: positiveInt.default(3600),
  /**
   * Open (PENDING) connection attempts one user holds at once, each a workflow living up to its
   * TTL. A new one past it expires the oldest nobody opened in a browser; when all are opened, 429.
   */
  CONNECT_PENDING_MAX_PER_USER: positiveInt.default(20),
  CONNECTIONS_TOOL_TIMEOUT_MS: positiveInt.default(30000),
  CONNECTIONS_TOOL_RESULT_MAX_BYTES: positiveInt.default(32768),
  /** Bytes read from one provider response before Switchboard stops reading (a huge or endless body). */
  CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES: positiveInt.default(10 * 1024 * 1024),
  /** Calls in flight at once per account, across every worker process; more wait their turn. */
  CONNECTIONS_ACCOUNT_MAX_CONCURRENCY: positiveInt.default(8),
  RATE_LIMIT_PER_MINUTE: positiveInt.default(600),
  /** Tool calls per minute per API key: a batch of 500 calls counts 500 (shared by every server process). */
  RATE_LIMIT_CALLS_PER_MINUTE: positiveInt.default(600),
  /** Tool calls per minute per tenant, all its keys together, so one tenant cannot starve the others. */
  TENANT_RATE_LIMIT_CALLS_PER_MINUTE: positiveInt.default(3000),
  /**
   * Days kept of audit rows, finished connection attempts, used or expired login links and
   * idempotency records; a Temporal schedule prunes older ones daily. Keep it at least the
   * namespace's workflow retention (the worker keeps idempotency records that long regardless).
   */
  RETENTION_DAYS: positiveInt.default(30),
  /**
   * Tool results larger than this (bytes of JSON) are kept sealed in Postgres and the tool batch's
   * workflow carries a reference (core/stored-results.ts); a large batch lowers it further to stay in
   * budget. At most 1 MiB: a batch's inline results then still fit Temporal's payload limits.
   */
  RESULT_INLINE_MAX_BYTES: positiveInt.max(1024 * 1024).default(2048),
  /**
   * Days a stored result stays readable (by the server answering its batch, by read_result, by the
   * codec endpoint); default RETENTION_DAYS. Keep it at least the namespace's workflow retention:
   * a batch collected later by its requestId needs its results.
   */
  RESULT_RETENTION_DAYS: positiveInt.optional(),
  /**
   * Bytes of stored results one user holds together; past it their oldest go first (each is kept
   * RESULT_RETENTION_DAYS, and a caller can make one per tool call).
   */
  STORED_RESULTS_MAX_BYTES_PER_USER: positiveInt.default(1024 * 1024 * 1024),

  /**
   * `on`: `npm start` serves the demo integration (demo/): a local OAuth authorization server and a
   * small MCP server behind it, so the first session needs no account anywhere. Development only:
   * refused when NODE_ENV=production. `npm start` turns it on unless NODE_ENV is production.
   */
  DEMO_INTEGRATION: z
    .enum(['on', 'off'])
    .default('off')
    .transform((v) => v === 'on'),
  /** The demo's one port on 127.0.0.1 (authorization server and MCP server share it). */
  DEMO_PORT: port.default(3100),

  /** Hosts (or host:port) the built-in browser may reach even at loopback or private addresses. */
  BROWSER_ALLOWED_HOSTS: hostList,

  /**
   * Remote MCP servers every tenant gets as integrations: a JSON array (or the path of a JSON file
   * holding one) of catalog names and entries; validated in providers/remote-mcp/config.ts.
   */
  UPSTREAM_MCP_SERVERS: optionalString,
  /**
   * REST APIs from OpenAPI documents every tenant gets as integrations: a JSON array (or the path
   * of a JSON file holding one) of entries; validated in providers/openapi/config.ts.
   */
  OPENAPI_INTEGRATIONS: optionalString,
  /** Hosts (or host:port) upstream MCP servers may be at even on loopback or private addresses. */
  UPSTREAM_MCP_ALLOWED_HOSTS: hostList,
  /** The MCP Registry administrators search for remote servers (providers/remote-mcp/mcp-registry.ts). */
  MCP_REGISTRY_URL: z
    .url({ protocol: /^https?$/, error: 'expected the http(s) URL of an MCP Registry' })
    .default('https://registry.modelcontextprotocol.io'),
  /** Seconds an upstream server's tool list is kept before it is listed again. */
  UPSTREAM_MCP_TOOLS_TTL_SEC: positiveInt.default(300),
  /** Seconds an upstream server's MCP session (one per credential and process) stays open unused. */
  UPSTREAM_MCP_SESSION_IDLE_SEC: positiveInt.default(300),
  BROWSER_PAGE_TIMEOUT_MS: positiveInt.default(15000),
  BROWSER_MAX_PAGE_BYTES: positiveInt.default(5 * 1024 * 1024),

  /** Browser origins of Temporal UI allowed to call the codec endpoint (CORS). */
  TEMPORAL_UI_ORIGINS: optionalString,
  /** `operator`: the codec endpoint needs a codec operator's API key or portal session; `none`: open (local dev). */
  CODEC_AUTH: z.enum(['operator', 'none']).default('operator'),
  /**
   * The platform tenant whose users may be codec operators: the operator's own staff, never a
   * customer's tenant. Codec access is set here, in the operator's environment, never by a role.
   */
  CODEC_OPERATOR_TENANT: optionalString,
  /** Emails (comma-separated) of the CODEC_OPERATOR_TENANT users who may use the codec endpoint. */
  CODEC_OPERATORS: z
    .string()
    .default('')
    .transform(
      (v) =>
        new Set(
          v
            .split(',')
            .map((e) => e.trim().toLowerCase())
            .filter(Boolean),
        ),
    ),
  /** `/codec/encode` seals payloads Switchboard's worker then trusts as its own: off unless `true`. */
  CODEC_ALLOW_ENCODE: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** Remote Switchboard instances merged into connections_search / connections_execute. */
  SWITCHBOARD_SOURCES: sources,
  /** This instance's name as a source, when SWITCHBOARD_SOURCES is set. */
  SOURCE_NAME: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,30}$/)
    .default('local'),
  /** How long a search waits for a remote source before listing it as unavailable. */
  SOURCE_TIMEOUT_MS: positiveInt.default(5000),
  /**
   * The operator port: /metrics, /healthz and /readyz of this process (HTTP server, worker or
   * both), on METRICS_HOST (loopback unless the operator opens it). Unset: no operator port.
   */
  METRICS_PORT: port.optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * Running workflows a worker keeps in memory between their tasks. Parked connection waits
   * beyond it are evicted and replayed from history when their callback comes, so a worker's
   * memory stops growing here however many waits are pending. Keep it above the number of tool
   * batches in flight at once.
   */
  WORKER_MAX_CACHED_WORKFLOWS: positiveInt.default(1000),

  CHROMIUM_PATH: optionalString,
  /** `uid:gid` chromium runs as when Switchboard runs as root (chromium is never root; its sandbox needs that). */
  CHROMIUM_RUN_AS: z
    .string()
    .regex(/^\d+:\d+$/, 'expected uid:gid, e.g. 65534:65534')
    // Root (uid or gid 0) would undo the point: chromium as root, without its sandbox.
    .refine((v) => v.split(':').every((n) => Number(n) !== 0), 'must not be root (uid or gid 0); e.g. 65534:65534')
    .default('65534:65534')
    .transform((v) => {
      const [uid, gid] = v.split(':').map(Number);
      return { uid, gid };
    }),
  /** `auto`: chromium's sandbox on, or off with a warning where the kernel refuses it; `required`: refuse to start without. */
  CHROMIUM_SANDBOX: z.enum(['auto', 'required']).default('auto'),
  /** Pages the browser built-in opens at once per worker, shared fairly between tenants. */
  BROWSER_CONCURRENCY: positiveInt.default(4),
  COOKIE_CAPTURE_TIMEOUT_SEC: positiveInt.default(600),
  /** Capture browsers (contexts) one server process runs at once, all tenants together. */
  COOKIE_CAPTURE_MAX_SESSIONS: positiveInt.default(20),
  /** …of which one tenant holds at most this many, and one user at most COOKIE_CAPTURE_MAX_PER_USER. */
  COOKIE_CAPTURE_MAX_PER_TENANT: positiveInt.default(5),
  COOKIE_CAPTURE_MAX_PER_USER: positiveInt.default(2),
  /** Live-view frames (screenshots) a capture session takes per second at most; requests between get the last one. */
  COOKIE_CAPTURE_FRAMES_PER_SEC: positiveInt.default(4),
  /** Notes (the jots built-in) one user keeps at most, and the bytes of text they hold together. */
  JOTS_MAX_NOTES_PER_USER: positiveInt.default(1000),
  JOTS_MAX_BYTES_PER_USER: positiveInt.default(10 * 1024 * 1024),
  COOKIE_CHECK_TTL_SEC: z.coerce.number().int().min(0).default(60),
});

type BaseEnv = z.infer<typeof baseEnvSchema>;

/**
 * Variables a production deployment must set: the defaults only suit a laptop, and the secrets
 * have none (`npm start` generates local ones into the data directory).
 */
export const REQUIRED_IN_PRODUCTION = [
  'NODE_ENV',
  'DATABASE_URL',
  'TEMPORAL_ADDRESS',
  'PUBLIC_BASE_URL',
  'ENCRYPTION_KEYS',
  'PORTAL_SIGNING_SECRET',
] as const;

/** What a provider manifest contributes to the environment: its prefix and overridable URLs. */
export interface ProviderEnvSpec {
  name: string;
  envPrefix: string;
  /** Names of the URL settings this provider lets the operator override, e.g. `API_BASE_URL`. */
  urlSettings: readonly string[];
  needsClientCredentials: boolean;
}

export interface ProviderEnv {
  clientId?: string;
  clientSecret?: string;
  urls: Record<string, string>;
}

export interface Config extends Omit<BaseEnv, 'PUBLIC_BASE_URL'> {
  PUBLIC_BASE_URL: string;
  providers: Record<string, ProviderEnv>;
}

export class ConfigError extends Error {
  readonly code = 'invalid_config';
  constructor(readonly problems: { variable: string; message: string }[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p.variable}: ${p.message}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

function providerEnvSchema(specs: readonly ProviderEnvSpec[]) {
  const shape: Record<string, z.ZodType> = {};
  for (const spec of specs) {
    shape[`${spec.envPrefix}_CLIENT_ID`] = optionalString;
    shape[`${spec.envPrefix}_CLIENT_SECRET`] = optionalString;
    for (const setting of spec.urlSettings) shape[`${spec.envPrefix}_${setting}`] = url.optional();
  }
  return z.object(shape);
}

/** Parses `env` (usually `process.env`); throws a ConfigError naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined>, providers: readonly ProviderEnvSpec[] = []): Config {
  const schema = baseEnvSchema.and(providerEnvSchema(providers));
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => ({
        variable: String(issue.path[0] ?? '(environment)'),
        message: issue.message,
      })),
    );
  }
  const values = parsed.data as BaseEnv & Record<string, string | undefined>;
  const problems: { variable: string; message: string }[] = [];
  if (values.ENCRYPTION_KEYS) {
    const active = values.ENCRYPTION_ACTIVE_KEY_ID;
    if (active !== undefined && !values.ENCRYPTION_KEYS.has(active)) {
      problems.push({
        variable: 'ENCRYPTION_ACTIVE_KEY_ID',
        message: `"${active}" is not one of the ids in ENCRYPTION_KEYS`,
      });
    }
  } else if (values.ENCRYPTION_ACTIVE_KEY_ID) {
    problems.push({ variable: 'ENCRYPTION_KEYS', message: 'required when ENCRYPTION_ACTIVE_KEY_ID is set' });
  }
  if (values.CODEC_OPERATORS.size > 0 && !values.CODEC_OPERATOR_TENANT) {
    problems.push({
      variable: 'CODEC_OPERATOR_TENANT',
      message: 'required when CODEC_OPERATORS is set (the platform tenant of those users)',
    });
  }
  const oidc = [values.PORTAL_OIDC_ISSUER, values.PORTAL_OIDC_CLIENT_ID, values.PORTAL_OIDC_CLIENT_SECRET];
  if (oidc.some(Boolean) && !oidc.every(Boolean)) {
    problems.push({
      variable: 'PORTAL_OIDC_ISSUER',
      message: 'PORTAL_OIDC_ISSUER, PORTAL_OIDC_CLIENT_ID and PORTAL_OIDC_CLIENT_SECRET go together',
    });
  }
  if (values.NODE_ENV !== 'production' && isPublishedSecret(values.PORTAL_SIGNING_SECRET)) {
    problems.push({
      variable: 'PORTAL_SIGNING_SECRET',
      message:
        'is the example value from docker-compose.yml, public in the repository; set 32+ random characters (`openssl rand -base64 32`)',
    });
  }
  if (values.NODE_ENV === 'production') {
    // Production never runs on a missing, example or guessable secret (docs/reference/configuration.md).
    const signing = signingSecretProblem(values.PORTAL_SIGNING_SECRET);
    if (signing) problems.push({ variable: 'PORTAL_SIGNING_SECRET', message: signing });
    const keys = encryptionKeysProblem(env.ENCRYPTION_KEYS, values.ENCRYPTION_KEYS);
    if (keys) problems.push({ variable: 'ENCRYPTION_KEYS', message: keys });
  }
  if (values.NODE_ENV === 'production' && values.DEMO_INTEGRATION) {
    problems.push({
      variable: 'DEMO_INTEGRATION',
      message:
        '"on" is refused in production: the demo integration is a local authorization server that signs anyone in, for trying Switchboard with `npm start`. Unset it (or set "off")',
    });
  }
  if (values.CODEC_AUTH === 'none' && !isLoopbackHost(values.HOST)) {
    problems.push({
      variable: 'CODEC_AUTH',
      message: `"none" (the codec endpoint without credentials) is only allowed when HOST is loopback (127.0.0.1, ::1 or localhost), not "${values.HOST}"`,
    });
  }
  if (env.WORKER_METRICS_PORT) {
    problems.push({ variable: 'WORKER_METRICS_PORT', message: 'renamed METRICS_PORT (one operator port per process, worker or server)' });
  }
  if (problems.length) throw new ConfigError(problems);

  const providerEnv: Record<string, ProviderEnv> = {};
  for (const spec of providers) {
    const urls: Record<string, string> = {};
    for (const setting of spec.urlSettings) {
      const v = values[`${spec.envPrefix}_${setting}`];
      if (v) urls[setting] = v;
    }
    providerEnv[spec.name] = {
      clientId: values[`${spec.envPrefix}_CLIENT_ID`],
      clientSecret: values[`${spec.envPrefix}_CLIENT_SECRET`],
      urls,
    };
  }
  const { PUBLIC_BASE_URL = `http://localhost:${values.PORT}`, ...rest } = values;
  const base = Object.fromEntries(Object.keys(baseEnvSchema.shape).map((k) => [k, (rest as Record<string, unknown>)[k]]));
  return { ...(base as Omit<BaseEnv, 'PUBLIC_BASE_URL'>), PUBLIC_BASE_URL: PUBLIC_BASE_URL.replace(/\/$/, ''), providers: providerEnv };
}
