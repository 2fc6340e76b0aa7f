import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { ConfigError, type ProviderEnvSpec } from '../../core/config.js';
import { duplicateNames, readConfigList } from '../../core/config-list.js';
import { type OpenApiEntry, openapiConfigSchema, openapiEntrySchema } from '../../core/openapi-entry.js';
import { describeIssues } from '../../core/upstream-entry.js';
import type { Provider, ToolLogger } from '../sdk/index.js';
import { DOCUMENT_LIMITS, type OpenApiDocument, OpenApiError, parseDocument } from './document.js';
import { envPrefixOf, type OpenApiProviderOptions, openapiProvider } from './provider.js';

const VARIABLE = 'OPENAPI_INTEGRATIONS';

const fail = (message: string): never => {
  throw new ConfigError([{ variable: VARIABLE, message }]);
};

/**
 * OPENAPI_INTEGRATIONS: a JSON array of entries (core/openapi-entry.ts), or the path of a JSON
 * file holding one. Only the entries' shape is checked here; their documents are read by
 * openapiProviders. Throws a ConfigError naming the place, e.g. `[0].auth.name: …`.
 */
export function parseOpenApiIntegrations(value: string | undefined): OpenApiEntry[] {
  const { items, where } = readConfigList(VARIABLE, value, openapiConfigSchema);
  const entries: OpenApiEntry[] = [];
  const problems: string[] = [];
  items.forEach((item, index) => {
    const parsed = openapiEntrySchema.safeParse(item);
    if (parsed.success) entries.push(parsed.data);
    else problems.push(...describeIssues(parsed.error, `[${index}]`));
  });
  problems.push(...duplicateNames(entries));
  if (problems.length) fail(`${where}${problems.join('; ')}`);
  return entries;
}

/** How an entry's accounts are connected, as its provider's manifest says: a bearer token is entered like a key. */
export function openapiAuthMode(entry: OpenApiEntry): 'none' | 'apikey' | 'oauth2' {
  return entry.auth.type === 'bearer' ? 'apikey' : entry.auth.type;
}

/** What the entries add to the environment: each OAuth entry's `<PREFIX>_CLIENT_ID`/`_SECRET` and endpoint overrides. */
export function openapiEnvSpecs(value: string | undefined): ProviderEnvSpec[] {
  return parseOpenApiIntegrations(value).map((entry) => ({
    name: entry.name,
    envPrefix: envPrefixOf(entry),
    // The base URL is the entry's (or the document's): no <PREFIX>_API_BASE_URL, which for
    // GitHub's app would be the hand-written provider's.
    urlSettings: ['AUTHORIZE_URL', 'TOKEN_URL', 'REVOKE_URL'],
    needsClientCredentials: entry.auth.type === 'oauth2',
  }));
}

/**
 * The file a `document` names: a path (absolute, or `./`/`../` from the working directory) or a
 * package-relative path resolved as Node resolves modules (from the working directory, then from
 * Switchboard's own packages).
 */
export function documentPath(document: string, cwd = process.cwd()): string {
  if (isAbsolute(document) || document.startsWith('./') || document.startsWith('../')) return resolve(cwd, document);
  for (const from of [join(cwd, 'package.json'), import.meta.url]) {
    try {
      return createRequire(from).resolve(document);
    } catch {
      // next
    }
  }
  throw new OpenApiError('', `"${document.slice(0, 200)}" is neither a file path (absolute, ./ or ../) nor a file of an installed package`);
}

/** Parsed documents by file, size and modification time: the server and the config check read a document once. */
const parsedDocuments = new Map<string, OpenApiDocument>();

export function loadDocumentFile(path: string): OpenApiDocument {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(path);
  } catch (err) {
    throw new OpenApiError('', `${path} cannot be read (${(err as { code?: string }).code ?? 'unreadable'})`);
  }
  if (stat.size > DOCUMENT_LIMITS.chars) throw new OpenApiError('', `${path} is larger than ${DOCUMENT_LIMITS.chars} bytes`);
  const key = `${path}\u0000${stat.size}\u0000${stat.mtimeMs}`;
  const known = parsedDocuments.get(key);
  if (known) return known;
  const doc = parseDocument(readFileSync(path, 'utf8'));
  parsedDocuments.set(key, doc);
  if (parsedDocuments.size > 20) parsedDocuments.delete(parsedDocuments.keys().next().value as string);
  return doc;
}

/**
 * The operator's OpenAPI integrations as providers. Throws a ConfigError for a bad entry, a
 * document that does not load (`[0].document: paths./x.get.parameters[2]: $ref … does not
 * resolve`), a name or tool an integration of `fixed` already has.
 */
export function openapiProviders(
  config: { OPENAPI_INTEGRATIONS?: string },
  fixed: readonly Provider[],
  options: OpenApiProviderOptions & { cwd?: string; logger?: ToolLogger } = {},
): Provider[] {
  const entries = parseOpenApiIntegrations(config.OPENAPI_INTEGRATIONS);
  const problems: string[] = [];
  const providers: Provider[] = [];
  const flatNames = new Set(fixed.flatMap((p) => p.tools.map((t) => `${p.manifest.toolPrefix}_${t.name}`)));
  entries.forEach((entry, index) => {
    const prefix = entry.name.replace(/-/g, '_');
    const clash = fixed.find((p) => p.manifest.name === entry.name || p.manifest.toolPrefix === prefix);
    if (clash) {
      problems.push(`[${index}].name: "${entry.name}" is the name of the integration ${clash.manifest.name}`);
      return;
    }
    try {
      const doc = loadDocumentFile(documentPath(entry.document, options.cwd));
      const { provider, refused } = openapiProvider(entry, doc, options);
      if (refused.length)
        options.logger?.warn(
          { integration: entry.name, refused: refused.length, first: refused.slice(0, 20) },
          'OpenAPI operations left out (no tool for them)',
        );
      const shadowing = provider.tools.map((t) => `${prefix}_${t.name}`).find((n) => flatNames.has(n));
      if (shadowing) problems.push(`[${index}]: its tool ${shadowing} has the name of another integration's tool`);
      else providers.push(provider);
    } catch (err) {
      if (!(err instanceof OpenApiError)) throw err;
      problems.push(`[${index}].document: ${err.message}`);
    }
  });
  if (problems.length) fail(problems.join('; '));
  return providers;
}
