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
