import { describe, expect, it } from 'vitest';
import { SA } from '../../core/search-attributes.js';
import { startWorld, type TestUser } from '../support/harness.js';

const world = await startWorld({ clients: { github: {} }, apis: true });
const { apis, stack } = world;
const connectedUser = world.githubUser;

/** The batch workflows this user started, newest first. */
async function batchesOf(user: TestUser) {
  const found = [];
  for await (const info of stack.services.temporal.workflow.list({ query: `SwitchboardUser = '${user.user.id}'` })) found.push(info);
  return found;
}

describe('tool names in search attributes', () => {
  it('finding 18: twelve unknown 190-character tool names answer "Tool not found" per entry and the known calls run', async () => {
    // An agent (any API key holder) sends long made-up tool names next to real ones.
    const agent = await connectedUser('sa-gh');
    const unknown = Array.from({ length: 12 }, (_, i) => ({ tool: `${String(i).padStart(2, '0')}${'x'.repeat(188)}` }));
    const { status, body } = await agent.call('execute_tools', {
      executions: [{ tool: 'github_get_authenticated_user' }, ...unknown, { tool: 'github_list_repos' }],
    });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.results).toHaveLength(14);
    expect(body.results[0]).toEqual({ result: expect.objectContaining({ login: 'sa-gh' }) });
    for (let i = 1; i <= 12; i++) expect(body.results[i]).toEqual({ error: 'Tool not found' });
    expect(body.results[13]).toEqual({ result: expect.any(Array) });

    // The agent-tool surface answers the spec's not_found shape for one such name.
    const single = await agent.call('connections_execute', { name: `github__${'y'.repeat(190)}`, arguments: {} });
    expect(single.status).toBe(200);
    expect(single.body).toMatchObject({ ok: false, error: { code: 'not_found' } });

    // Operators still find the batch by its known tools; the made-up names never reached the attribute.
    await expect.poll(async () => (await batchesOf(agent)).length, { timeout: 10_000 }).toBe(2);
    const tools = (await batchesOf(agent)).map((b) => b.typedSearchAttributes.get(SA.tool) ?? []);
    expect(tools).toContainEqual(['github__get_authenticated_user', 'github__list_repos']);
    expect(tools.flat().filter((name) => !name.startsWith('github__') || name.length >= 100)).toEqual([]);
  }, 60_000);
});

describe('idempotency edges', () => {
  const hits = (login: string) => apis.requests.filter((r) => r.subject === login).length;
  const workflowIdOf = async (user: TestUser) => {
    await expect.poll(async () => (await batchesOf(user)).length, { timeout: 10_000 }).toBeGreaterThan(0);
    return (await batchesOf(user))[0].workflowId;
  };

  it("finding 17: after Temporal's retention deleted a batch, its requestId runs the calls again instead of answering outcome unknown", async () => {
    const agent = await connectedUser('retained-gh');
    const request = { executions: [{ tool: 'github_get_authenticated_user' }], requestId: 'kept-for-a-while' };
    const first = await agent.call('execute_tools', request);
    expect(first.body.results[0]).toEqual({ result: expect.objectContaining({ login: 'retained-gh' }) });
    expect(hits('retained-gh')).toBe(1);

    // What the namespace's retention does once the batch is old enough: the execution is gone.
    const workflowId = await workflowIdOf(agent);
    const { temporal, config } = stack.services;
    await temporal.workflowService.deleteWorkflowExecution({ namespace: config.TEMPORAL_NAMESPACE, workflowExecution: { workflowId } });
    await expect
      .poll(
        () =>
          temporal.workflow
            .getHandle(workflowId)
            .describe()
            .then(
              () => 'still there',
              () => 'gone',
            ),
        { timeout: 60_000, interval: 500 },
      )
      .toBe('gone');

    const again = await agent.call('execute_tools', request);
    expect(again.status).toBe(200);
    expect(again.body.results[0]).toEqual({ result: expect.objectContaining({ login: 'retained-gh' }) });
    expect(hits('retained-gh')).toBe(2);
  }, 120_000);

  it('finding 17: a reset batch never makes a call twice (call keys follow the first run of the chain, not the run)', async () => {
    // An operator resets a finished batch to its first workflow task: the new run replays the calls.
    const agent = await connectedUser('reset-gh');
    const first = await agent.call('execute_tools', { executions: [{ tool: 'github_get_authenticated_user' }] });
    expect(first.body.results[0]).toEqual({ result: expect.objectContaining({ login: 'reset-gh' }) });
    expect(hits('reset-gh')).toBe(1);

    const workflowId = await workflowIdOf(agent);
    const { temporal, config } = stack.services;
    const handle = temporal.workflow.getHandle(workflowId);
    await handle.result();
    const { events } = await handle.fetchHistory();
    const firstTask = events!.find((e) => e.workflowTaskCompletedEventAttributes)!;
    const { runId } = await temporal.workflowService.resetWorkflowExecution({
      namespace: config.TEMPORAL_NAMESPACE,
      workflowExecution: { workflowId },
      workflowTaskFinishEventId: firstTask.eventId,
      requestId: `reset-${workflowId}`,
      reason: 'finding 17 test',
    });
    const outcomes = (await temporal.workflow.getHandle(workflowId, runId).result()) as { results: unknown[] } | unknown[];
    // The call was claimed by the first run: the reset run reports it unknown instead of making it again.
    expect(JSON.stringify(outcomes)).toContain('outcome is unknown');
    expect(hits('reset-gh')).toBe(1);
  }, 120_000);

  it('finding 17: the same requestId with different calls answers 409 and runs nothing; the same calls in another key order are the same request', async () => {
    const agent = await connectedUser('reuse-gh');
    const first = await agent.call('execute_tools', {
      executions: [{ tool: 'github_list_repos', args: { perPage: 2, page: 1 } }],
      requestId: 'reused',
    });
    expect(first.body.results[0]).toEqual({ result: expect.any(Array) });
    const before = hits('reuse-gh');

    const different = await agent.call('execute_tools', {
      executions: [{ tool: 'github_create_issue', args: { owner: 'octocat', repo: 'hello-world', title: 'not the first request' } }],
      requestId: 'reused',
    });
    expect(different.status).toBe(409);
    expect(different.body).toEqual({
      error:
        'This requestId was already used for different calls. The same requestId only collects the batch it first named; ' +
        'send a new requestId to run new calls.',
    });
    const single = await agent.call('connections_execute', { name: 'github__get_authenticated_user', arguments: {}, requestId: 'reused' });
    expect(single.status).toBe(409);
    expect(hits('reuse-gh')).toBe(before);

    // The same request, its argument keys in another order: the recorded results.
    const same = await agent.call('execute_tools', {
      executions: [{ tool: 'github_list_repos', args: { page: 1, perPage: 2 } }],
      requestId: 'reused',
    });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(first.body);
    expect(hits('reuse-gh')).toBe(before);

    // Another user's requestId is their own, whatever calls it carries.
    const other = await connectedUser('reuse-other-gh');
    const theirs = await other.call('execute_tools', { executions: [{ tool: 'github_get_authenticated_user' }], requestId: 'reused' });
    expect(theirs.body.results[0]).toEqual({ result: expect.objectContaining({ login: 'reuse-other-gh' }) });
  }, 60_000);

  it('finding 17: a terminated batch answers its recorded state (outcome unknown per call), not 503, to its requestId', async () => {
    const agent = await connectedUser('terminated-gh');
    apis.behave.set('/github/user', { delayMs: 4000, times: 1 });
    const request = { executions: [{ tool: 'github_get_authenticated_user' }], requestId: 'to-be-terminated' };
    const inFlight = agent.call('execute_tools', request);
    await expect.poll(() => hits('terminated-gh'), { timeout: 10_000 }).toBe(1);

    // An operator terminates the batch from the client (or Temporal UI).
    const workflowId = await workflowIdOf(agent);
    await stack.services.temporal.workflow.getHandle(workflowId).terminate('operator stopped it');

    const expected = {
      results: [
        {
          error: 'OUTCOME_UNKNOWN',
          message:
            'The batch running github__get_authenticated_user ended (terminated) before the call reported; its outcome is unknown, ' +
            'so check before retrying a write. Send a new requestId to run it again.',
        },
      ],
    };
    const answered = await inFlight;
    expect(answered.status).toBe(200);
    expect(answered.body).toEqual(expected);
    const again = await agent.call('execute_tools', request);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(expected);
    // The agent-tool surface carrying the same call reads the same record.
    const single = await agent.call('connections_execute', {
      name: 'github__get_authenticated_user',
      arguments: {},
      requestId: 'to-be-terminated',
    });
    expect(single.status).toBe(200);
    expect(single.body).toEqual({ ok: false, error: { code: 'outcome_unknown', message: expected.results[0].message } });
    expect(hits('terminated-gh')).toBe(1);
  }, 60_000);
});
