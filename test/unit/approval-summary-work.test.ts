import { describe, expect, it } from 'vitest';
import { SECRET_PLACEHOLDER, sealedArguments, secretArgumentTexts, summariseArguments } from '../../core/approval-summary.js';

/**
 * The secret walk over a call's arguments (sealing a batch's input, redaction's secret texts, the
 * approval summary) runs on a shared event loop for every value of the arguments. An upstream's
 * schema may give each value ~200 branches (providers/remote-mcp/schema-cost.ts allows it), so
 * what a schema's branches say is learned once per schema, not once per value: the work is the
 * arguments' size plus the schema's, not their product. Counted here by the schema itself: each
 * branch counts how often the walk reads its keywords.
 */
function countingSchema(branchCount: number) {
  let reads = 0;
  const branch = (i: number) =>
    new Proxy(
      { type: 'object', properties: { [`named${i}`]: { type: 'string' } }, additionalProperties: { type: 'string' } },
      {
        get(target, key, receiver) {
          reads++;
          return Reflect.get(target, key, receiver);
        },
      },
    );
  const schema = { type: 'object', anyOf: Array.from({ length: branchCount }, (_, i) => branch(i)) };
  return { schema, reads: () => reads };
}

const argsWith = (values: number) => Object.fromEntries(Array.from({ length: values }, (_, i) => [`key${i}`, `value number ${i}`]));

describe('the secret walk learns a schema once, whatever the number of values', () => {
  it('reads each branch a bounded number of times for 100 values or 5,000 (work: arguments + schema, not their product)', () => {
    const small = countingSchema(50);
    sealedArguments(argsWith(100), small.schema, (v) => v);
    const large = countingSchema(50);
    sealedArguments(argsWith(5000), large.schema, (v) => v);
    // Before: every value worked out every branch again (~50 reads of each branch per value).
    expect(large.reads()).toBeLessThan(50 * 40);
    expect(large.reads()).toBe(small.reads());
  });

  it('still finds what each branch marks secret: a named member, any other member, an item', () => {
    const schema = {
      type: 'object',
      anyOf: [
        { type: 'object', properties: { pinCode: { type: 'string', writeOnly: true } } },
        {
          type: 'object',
          properties: { list: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'string', format: 'password' }] } },
        },
        { type: 'object', additionalProperties: { type: 'string' } },
      ],
    };
    const args = { pinCode: 'hidden-value-1', list: ['shown-value', 'hidden-value-2'], other: 'shown-other' };
    for (let round = 0; round < 2; round++) {
      expect(summariseArguments(args, schema)).toEqual({
        pinCode: SECRET_PLACEHOLDER,
        list: ['shown-value', SECRET_PLACEHOLDER],
        other: 'shown-other',
      });
      expect(secretArgumentTexts(args, schema).sort()).toEqual(['hidden-value-1', 'hidden-value-2']);
    }
  });
});
