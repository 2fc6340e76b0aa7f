import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { contentsPath, githubRequest, queryString } from '../api.js';
import { repoRef } from '../args.js';

interface GhContent {
  type: 'file' | 'dir' | 'symlink' | 'submodule';
  name: string;
  path: string;
  sha: string;
  size: number;
  html_url: string | null;
  encoding?: string;
  content?: string;
  target?: string;
}

/** Text of a base64 file body, or null when it is binary (holds NUL bytes). */
function decodeText(base64: string): string | null {
  const bytes = Buffer.from(base64.replace(/\s/g, ''), 'base64');
  return bytes.includes(0) ? null : bytes.toString('utf8');
}

export const contentTools = [
  defineTool({
    name: 'get_file_contents',
    description:
      'Read a file (a README, source or config file) from a GitHub repository as text, or list a directory: returns {type:"file", path, sha, size, html_url, content} with the base64 body decoded to UTF-8 (content is null with binary:true for binary files, and null with tooLarge:true above GitHub\'s 1 MB contents limit). A directory path (or "" for the root) returns {type:"dir", path, entries:[{name, path, type, size}]}. ref is a branch, tag or commit (default: the default branch). Keep the sha: create_or_update_file needs it to update the file.',
    access: 'read',
    scopes: ['repo'],
    input: z.object({
      ...repoRef,
      path: z.string().default('').describe('Path inside the repository, e.g. "src/index.ts"; "" for the root directory'),
      ref: z.string().optional().describe('Branch, tag or commit SHA (default: the default branch)'),
    }),
    async run(args, ctx) {
      const url = `${contentsPath(args.owner, args.repo, args.path)}${queryString({ ref: args.ref })}`;
      const result = await githubRequest<GhContent | GhContent[]>(ctx, 'GET', url);
      if (Array.isArray(result)) {
        return {
          type: 'dir',
          path: args.path.replace(/^\/+|\/+$/g, ''),
          entries: result.map((e) => ({ name: e.name, path: e.path, type: e.type, size: e.size })),
        };
      }
      const base = { type: result.type, path: result.path, sha: result.sha, size: result.size, html_url: result.html_url };
      if (result.type !== 'file') return { ...base, target: result.target ?? null };
      if (result.encoding !== 'base64' || result.content === undefined) return { ...base, content: null, tooLarge: true };
      const content = decodeText(result.content);
      return content === null ? { ...base, content: null, binary: true } : { ...base, content };
    },
  }),
  defineTool({
    name: 'create_or_update_file',
    description:
      'Commit one text file to a GitHub repository: creates it, or replaces it when sha (the current blob sha from get_file_contents) is given; updating without the right sha fails with HTTP 409/422. content is plain text (encoded to base64 for you). branch must already exist (default: the default branch). Returns {path, sha, html_url, commit:{sha, message, html_url}}; the new sha is needed for the next update.',
    access: 'write',
    scopes: ['repo'],
    input: z.object({
      ...repoRef,
      path: z.string().min(1).describe('Path of the file inside the repository, e.g. "docs/notes.md"'),
      content: z.string().describe('The complete new file content as text'),
      message: z.string().min(1).describe('Commit message'),
      sha: z.string().optional().describe('Blob sha of the file being replaced; required to update an existing file'),
      branch: z.string().optional().describe('Existing branch to commit to (default: the default branch)'),
    }),
    async run(args, ctx) {
      const result = await githubRequest<{
        content: { path: string; sha: string; html_url: string };
        commit: { sha: string; message: string; html_url: string };
      }>(ctx, 'PUT', contentsPath(args.owner, args.repo, args.path), {
        message: args.message,
        content: Buffer.from(args.content, 'utf8').toString('base64'),
        sha: args.sha,
        branch: args.branch,
      });
      return {
        path: result.content.path,
        sha: result.content.sha,
        html_url: result.content.html_url,
        commit: { sha: result.commit.sha, message: result.commit.message, html_url: result.commit.html_url },
      };
    },
  }),
];
