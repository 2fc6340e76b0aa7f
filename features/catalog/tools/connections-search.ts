import { z } from 'zod';
import type { Caller } from '../../../core/caller.js';
import { formatIssues, reportedIssues } from '../../../core/errors.js';
import { inputJsonSchema } from '../../../core/json-schema.js';
import { toolAccessFor } from '../../../core/tool-overrides.js';
import type { ServiceContext } from '../../context.js';
import { defineMetaTool } from '../../meta-tool.js';
import { compositeSearch, hasRemoteSources } from '../../sources/composite.js';
import { approvalMark, connectionState, searchVisibleTools } from '../caller-view.js';

/** Failures of the agent surface are answers, `{ok: false, error: {code, message, issues}}`. */
export const invalidAgentArguments = (issues: readonly z.core.$ZodIssue[]) => ({
  ok: false,
  error: {
    code: 'invalid_arguments',
    message: `Invalid arguments: ${formatIssues(issues)}`,
    issues: reportedIssues(issues).map((i) => ({ path: i.path.map(String), message: i.message })),
  },
});

export const connectionsSearch = defineMetaTool({
  name: 'connections_search',
  description:
    'Search the tools of connected services by keywords, such as "list issues". Answers {ok, results}: each result has the ' +
    'qualified name to pass to connections_execute, description, access (read|write|destructive), provider, connected, ' +
    'status, accounts, the JSON schema of its arguments as parameters, needsApproval: true when a person must approve each call ' +
    'first, and a hint when the user must connect first.',
  input: z
    .object({
      query: z.string().min(1).max(200),
      provider: z.string().min(1).max(100).optional(),
      limit: z.number().int().min(1).max(20).default(8),
    })
    .strict(),
  invalidArguments: invalidAgentArguments,
  handler: (ctx, caller, args) =>
    hasRemoteSources(ctx.config) ? compositeSearch(ctx, caller, args, () => searchHere(ctx, caller, args)) : searchHere(ctx, caller, args),
});

/** This instance's own answer. */
async function searchHere(ctx: ServiceContext, caller: Caller, args: { query: string; provider?: string; limit: number }) {
  const { view, entries, unavailable } = await searchVisibleTools(ctx, caller, {
    text: args.query,
    provider: args.provider,
    limit: args.limit,
  });
  return {
    ok: true,
    results: entries.map((entry) => {
      const state = connectionState(ctx, view, entry);
      return {
        name: entry.qualifiedName,
        description: entry.tool.description,
        access: toolAccessFor(view.settings, entry),
        provider: entry.provider.manifest.name,
        connected: state.connected,
        ...(state.status && { status: state.status }),
        accounts: state.accounts,
        parameters: inputJsonSchema(entry.tool),
        ...approvalMark(view, entry),
        ...(state.hint && { hint: state.hint }),
      };
    }),
    ...(unavailable.length && { unavailable }),
  };
}
