import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { textToAdf } from '../adf.js';
import { cloudIdArg, issueKeyArg, issuePath, jiraRequest } from '../api.js';
import type { JiraComment } from '../shapes.js';

export const commentTools = [
  defineTool({
    name: 'add_comment',
    description:
      'Add a comment to a Jira issue. body is plain text, converted to Atlassian Document Format (blank lines separate paragraphs, single newlines become line breaks). Returns {id, author, created} of the new comment; get_issue shows it among the comments.',
    access: 'write',
    scopes: ['write:jira-work'],
    input: z.object({ cloudId: cloudIdArg, issueKey: issueKeyArg, body: z.string().min(1).describe('Comment text') }),
    async run(args, ctx) {
      const comment = await jiraRequest<JiraComment>(ctx, args.cloudId, 'POST', `${issuePath(args.issueKey)}/comment`, {
        body: textToAdf(args.body),
      });
      return { id: comment.id, author: comment.author?.displayName ?? null, created: comment.created };
    },
  }),
];
