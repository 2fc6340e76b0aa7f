/**
 * Bounds on the shape of a parsed JSON value, found without recursion: a body parsed from 1 MB of
 * brackets is fine for JSON.parse but overflows the stack of anything that walks it recursively
 * (JSON.stringify among them), and one parsed from 1 MB of `[1,1,1…]` holds 500,000 values that
 * everything after walks again (the request hash sorts every object's keys, the secret walk,
 * Temporal's payload converter), each pass on the shared event loop.
 */

/**
 * Which bound `value` passes first, if any: nesting deeper than `depth`, more than `values` values
 * in all, or an object of more than `keys` keys.
 */
export function jsonShapeExcess(
  value: unknown,
  limits: { depth: number; values: number; keys?: number },
): 'depth' | 'values' | 'keys' | undefined {
  // Values are counted as their container is opened, and only containers are pushed: a container of
  // too many values is refused before its members are walked.
  let values = 1;
  if (values > limits.values) return 'values';
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= limits.depth) return 'depth';
    const children = Array.isArray(current) ? current : Object.values(current);
    if (!Array.isArray(current) && limits.keys !== undefined && children.length > limits.keys) return 'keys';
    values += children.length;
    if (values > limits.values) return 'values';
    for (const child of children) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return undefined;
}

/** Whether a parsed JSON value nests deeper than `max` levels (objects and arrays). */
export const nestsDeeperThan = (value: unknown, max: number): boolean =>
  jsonShapeExcess(value, { depth: max, values: Number.POSITIVE_INFINITY }) === 'depth';

/**
 * Arguments nested deeper than this are refused before anything walks them. JSON.parse takes a
 * megabyte of brackets, but what comes after recurses (the request hash, Temporal's payload
 * converter): 50,000 levels used to end in a 503 "Temporal unavailable" or a 500, which an agent
 * retries. Upstream tools' own bound is lower (providers/remote-mcp/schema-cost.ts). The execute
 * activity applies it too, to the arguments an agent's own workflow passes.
 */
export const MAX_ARGUMENT_NESTING = 64;

/**
 * Values (objects, arrays, strings, numbers… each counts one) a meta-tool's arguments may hold, and
 * keys one object of them may have. Everything after the parse walks the arguments again on the
 * shared event loop (the secret walk, the payload converter, the request hash, which sorts every
 * object's keys): a 1 MB body holds up to 500,000 values, and one object of 90,000 keys cost the
 * hash alone ~0.25 s. More is refused before anything walks them.
 */
export const MAX_ARGUMENT_VALUES = 200_000;
export const MAX_OBJECT_KEYS = 10_000;
