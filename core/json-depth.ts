/**
 * Whether a parsed JSON value nests deeper than `max` levels (objects and arrays), found without
 * recursion: a body parsed from 1 MB of brackets is fine for JSON.parse but overflows the stack of
 * anything that walks it recursively (JSON.stringify among them).
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * Arguments nested deeper than this are refused before anything walks them. JSON.parse takes a
 * megabyte of brackets, but what comes after recurses (the request hash, Temporal's payload
 * converter): 50,000 levels used to end in a 503 "Temporal unavailable" or a 500, which an agent
 * retries. Upstream tools' own bound is lower (providers/mcp-upstream/schema-cost.ts). The execute
 * activity applies it too, to the arguments an agent's own workflow passes.
 */
export const MAX_ARGUMENT_NESTING = 64;
