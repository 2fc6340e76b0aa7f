import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// No Docker engine runs here, so the image's Dockerfile is checked by reading it.
const instructions = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line.trim() && !line.trim().startsWith('#'))
  .map((line) => line.trim());

describe('Dockerfile', () => {
  it('finding 5: the image runs Switchboard (and so its chromium) as a non-root user', () => {
    const users = instructions.filter((line) => /^USER\s/i.test(line));
    expect(users.length).toBeGreaterThan(0);
    const last = users.at(-1)!.split(/\s+/)[1];
    expect(last.split(':')[0]).not.toMatch(/^(root|0)$/);
    // The user is set before the command runs, after everything that needs root.
    const cmd = instructions.findIndex((line) => /^CMD\s/i.test(line));
    expect(instructions.indexOf(users.at(-1)!)).toBeLessThan(cmd);
    expect(instructions.slice(instructions.indexOf(users.at(-1)!)).some((line) => /^RUN\s/i.test(line))).toBe(false);
  });
});
