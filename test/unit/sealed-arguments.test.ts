import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sealedArguments, secretArgumentTexts } from '../../core/approval-summary.js';
import {
  openSealedArguments,
  SEALED_ARGUMENT_KEY,
  SealedArgumentError,
  sealArgument,
} from '../../features/execution/store/sealed-arguments.js';
import { Keyring } from '../../platform/database/keyring.js';

const keyring = new Keyring(new Map([['k1', randomBytes(32)]]));
const owner = { tenantId: 'ten_a', userId: 'usr_a', tool: 'up__send_pin' };
const seal = (value: unknown) => sealArgument(keyring, owner, value);
const schema = {
  type: 'object',
  properties: {
    to: { type: 'string' },
    pin: { anyOf: [{ type: 'string', writeOnly: true }, { type: 'null' }] },
    hosts: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, password: { type: 'string' } } } },
    options: { $ref: '#/$defs/options' },
  },
  $defs: { options: { type: 'object', properties: { key: { type: 'string', format: 'password' } } } },
};

describe('secret arguments sealed for a tool batch’s history', () => {
  const args = {
    to: 'ops',
    pin: '123456',
    hosts: [{ name: 'a', password: 'hunter2-hunter2' }],
    options: { key: 'k-0123456789' },
    apiToken: 'tok-0123456789',
    flag: true,
  };

  it('seals exactly what the approval summary redacts (schema marks, branches, $refs, array items, names) and opens back to the arguments', () => {
    const sealed = sealedArguments(args, schema, seal);
    const text = JSON.stringify(sealed);
    for (const secret of ['123456', 'hunter2-hunter2', 'k-0123456789', 'tok-0123456789']) expect(text).not.toContain(secret);
    expect(sealed).toMatchObject({ to: 'ops', hosts: [{ name: 'a' }], flag: true });
    expect(Object.keys(sealed.pin as object)).toEqual([SEALED_ARGUMENT_KEY]);
    expect(openSealedArguments(keyring, owner, sealed)).toEqual(args);
    // Redacted from answers: the long ones only (a 6-digit PIN would mangle every number in a result).
    expect(secretArgumentTexts(args, schema).sort()).toEqual(['hunter2-hunter2', 'k-0123456789', 'tok-0123456789']);
  });

  it('an envelope opens only for its tenant, user and tool; a made-up one is refused', () => {
    const sealed = sealedArguments(args, schema, seal);
    for (const other of [
      { ...owner, userId: 'usr_b' },
      { ...owner, tenantId: 'ten_b' },
      { ...owner, tool: 'up__other' },
    ]) {
      expect(() => openSealedArguments(keyring, other, sealed)).toThrow(SealedArgumentError);
    }
    expect(() => openSealedArguments(keyring, owner, { x: { [SEALED_ARGUMENT_KEY]: 'v2.k1.AAAA.BBBB.CCCC' } })).toThrow(
      SealedArgumentError,
    );
  });

  it('a whole-arguments envelope opens to the arguments, `__proto__` keys kept as own properties', () => {
    const odd = JSON.parse('{"__proto__": {"polluted": 1}, "a": [1, {"b": null}]}');
    const opened = openSealedArguments(keyring, owner, { outer: seal(odd) }) as { outer: Record<string, unknown> };
    expect(Object.hasOwn(opened.outer, '__proto__')).toBe(true);
    expect(JSON.stringify(opened.outer)).toBe(JSON.stringify(odd));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
