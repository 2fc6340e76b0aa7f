import { describe, expect, it } from 'vitest';
import { startWorld } from '../support/harness.js';

/**
 * Findings 2 and 16 end to end: an agent with a Switchboard key calls connections_execute with
 * hostile arguments (2), or the service it reaches answers an endless body (16). What the agent
 * reads is an outcome with a clear code; what the service sees is nothing outside the API base.
 */

const RESPONSE_CAP = 65536;

const world = await startWorld({
  clients: { github: {} },
  apis: true,
  env: { CONNECTIONS_TOOL_TIMEOUT_MS: '5000', CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES: String(RESPONSE_CAP) },
});
const { apis, stack } = world;
const mallory = await world.user({ email: 'mallory-attacks@example.com' });
// Her organisation forbids merging pull requests; she is connected to the repository's GitHub.
await stack.services.pool.query('UPDATE tenants SET settings = $2 WHERE id = $1', [
  mallory.user.tenantId,
  { excludeTools: ['merge_pull_request'] },
]);
await world.connectGithub(mallory, 'octocat');

const execute = (name: string, args: Record<string, unknown>) =>
  mallory.call('connections_execute', { name, arguments: args }).then((r) => r.body);

describe('finding 2: tool arguments cannot steer requests', () => {
  it('finding 2: create_or_update_file with path "../pulls/3/merge" answers invalid_arguments and merges nothing', async () => {
    expect(await execute('github__merge_pull_request', { owner: 'octocat', repo: 'hello-world', pullNumber: 3 })).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    const before = apis.requests.length;
    const outcome = await execute('github__create_or_update_file', {
      owner: 'octocat',
      repo: 'hello-world',
      path: '../pulls/3/merge',
      content: 'x',
      message: 'merge it',
    });
    expect(outcome).toMatchObject({
      ok: false,
      error: {
        code: 'invalid_arguments',
        message: expect.stringContaining('path'),
        issues: [{ path: ['path'], message: expect.any(String) }],
      },
    });
    expect(apis.requests.slice(before)).toEqual([]);
    expect(apis.state.github.repos.get('octocat/hello-world')!.issues.find((i) => i.number === 3)!.pull!.mergedAt).toBeNull();
  });

  it('finding 2: owner ".." and repo ".." answer invalid_arguments and nothing reaches a path above the API base', async () => {
    const before = apis.requests.length;
    const outcome = await execute('github__get_file_contents', { owner: '..', repo: '..', path: 'admin/keys' });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'invalid_arguments', issues: [{ path: ['owner'] }] } });
    expect(apis.requests.slice(before)).toEqual([]);
  });
});

describe('invalid arguments are answered in bounded size', () => {
  it('180,000 wrong labels (under the 200,000-value bound) answer invalid_arguments naming the first 20 problems, not a lost call; a 60,000-character argument name is cut; nothing is sent', async () => {
    const before = apis.requests.length;
    const labels = Array.from({ length: 180_000 }, (_, i) => i % 10);
    const outcome = await execute('github__create_issue', { owner: 'octocat', repo: 'hello-world', title: 't', labels });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect(outcome.error.issues).toHaveLength(21);
    expect(outcome.error.issues[0]).toEqual({ path: ['labels', 0], message: expect.stringMatching(/expected string/) });
    expect(outcome.error.issues[20]).toEqual({ path: [], message: 'and 179980 more problems' });

    const meta = await mallory.call('execute_tools', {
      executions: [{ tool: 'github_create_issue', args: { owner: 'octocat', repo: 'hello-world', title: 't', labels } }],
    });
    expect(meta.status).toBe(200);
    expect(meta.body.results[0].error).toMatch(/^Invalid arguments for github_create_issue: labels.0: /);
    expect(JSON.stringify(meta.body).length).toBeLessThan(10_000);

    // One unknown argument name of 60,000 characters (a strict schema names unknown keys in its
    // message): on the agent tool itself, and in an execute_tools entry.
    const name = 'k'.repeat(60_000);
    const long = await mallory.call('connections_execute', { name: 'github__list_repos', arguments: {}, [name]: 1 });
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect(JSON.stringify(long.body).length).toBeLessThan(5_000);
    const entry = await mallory.call('execute_tools', { executions: [{ tool: 'github_list_repos', [name]: 1 }] });
    expect(entry.status).toBe(400);
    expect(entry.body.error).toMatch(/^Invalid arguments for execute_tools: executions\.0: /);
    expect(JSON.stringify(entry.body).length).toBeLessThan(5_000);
    expect(apis.requests.slice(before)).toEqual([]);
  });
});

describe('finding 16: provider responses are capped', () => {
  it('finding 16: an endless answer fails the call promptly with tool_failed, saying Switchboard stopped reading', async () => {
    apis.behave.set('/github/user/repos', { endless: true, times: 1 });
    const abandoned = apis.abandoned;
    const started = Date.now();
    const outcome = await execute('github__list_repos', {});
    expect(outcome).toMatchObject({
      ok: false,
      error: {
        code: 'tool_failed',
        message: expect.stringContaining(`The provider's response was larger than ${RESPONSE_CAP} bytes; Switchboard stopped reading it`),
      },
    });
    expect(Date.now() - started).toBeLessThan(4000);
    await expect.poll(() => apis.abandoned).toBe(abandoned + 1);
  });
});
