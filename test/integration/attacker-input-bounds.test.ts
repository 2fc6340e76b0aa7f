import { describe, expect, it } from 'vitest';
import { MAX_ARGUMENT_VALUES, MAX_OBJECT_KEYS } from '../../core/json-depth.js';
import { MAX_SECRET_ARGUMENT_VALUES } from '../../features/execution/execute-tool.js';
import { startWorld, type TestUser } from '../support/harness.js';

/**
 * Work an attacker's input drives on a shared event loop is bounded before it starts
 * (docs/security/work-bounds.md, "Work bounded by attacker input"). The timing side of each bound is
 * in that table; these tests hold the behaviour that keeps it.
 */

const execute = (user: TestUser, name: string, args: Record<string, unknown> = {}) =>
  user.call('connections_execute', { name, arguments: args }).then((r) => r.body);

const world = await startWorld();
const alice = await world.user();

describe('secret arguments: one redaction scan each', () => {
  const secrets = (n: number) => Array.from({ length: n }, (_, i) => `s${String(i).padStart(9, '0')}`);

  it('refuses a call carrying more secret values than redaction scans for, before it runs', async () => {
    // A key named like a secret marks everything under it secret: 9 strings here, 90,000 in a 1 MB body.
    const answer = await execute(alice, 'jots__list_notes', { limit: 1, token: secrets(MAX_SECRET_ARGUMENT_VALUES + 1) });
    expect(answer.ok).toBe(false);
    expect(answer.error.code).toBe('invalid_arguments');
    expect(answer.error.message).toContain(`at most ${MAX_SECRET_ARGUMENT_VALUES} are accepted`);
  });

  it('runs a call with as many secret values as allowed (the same value twice counts once)', async () => {
    const values = [...secrets(MAX_SECRET_ARGUMENT_VALUES), 's000000000'];
    expect(await execute(alice, 'jots__list_notes', { limit: 1, token: values })).toMatchObject({ ok: true });
  });
});

describe('arguments: bounded in values before anything walks them', () => {
  it('answers arguments holding more values, or an object more keys, than the bounds with invalid arguments naming it, on both surfaces, recording nothing', async () => {
    // A 1 MB body holds 500,000 values; each is walked again by the secret walk, the payload converter and the request hash (which sorts every object's keys).
    const wide = Object.fromEntries(Array.from({ length: MAX_OBJECT_KEYS + 1 }, (_, i) => [`k${i}`, 1]));
    const many = Array.from({ length: MAX_ARGUMENT_VALUES }, () => 1);
    for (const [args, bound] of [
      [wide, `an object in the arguments has more than ${MAX_OBJECT_KEYS} keys`],
      [{ limit: 1, many }, `arguments hold more than ${MAX_ARGUMENT_VALUES} values`],
    ] as const) {
      const agent = await alice.call('connections_execute', { name: 'jots__list_notes', arguments: args });
      expect(JSON.stringify(agent.body)).toContain(bound);
      const batch = await alice.call('execute_tools', { executions: [{ tool: 'jots_list_notes', args }], requestId: 'many-values' });
      expect(JSON.stringify(batch.body)).toContain(bound);
    }
    const recorded = await world.stack.services.pool.query('SELECT 1 FROM tool_batch_requests WHERE user_id = $1', [alice.user.id]);
    expect(recorded.rows).toEqual([]);
    // Within the bounds, the tool's own schema answers (list_notes ignores keys it does not take).
    const fewer = Object.fromEntries(Array.from({ length: MAX_OBJECT_KEYS - 10 }, (_, i) => [`k${i}`, 1]));
    expect(await execute(alice, 'jots__list_notes', { limit: 1, ...fewer })).toMatchObject({ ok: true });
  });
});
