import type { Client } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import proto from '@temporalio/proto';
import type { Keyring } from '../../platform/database/keyring.js';
import { KeyringPayloadCodec } from '../../platform/temporal/payload-codec.js';

// A CommonJS package: Node's ESM loader sees only its default export.
const { temporal } = proto;

/**
 * A history as searchable text: every byte field (payload data, metadata) decoded as UTF-8, so a
 * secret stored in clear inside a payload shows up as itself — not hidden in base64 or a byte
 * array — when a test searches for it.
 */
export function historyText(history: unknown): string {
  const parts: string[] = [];
  const walk = (value: unknown) => {
    if (value instanceof Uint8Array) parts.push(Buffer.from(value).toString('utf8'), Buffer.from(value).toString('base64'));
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        parts.push(k);
        walk(v);
      }
    } else if (value !== undefined && value !== null) parts.push(String(value));
  };
  walk(history);
  return parts.join('\n');
}

/** Every finished workflow of a task queue, fetched raw (no codec): what Temporal stores. */
export async function rawHistoriesOf(client: Client, taskQueue: string): Promise<{ workflowId: string; history: History }[]> {
  const out: { workflowId: string; history: History }[] = [];
  for await (const wf of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` })) {
    out.push({ workflowId: wf.workflowId, history: await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory() });
  }
  return out;
}

/** Fixture files hold the history's protobuf bytes, base64: exact, and independent of JSON mappings. */
export const historyToFixture = (workflowId: string, history: History) =>
  JSON.stringify({ workflowId, history: Buffer.from(temporal.api.history.v1.History.encode(history).finish()).toString('base64') });

export function historyFromFixture(text: string): { workflowId: string; history: History } {
  const { workflowId, history } = JSON.parse(text);
  return { workflowId, history: temporal.api.history.v1.History.decode(Buffer.from(history, 'base64')) as History };
}

/** A payload as Temporal UI posts it to a codec endpoint: metadata values and data in base64. */
export interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}

type ProtoPayload = { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null };

const isPayload = (value: unknown): value is ProtoPayload =>
  !!value && typeof value === 'object' && (value as ProtoPayload).metadata?.encoding instanceof Uint8Array && 'data' in (value as object);

/**
 * A history as an operator reads it in Temporal UI once the UI decodes it: every payload (inputs,
 * results, signals, updates, markers, failures' encoded attributes, memos, search attributes) sent
 * through `decode` — a codec endpoint, as the UI calls it — and the answers' data as text, beside
 * the raw text of everything else.
 */
export async function decodedHistoryText(history: unknown, decode: (payloads: JsonPayload[]) => Promise<JsonPayload[]>): Promise<string> {
  const payloads: JsonPayload[] = [];
  const walk = (value: unknown) => {
    if (isPayload(value)) {
      payloads.push({
        metadata: Object.fromEntries(Object.entries(value.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
        data: Buffer.from(value.data ?? []).toString('base64'),
      });
    } else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object' && !(value instanceof Uint8Array)) Object.values(value).forEach(walk);
  };
  walk(history);
  const parts = [historyText(history)];
  for (let i = 0; i < payloads.length; i += 50) {
    for (const p of await decode(payloads.slice(i, i + 50))) parts.push(Buffer.from(p.data, 'base64').toString('utf8'));
  }
  return parts.join('\n');
}

/** Decodes as Switchboard's codec does (without putting stored results back): for decodedHistoryText where no codec operator is set up. */
export function keyringDecoder(keyring: Keyring): (payloads: JsonPayload[]) => Promise<JsonPayload[]> {
  const codec = new KeyringPayloadCodec(keyring);
  return async (payloads) => {
    const decoded = await codec.decode(
      payloads.map((p) => ({
        metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
        data: Buffer.from(p.data, 'base64'),
      })),
    );
    return decoded.map((p) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      data: Buffer.from(p.data ?? []).toString('base64'),
    }));
  };
}
