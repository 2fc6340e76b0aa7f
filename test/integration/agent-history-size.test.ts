import { afterAll, describe, expect, it } from 'vitest';
import type { ToolOutcome } from '../../core/execution.js';
import { WORKFLOW_RESULT_MAX_BYTES } from '../../core/stored-results.js';
import { type AgentWorker, startAgentWorker } from '../support/agent-worker.js';
import type { ExecuteManyProgress } from '../support/agent-workflows.js';
import { killProcess, spawnWorkerProcess, startWorld } from '../support/harness.js';
import { startTestUpstream } from '../support/mcp-upstream-server.js';

// An agent's own workflow (switchboard/workflow) against a hostile upstream MCP server that answers
// every call with megabytes — of `"`, which JSON escapes to twice their size — or fails with
// megabytes of error text. The deployment raised CONNECTIONS_TOOL_RESULT_MAX_BYTES past what one
// Temporal payload may hold (2 MB). The attacker wants the agent's history or one of its payloads to
// blow past Temporal's limits: the activity's completion refused (the workflow gets an error instead
// of an outcome), or the run terminated for its history's size.

const HUGE = '"'.repeat(2_500_000);
const upstream = await startTestUpstream({
  extraTools(server) {
    server.registerTool('huge_result', { description: 'Answers 2.5 MB of quotes', annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: 'text', text: HUGE }],
    }));
    server.registerTool('huge_error', { description: 'Fails with 2.5 MB of text', annotations: { readOnlyHint: true } }, async () => ({
      isError: true,
      content: [{ type: 'text', text: HUGE }],
    }));
  },
});

const world = await startWorld({
  env: {
    UPSTREAM_MCP_ALLOWED_HOSTS: '127.0.0.1',
    UPSTREAM_MCP_SERVERS: JSON.stringify([{ name: 'big', displayName: 'Big', url: upstream.url }]),
    // An operator who wanted whole results: more than one Temporal payload may hold, once escaped.
    CONNECTIONS_TOOL_RESULT_MAX_BYTES: String(3 * 1024 * 1024),
  },
});
world.onStop(() => upstream.close());
const { stack } = world;
const user = await world.user();
const who = { tenantId: user.user.tenantId, userId: user.user.id };
const agents: AgentWorker = await startAgentWorker(stack);
afterAll(() => agents.stop());

/** Every run of a workflow id (continue-as-new makes several), with the events that say a task or activity failed. */
async function runsOf(workflowId: string) {
  const { temporal } = stack.services;
  const runs: { runId: string; events: number; failures: string[] }[] = [];
  for await (const run of temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const events = (await temporal.workflow.getHandle(workflowId, run.runId).fetchHistory()).events ?? [];
    const failures = events
      .filter(
        (e) => e.workflowTaskFailedEventAttributes || e.activityTaskFailedEventAttributes || e.workflowExecutionTerminatedEventAttributes,
      )
      .map((e) =>
        JSON.stringify(
          e.workflowTaskFailedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.workflowExecutionTerminatedEventAttributes,
        ),
      );
    runs.push({ runId: run.runId, events: events.length, failures });
  }
  return runs;
}

describe('a hostile upstream against an agent workflow’s history', () => {
  it(`a 2.5 MB result (5 MB as JSON) comes back cut at ${WORKFLOW_RESULT_MAX_BYTES} bytes with its resultRef; no payload passes Temporal's limit`, async () => {
    const { result, workflowId } = await agents.run<ToolOutcome>('executeOnce', who, { call: { tool: 'big__huge_result', args: {} } });
    expect(result).toMatchObject({ ok: true, truncated: true, resultRef: expect.any(String), totalBytes: 5_000_002 });
    if (!result.ok) throw new Error('unreachable');
    expect(Buffer.byteLength(result.result as string)).toBeLessThanOrEqual(WORKFLOW_RESULT_MAX_BYTES);
    // Escaped again inside the outcome's payload: still far below Temporal's 2 MB.
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThan(2 * WORKFLOW_RESULT_MAX_BYTES + 1024);
    expect((await runsOf(workflowId)).flatMap((r) => r.failures)).toEqual([]);
  });

  it('a 2.5 MB error text comes back as tool_failed with a few hundred characters', async () => {
    const { result } = await agents.run<ToolOutcome>('executeOnce', who, { call: { tool: 'big__huge_error', args: {} } });
    expect(result).toMatchObject({ ok: false, error: { code: 'tool_failed' } });
    if (result.ok) throw new Error('unreachable');
    expect(result.error.message.length).toBeLessThan(400);
  });

  it('an agent loop of maximal results continues as new when Temporal suggests it: every call answered, no run near the limits', async () => {
    const times = 24;
    const { result, workflowId } = await agents.run<ExecuteManyProgress>('executeMany', who, {
      call: { tool: 'big__huge_result', args: {} },
      times,
    });
    expect(result).toMatchObject({ done: times, truncated: times });
    expect(result.maxOutcomeBytes).toBeLessThan(2 * WORKFLOW_RESULT_MAX_BYTES + 1024);
    // Temporal suggests continuing as new at 4 MB of history (its default): each run stays near that.
    expect(result.runs).toBeGreaterThan(1);
    expect(result.maxHistoryBytes).toBeLessThan(8 * 1024 * 1024);
    const runs = await runsOf(workflowId);
    expect(runs.length).toBe(result.runs);
    expect(runs.flatMap((r) => r.failures)).toEqual([]);
  }, 180_000);

  it('arguments nested 2,000 levels deep from an agent workflow: invalid_arguments naming the bound, nothing sent', async () => {
    let args: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 2000; i++) args = { a: args };
    const before = upstream.calls.length;
    const { result } = await agents.run<ToolOutcome>('executeOnce', who, { call: { tool: 'big__huge_result', args } });
    expect(result).toEqual({
      ok: false,
      error: { code: 'invalid_arguments', message: 'Arguments of big__huge_result are nested more than 64 levels deep.' },
    });
    expect(upstream.calls.length).toBe(before);
  });

  it('a worker lost in the middle of a call: execute answers "outcome unknown" (and audits it), the agent workflow does not fail', async () => {
    await stack.stopWorker();
    const worker = await spawnWorkerProcess(stack);
    let restarted = false;
    try {
      const before = upstream.calls.filter((c) => c === 'slow').length;
      const running = agents.run<ToolOutcome>('executeOnce', who, { call: { tool: 'big__slow', args: {} } });
      for (const deadline = Date.now() + 30_000; upstream.calls.filter((c) => c === 'slow').length === before; ) {
        if (Date.now() > deadline) throw new Error('the call never reached the upstream');
        await new Promise((r) => setTimeout(r, 50));
      }
      await killProcess(worker);
      // A worker for the audit of the lost call (the agent's workflow asks Switchboard's worker to record it).
      await stack.startWorker();
      restarted = true;
      const { result, workflowId } = await running;
      expect(result).toEqual({
        ok: false,
        error: { code: 'outcome_unknown', message: 'big__slow was interrupted; its outcome is unknown, so check before retrying a write.' },
      });
      expect((await runsOf(workflowId)).flatMap((r) => r.failures)).toEqual([]);
      const events = (await stack.services.temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      // Temporal timed the lost call out (its heartbeats stopped); the workflow went on.
      expect(events.filter((e) => e.activityTaskTimedOutEventAttributes)).toHaveLength(1);
      expect(events.at(-1)?.workflowExecutionCompletedEventAttributes).toBeTruthy();
      const { rows } = await stack.services.pool.query(
        `SELECT outcome, error_code FROM audit_log WHERE tool = 'big__slow' AND actor_user_id = $1`,
        [user.user.id],
      );
      expect(rows).toEqual([{ outcome: 'error', error_code: 'outcome_unknown' }]);
    } finally {
      await killProcess(worker);
      if (!restarted) await stack.startWorker();
    }
  }, 120_000);
});
