import { z } from 'zod';
import { MetaToolError } from '../../../core/errors.js';
import { inputJsonSchema } from '../../../core/json-schema.js';
import { defineMetaTool } from '../../meta-tool.js';
import { approvalMark, loadCallerView, mayUse } from '../caller-view.js';

export const getToolSchema = defineMetaTool({
  name: 'get_tool_schema',
  description:
    'The JSON Schema of a tool\'s arguments, by the name search_tools gave (e.g. "github_create_issue"). Answers {schema}, and ' +
    'needsApproval: true when a person must approve each call first (tell them before calling).',
  input: z.object({ tool: z.string().min(1).max(200) }).strict(),
  async handler(ctx, caller, args) {
    const entry = ctx.registry.toolByFlatName(args.tool);
    // A tool hidden by policy answers like one that does not exist.
    const view = await loadCallerView(ctx, caller);
    if (!entry || !mayUse(view, entry)) throw new MetaToolError({ error: 'Tool not found' }, 404);
    return { schema: inputJsonSchema(entry.tool), ...approvalMark(view, entry) };
  },
});
