import { z } from 'zod';

/** Input fields several GitHub tools share. */

export const repoRef = {
  owner: z.string().min(1).describe('Account or organization that owns the repository, e.g. "octocat"'),
  repo: z.string().min(1).describe('Repository name without the owner, e.g. "hello-world"'),
};

export const paging = {
  perPage: z.number().int().min(1).max(100).default(30).describe('Results per page (GitHub default 30, max 100)'),
  page: z.number().int().min(1).default(1).describe('Page number, starting at 1'),
};

export const issueNumber = z.number().int().min(1).describe('Issue or pull request number, e.g. 42');
