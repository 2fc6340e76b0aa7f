import { z } from 'zod';
import { defineMetaTool } from '../../meta-tool.js';
import { approvalMark, searchVisibleTools } from '../caller-view.js';

export const searchTools = defineMetaTool({
  name: 'search_tools',
  description:
    'Find tools by keywords, e.g. "github repos" or "create jira ticket". Answers {tools: [{name, description, integration}]}, ' +
    'best match first; needsApproval: true marks a tool whose calls a person must approve first. Read the description before calling; call get_tool_schema when the arguments are not obvious, then execute_tools.',
  input: z
    .object({
      query: z.string().min(1).max(200).describe('Keywords, such as "list issues".'),
      integration: z.string().min(1).max(100).optional().describe('Only tools of this integration.'),
      limit: z.number().int().min(1).max(20).default(8),
    })
    .strict(),
  async handler(ctx, caller, args) {
    const { view, entries, unavailable } = await searchVisibleTools(ctx, caller, {
      text: args.query,
      provider: args.integration,
      limit: args.limit,
    });
    return {
      tools: entries.map((entry) => ({
        name: entry.flatName,
        description: entry.tool.description,
        integration: entry.provider.manifest.name,
        ...approvalMark(view, entry),
      })),
      ...(unavailable.length && { unavailable }),
    };
  },
});
