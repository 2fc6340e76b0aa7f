import { z } from 'zod';
import { defineTool } from '../../../sdk/index.js';
import { cloudIdArg, jiraRequest } from '../api.js';

interface JiraProject {
  id: string;
  key: string;
  name: string;
  projectTypeKey?: string;
  issueTypes?: { name: string; subtask?: boolean }[];
}

export const projectTools = [
  defineTool({
    name: 'list_projects',
    description:
      'List the Jira projects the user can see, as {projects:[{id, key, name, projectTypeKey, issueTypes}], total, isLast, startAt}. query filters by key or name (case-insensitive substring). maxResults defaults to 50 (max 100); page with startAt. Use key as projectKey and an issueTypes entry as issueType in create_issue, or in JQL ("project = KEY").',
    access: 'read',
    scopes: ['read:jira-work'],
    input: z.object({
      cloudId: cloudIdArg,
      query: z.string().optional().describe('Filter by project key or name'),
      maxResults: z.number().int().min(1).max(100).default(50).describe('Projects per page (Jira default 50)'),
      startAt: z.number().int().min(0).default(0).describe('Index of the first project to return'),
    }),
    async run(args, ctx) {
      const params = new URLSearchParams({ startAt: String(args.startAt), maxResults: String(args.maxResults), expand: 'issueTypes' });
      if (args.query) params.set('query', args.query);
      const page = await jiraRequest<{ values: JiraProject[]; total: number; isLast: boolean; startAt: number }>(
        ctx,
        args.cloudId,
        'GET',
        `/project/search?${params}`,
      );
      return {
        projects: page.values.map((p) => ({
          id: p.id,
          key: p.key,
          name: p.name,
          projectTypeKey: p.projectTypeKey ?? null,
          issueTypes: (p.issueTypes ?? []).map((t) => t.name),
        })),
        total: page.total,
        isLast: page.isLast,
        startAt: page.startAt,
      };
    },
  }),
];
