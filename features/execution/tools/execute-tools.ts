import { z } from 'zod';
import type { ToolFailure, ToolOutcome } from '../../../core/execution.js';
import { portalIntegrationUrl } from '../../../core/urls.js';
import type { ServiceContext } from '../../context.js';
import { defineMetaTool } from '../../meta-tool.js';
import { runToolBatch } from '../batch/run-batch.js';

const MAX_EXECUTIONS = 500;

/** The nine-meta-tool shapes: `{result}` or `{error}`; NOT_CONNECTED and RATE_LIMITED carry extra fields. */
export function metaEntry(ctx: ServiceContext, flatName: string, outcome: ToolOutcome): Record<string, unknown> {
  if (outcome.ok) {
    if (!outcome.truncated) return { result: outcome.result };
    // A cut result names where the whole one is kept, for read_result.
    const ref = outcome.resultRef === undefined ? {} : { resultRef: outcome.resultRef, totalBytes: outcome.totalBytes };
    return { result: outcome.result, truncated: true, originalBytes: outcome.originalBytes, ...ref };
  }
  return metaError(ctx, flatName, outcome.error);
}

function metaError(ctx: ServiceContext, flatName: string, error: ToolFailure): Record<string, unknown> {
  switch (error.code) {
    case 'not_connected': {
      const integration = error.integration ?? '';
      const apikey = ctx.registry.get(integration)?.manifest.auth === 'apikey';
      return {
        error: 'NOT_CONNECTED',
        integration,
        message: apikey
          ? `${integration} not connected. Ask the user to add it in the portal: ${portalIntegrationUrl(ctx.config, integration)}`
          : `${integration} not connected. Use connect('${integration}') to connect.`,
      };
    }
    case 'not_found':
      return { error: 'Tool not found' };
    case 'invalid_arguments':
      return {
        error: `Invalid arguments for ${flatName}: ${(error.issues ?? []).map((i) => `${i.path.length ? i.path.join('.') : '(arguments)'}: ${i.message}`).join('; ')}`,
      };
    case 'needs_reauth':
      return { error: `${error.message} Use connect('${error.integration}') to reconnect.` };
    case 'approval_required':
      // Like NOT_CONNECTED, a code the agent acts on: give the human the url, then wait_for_approval.
      return {
        error: 'APPROVAL_REQUIRED',
        approvalId: error.approvalId,
        url: error.url,
        summary: error.summary,
        ...(error.approvalStatus && { approvalStatus: error.approvalStatus }),
        message: error.message,
      };
    case 'outcome_unknown':
      // The call may have run: an agent must check before running the entry again.
      return { error: 'OUTCOME_UNKNOWN', message: error.message };
    case 'rate_limited':
      // Like NOT_CONNECTED, a code the agent can act on: wait retryAfterSec, then run the entry again.
      return { error: 'RATE_LIMITED', integration: error.integration, retryAfterSec: error.retryAfterSec, message: error.message };
    default:
      return { error: error.message };
  }
}

export const executeTools = defineMetaTool({
  name: 'execute_tools',
  description:
    'Run tools. executions: [{tool, args}] — tool is a name from search_tools, args an object (default {}), optional account ' +
    '(id or label from list_connections). 1 to 500 entries, up to 8 running at once; results[i] answers executions[i] as {result} or {error}. ' +
    'A NOT_CONNECTED error names the integration to connect; an APPROVAL_REQUIRED error means a person must approve the call first: ' +
    'give them its url, then call wait_for_approval with its approvalId (the other entries ran); a RATE_LIMITED error says after how many seconds (retryAfterSec) to try again; an OUTCOME_UNKNOWN error means the call may have run and its answer was lost: check before running it again. Pass a requestId to make a retry safe: the same requestId returns ' +
    'the recorded results and runs nothing twice.',
  input: z
    .object({
      executions: z
        .array(
          z
            .object({
              tool: z.string().min(1).max(200),
              args: z.record(z.string(), z.unknown()).default({}),
              account: z.string().min(1).max(200).optional(),
            })
            .strict(),
        )
        .min(1)
        .max(MAX_EXECUTIONS),
      requestId: z.string().min(1).max(200).optional(),
    })
    .strict(),
  async handler(ctx, caller, args, call) {
    const calls = args.executions.map((e) => ({
      tool: ctx.registry.toolByFlatName(e.tool)?.qualifiedName ?? e.tool,
      args: e.args,
      account: e.account,
    }));
    const outcomes = await runToolBatch(ctx, caller, calls, { requestId: args.requestId, progress: call.progress, ...call.batch });
    return { results: outcomes.map((outcome, i) => metaEntry(ctx, args.executions[i].tool, outcome)) };
  },
});
