import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time.js';
import { summary } from './stats.js';

/**
 * Where a tool batch's time goes inside Temporal, from the event times the server recorded in the
 * workflows' histories (one clock, the server's): dispatch of workflow and activity tasks, the
 * worker's workflow code, the activity itself, and the tail to completion.
 */

export const PHASES = [
  'started → 1st workflow task picked up',
  '1st workflow task on the worker',
  'workflow task done → activity picked up',
  'activity run (started → completed)',
  'last activity done → workflow completed',
  'workflow total (started → completed)',
] as const;
export type Phase = (typeof PHASES)[number];

interface Event {
  eventTime?: { seconds?: unknown; nanos?: number | null } | null;
  [attributes: string]: unknown;
}

/** Event time in ms with the sub-millisecond part tsToMs drops. */
const at = (e: Event) => tsToMs(e.eventTime as never) + ((e.eventTime?.nanos ?? 0) % 1_000_000) / 1_000_000;
const all = (events: Event[], kind: string) => events.filter((e) => e[`${kind}EventAttributes`]);
const first = (events: Event[], kind: string) => all(events, kind)[0];

function phasesOf(events: Event[]): { activities: number; phases: Record<Phase, number> } | undefined {
  const started = first(events, 'workflowExecutionStarted');
  const completed = first(events, 'workflowExecutionCompleted');
  const wftStarted = first(events, 'workflowTaskStarted');
  const wftCompleted = first(events, 'workflowTaskCompleted');
  const actStarted = all(events, 'activityTaskStarted');
  const actCompleted = all(events, 'activityTaskCompleted');
  if (!started || !completed || !wftStarted || !wftCompleted || !actStarted.length || actStarted.length !== actCompleted.length) return;
  const runs = actCompleted.map((c, i) => at(c) - at(actStarted[i]));
  return {
    activities: actCompleted.length,
    phases: {
      'started → 1st workflow task picked up': at(wftStarted) - at(started),
      '1st workflow task on the worker': at(wftCompleted) - at(wftStarted),
      'workflow task done → activity picked up': Math.min(...actStarted.map(at)) - at(wftCompleted),
      'activity run (started → completed)': summary(runs).p50,
      'last activity done → workflow completed': at(completed) - Math.max(...actCompleted.map(at)),
      'workflow total (started → completed)': at(completed) - at(started),
    },
  };
}

/**
 * The phases of up to `limit` completed batches on `taskQueue`, grouped by how many activities
 * they ran, each phase as the median over that group's batches.
 */
export async function batchTimelines(client: Client, taskQueue: string, limit: number): Promise<Record<number, Record<Phase, number>>> {
  const ids: string[] = [];
  for await (const info of client.workflow.list({ query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Completed'` })) {
    // Batches the benchmark started itself (no activities) are not Switchboard's.
    if (info.workflowId.startsWith('bench-')) continue;
    ids.push(info.workflowId);
    if (ids.length >= limit) break;
  }
  const groups = new Map<number, Record<Phase, number>[]>();
  for (const id of ids) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    const timeline = phasesOf((history.events ?? []) as Event[]);
    if (timeline) groups.set(timeline.activities, [...(groups.get(timeline.activities) ?? []), timeline.phases]);
  }
  const medians: Record<number, Record<Phase, number>> = {};
  for (const [activities, list] of groups) {
    medians[activities] = Object.fromEntries(PHASES.map((p) => [p, summary(list.map((t) => t[p])).p50])) as Record<Phase, number>;
  }
  return medians;
}
