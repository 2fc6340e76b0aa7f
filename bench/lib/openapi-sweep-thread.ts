import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { openapiEntrySchema } from '../../core/openapi-entry.js';
import { OpenApiError, parseDocument } from '../../providers/openapi/document.js';
import { documentBaseUrl, openapiProvider } from '../../providers/openapi/provider.js';

/**
 * One document of the OpenAPI sweep at a time (bench/openapi-sweep.ts), in a thread of its own so
 * that a document that stalls the loader can be stopped and counted rather than stop the sweep.
 * Each message in is a file path; each message out is what loading it did.
 */

export interface SweepOutcome {
  file: string;
  bytes: number;
  /** JSON.parse of the same text: the floor any loader pays. */
  parseMs: number;
  /** Switchboard's loader: parse, checks, operations to tools. */
  loadMs: number;
  outcome: 'loaded' | 'refused' | 'crashed';
  /** The document names no usable server: an operator would set the entry's baseUrl, and the sweep does. */
  needsBaseUrl: boolean;
  tools: number;
  refusedOperations: { reason: string }[];
  /** Why the document was refused (an OpenApiError), or what crashed. */
  problem?: string;
}

function load(file: string): SweepOutcome {
  const text = readFileSync(file, 'utf8');
  const bytes = Buffer.byteLength(text);
  const parseStarted = performance.now();
  JSON.parse(text);
  const parseMs = performance.now() - parseStarted;
  const started = performance.now();
  let needsBaseUrl = false;
  try {
    const doc = parseDocument(text);
    try {
      documentBaseUrl(doc);
    } catch (err) {
      if (!(err instanceof OpenApiError)) throw err;
      needsBaseUrl = true;
    }
    const entry = openapiEntrySchema.parse({
      name: 'sweep',
      displayName: 'Sweep',
      document: file,
      ...(needsBaseUrl && { baseUrl: 'https://api.example.com' }),
    });
    const { provider, refused } = openapiProvider(entry, doc);
    const loadMs = performance.now() - started;
    const refusedOperations = refused.map((r) => ({ reason: r.reason }));
    return { file, bytes, parseMs, loadMs, outcome: 'loaded', needsBaseUrl, tools: provider.tools.length, refusedOperations };
  } catch (err) {
    const loadMs = performance.now() - started;
    const refused = err instanceof OpenApiError;
    const problem = refused ? err.problem : `${(err as Error).name}: ${(err as Error).message}`;
    return {
      file,
      bytes,
      parseMs,
      loadMs,
      outcome: refused ? 'refused' : 'crashed',
      needsBaseUrl,
      tools: 0,
      refusedOperations: [],
      problem,
    };
  }
}

if (parentPort && workerData === 'openapi-sweep') {
  const port = parentPort;
  port.on('message', (file: string) => port.postMessage(load(file)));
}
