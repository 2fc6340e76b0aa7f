import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time.js';
import { summary } from './stats.js';

/**
 * Where a tool batch's time goes inside Temporal, from the event times the server recorded in the
 * workflows' histories (one clock, the server's): dispatch of the first workflow task, the time
 * the worker holds workflow tasks (with local activities, the calls run inside them), and the
 * rest — trips through the task queues between workflow tasks (normal activities' dispatch,
 * runs and completions; batches recorded before the calls became local activities).
 */

export const PHASES = [
  'started → 1st workflow task picked up',
  'workflow tasks on the worker (incl. local calls)',
  'between workflow tasks (task queues, normal activities)',
  'workflow total (started → completed)',
] as const;
export type Phase = (typeof PHASES)[number];

interface Event {
  eventTime?: { seconds?: unknown; nanos?: number | null } | null;
  markerRecordedEventAttributes?: { markerName?: string | null } | null;
  [attributes: string]: unknown;
}

const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/** Event time in ms with the sub-millisecond part tsToMs drops. */
const at = (e: Event) => tsToMs(e.eventTime as never) + ((e.eventTime?.nanos ?? 0) % 1_000_000) / 1_000_000;
const all = (events: Event[], kind: string) => events.filter((e) => e[`${kind}EventAttributes`]);
const first = (events: Event[], kind: string) => all(events, kind)[0];

function phasesOf(events: Event[]): { calls: number; phases: Record<Phase, number> } | undefined {
  const started = first(events, 'workflowExecutionStarted');
  const completed = first(events, 'workflowExecutionCompleted');
  const tasksStarted = all(events, 'workflowTaskStarted');
  const tasksCompleted = all(events, 'workflowTaskCompleted');
  const calls =
    all(events, 'activityTaskCompleted').length +
    events.filter((e) => e.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER).length;
  if (!started || !completed || !tasksStarted.length || tasksStarted.length !== tasksCompleted.length || !calls) return;
  const total = at(completed) - at(started);
  const firstPickup = at(tasksStarted[0]) - at(started);
  const onWorker = tasksCompleted.reduce((sum, done, i) => sum + at(done) - at(tasksStarted[i]), 0);
  return {
    calls,
    phases: {
      'started → 1st workflow task picked up': firstPickup,
      'workflow tasks on the worker (incl. local calls)': onWorker,
      'between workflow tasks (task queues, normal activities)': Math.max(0, total - firstPickup - onWorker),
      'workflow total (started → completed)': total,
    },
  };
}

/**
 * The phases of up to `limit` completed batches on `taskQueue`, grouped by how many calls they
 * ran, each phase as the median over that group's batches. Only batches Temporal started eagerly
 * count (those a process with its own worker started): a benchmark's side that starts them from a
 * server process apart is measured end to end instead.
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
    if (history.events?.[0]?.workflowExecutionStartedEventAttributes?.eagerExecutionAccepted !== true) continue;
    const timeline = phasesOf((history.events ?? []) as Event[]);
    if (timeline) groups.set(timeline.calls, [...(groups.get(timeline.calls) ?? []), timeline.phases]);
  }
  const medians: Record<number, Record<Phase, number>> = {};
  for (const [activities, list] of groups) {
    medians[activities] = Object.fromEntries(PHASES.map((p) => [p, summary(list.map((t) => t[p])).p50])) as Record<Phase, number>;
  }
  return medians;
}
