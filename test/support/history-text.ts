import type { Client } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import proto from '@temporalio/proto';

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
