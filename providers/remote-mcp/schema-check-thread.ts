/**
 * The worker thread that checks arguments against upstream input schemas (schema-checker.ts starts
 * it). ajv compiles a schema into code, and that compile is neither linear nor small: measured on
 * this project's machine, a 64 KiB schema of 2,500 flat properties overflows ajv's stack after
 * 0.6 s, 64 KiB of `anyOf` branches takes 7 s, and a 20 KiB definition `$ref`'d from a thousand
 * properties had not finished after 3 minutes and 4 GB of memory. So compiling, and the check
 * itself, run here, off every tenant's event loop, under a deadline and a memory limit the main
 * thread enforces by ending this thread.
 *
 * Self-contained on purpose (only packages are imported): the thread loads this file alone, with
 * whatever TypeScript loader the process has (tsx, or Node's own type stripping).
 */
import { parentPort } from 'node:worker_threads';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/** A request: check `value` against the schema whose hash is `key` (its JSON is sent along). */
export interface CheckRequest {
  id: number;
  key: string;
  schema: Record<string, unknown>;
  value: unknown;
}
/** Phases as they end (the main thread's deadlines follow them); `compiled`: not found in this thread's cache. */
export type CheckReply =
  | { id: number; phase: 'started' | 'compiled' }
  | { id: number; phase: 'done'; problem?: string; compiled: boolean; uncompilable?: string };

/** Compiled validators kept per thread, least recently used dropped first. */
const CACHED_VALIDATORS = 200;

/**
 * Formats checked here: the ones with a short, fixed shape. Each is checked only up to a length
 * no valid value reaches (longer is invalid without running anything), so no expression ever runs
 * on a long string. Every other format (url, uri, uri-reference, iri, uri-template, email,
 * hostname, regex, json-pointer, byte, …) is left to the upstream: ajv-formats' expressions for
 * them backtrack (`url` on "http://" and 64,000 colons: 6 s) and their valid values can be long.
 */
const CHECKED_FORMATS: Record<string, { maxChars: number; type?: 'number' }> = {
  date: { maxChars: 10 },
  time: { maxChars: 64 },
  'date-time': { maxChars: 64 },
  'iso-time': { maxChars: 64 },
  'iso-date-time': { maxChars: 64 },
  duration: { maxChars: 64 },
  uuid: { maxChars: 45 },
  ipv4: { maxChars: 15 },
  ipv6: { maxChars: 45 },
  int32: { maxChars: 0, type: 'number' },
  int64: { maxChars: 0, type: 'number' },
  float: { maxChars: 0, type: 'number' },
  double: { maxChars: 0, type: 'number' },
};

// ajv-formats is CommonJS with a default export: under ESM the function may arrive wrapped once.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as AddFormats;

/** The formats as ajv takes them: checked ones bounded by length, the rest always valid. */
function upstreamFormats(): Record<string, true | { type: 'string' | 'number'; validate: (v: never) => boolean }> {
  const full = new Ajv({ logger: false });
  addFormats(full);
  const formats: ReturnType<typeof upstreamFormats> = {};
  for (const name of Object.keys(full.formats)) {
    const limit = CHECKED_FORMATS[name];
    // Known names left to the upstream: no "unknown format" refusal, nothing run.
    if (!limit) {
      formats[name] = true;
      continue;
    }
    const format = full.formats[name] as RegExp | ((s: string) => boolean) | { validate: RegExp | ((s: string) => boolean) };
    const check = typeof format === 'object' && 'validate' in format ? format.validate : format;
    const test = check instanceof RegExp ? (s: string) => check.test(s) : (check as (v: unknown) => boolean);
    formats[name] =
      limit.type === 'number'
        ? { type: 'number', validate: test as unknown as (n: number) => boolean }
        : { type: 'string', validate: (s: string) => s.length <= limit.maxChars && test(s) };
  }
  return formats;
}
const FORMATS = upstreamFormats();

/**
 * ajv set up to stop at the first error (no error per item and branch), with only the formats
 * above. `useDefaults`: a property the schema gives a `default` counts as given when it is left out
 * (Playwright MCP requires `level` and defaults it), as the server itself fills it in. The check runs
 * on this thread's copy of the arguments, so what is sent is what the agent sent.
 */
function upstreamAjv(): Ajv {
  return new Ajv({
    strict: false,
    useDefaults: true,
    validateFormats: true,
    validateSchema: false,
    allErrors: false,
    logger: false,
    formats: FORMATS as never,
  });
}

/**
 * The schema checked: without `pattern` and `patternProperties`, whose regular expressions come
 * from the upstream (a catastrophic backtracking pattern), and without `uniqueItems`, which ajv
 * checks by comparing every item with every other. The server still checks them.
 */
function withoutUnboundedKeywords(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUnboundedKeywords);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if ((key === 'pattern' && typeof child === 'string') || key === 'patternProperties') continue;
    if (key === 'uniqueItems' && typeof child === 'boolean') continue;
    out[key] = withoutUnboundedKeywords(child);
  }
  return out;
}

const validators = new Map<string, ValidateFunction | { uncompilable: string }>();

function validatorFor(request: CheckRequest): { validate: ValidateFunction | { uncompilable: string }; compiled: boolean } {
  const known = validators.get(request.key);
  if (known) {
    validators.delete(request.key);
    validators.set(request.key, known);
    return { validate: known, compiled: false };
  }
  let validate: ValidateFunction | { uncompilable: string };
  try {
    // One ajv per schema: a compiled schema stays in its ajv's cache, which is never emptied.
    validate = upstreamAjv().compile(withoutUnboundedKeywords(request.schema) as Record<string, unknown>);
  } catch (err) {
    validate = { uncompilable: (err as Error).message.slice(0, 80) };
  }
  validators.set(request.key, validate);
  if (validators.size > CACHED_VALIDATORS) validators.delete(validators.keys().next().value as string);
  return { validate, compiled: true };
}

function answer(request: CheckRequest): CheckReply {
  parentPort!.postMessage({ id: request.id, phase: 'started' } satisfies CheckReply);
  const { validate, compiled } = validatorFor(request);
  if ('uncompilable' in validate) return { id: request.id, phase: 'done', compiled, uncompilable: validate.uncompilable };
  parentPort!.postMessage({ id: request.id, phase: 'compiled' } satisfies CheckReply);
  if (validate(request.value)) return { id: request.id, phase: 'done', compiled };
  const [first] = validate.errors ?? [];
  const problem = first ? `data${first.instancePath} ${first.message ?? 'is invalid'}` : 'invalid';
  return { id: request.id, phase: 'done', compiled, problem };
}

// Warm: the first compile of a thread is several times slower than the next, and it is no schema's to pay for.
upstreamAjv().compile({ type: 'object', properties: { a: { type: 'string', format: 'date' } } });
parentPort?.on('message', (request: CheckRequest) => parentPort!.postMessage(answer(request)));
