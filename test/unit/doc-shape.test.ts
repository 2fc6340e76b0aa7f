import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The documents a newcomer reads stay short enough to read (issue 31) and every relative link in
 * them leads somewhere: a file that exists and, for `#anchor` into Markdown, a heading it has.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const KB = 1024;

const trackedMarkdown = () =>
  execFileSync('git', ['ls-files', '*.md'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f && !f.startsWith('node_modules/') && existsSync(join(ROOT, f)));

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');

function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1])));
}

describe('the documents', () => {
  it('README is at most 15 KB, SECURITY.md at most 12 KB, and CONTRIBUTING.md exists', () => {
    expect(statSync(join(ROOT, 'README.md')).size).toBeLessThanOrEqual(15 * KB);
    expect(statSync(join(ROOT, 'SECURITY.md')).size).toBeLessThanOrEqual(12 * KB);
    expect(existsSync(join(ROOT, 'CONTRIBUTING.md'))).toBe(true);
  });

  it('every relative link in a tracked Markdown file resolves, anchors included', () => {
    const broken: string[] = [];
    for (const file of trackedMarkdown()) {
      const path = join(ROOT, file);
      const text = readFileSync(path, 'utf8')
        .replace(/```[\s\S]*?```/g, '')
        .replace(/`[^`\n]*`/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('mailto:')) continue;
        const [pathPart, anchor] = target.split('#');
        const linked = pathPart ? resolve(dirname(path), decodeURIComponent(pathPart)) : path;
        if (!existsSync(linked)) {
          broken.push(`${file}: ${target} (no such file)`);
          continue;
        }
        if (anchor && linked.endsWith('.md') && !anchors(linked).has(anchor.toLowerCase()))
          broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});
