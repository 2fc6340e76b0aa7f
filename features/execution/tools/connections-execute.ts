import { z } from 'zod';
import { invalidAgentArguments } from '../../catalog/tools/connections-search.js';
import { defineMetaTool } from '../../meta-tool.js';
import { compositeExecute, hasRemoteSources } from '../../sources/composite.js';
import { runToolBatch } from '../batch/run-batch.js';

export const connectionsExecute = defineMetaTool({
  name: 'connections_execute',
  description:
    'Run one tool found by connections_search. name: the qualified name (<provider>__<tool>); arguments: an object matching ' +
    'its parameters; account: optional connection id, account id or label (default: your default account, else the ' +
    "organisation's). Answers {ok: true, result} or {ok: false, error: {code, message}}; code not_connected or needs_reauth " +
    'means ask the user to connect; approval_required means a person must approve it first: give them error.url, then ' +
    'call wait_for_approval with error.approvalId; rate_limited means the service asks to wait error.retryAfterSec seconds first; outcome_unknown means the call may have reached the service and its answer was lost: check before retrying it. requestId makes a retry safe: the same requestId returns the recorded result.',
  input: z
    .object({
      name: z.string().min(1).max(200),
      arguments: z.record(z.string(), z.unknown()).default({}),
      account: z.string().min(1).max(200).optional(),
      requestId: z.string().min(1).max(200).optional(),
    })
    .strict(),
  invalidArguments: invalidAgentArguments,
  handler(ctx, caller, args, { batch }) {
    const here = async (call: typeof args) => {
      const [outcome] = await runToolBatch(ctx, caller, [{ tool: call.name, args: call.arguments, account: call.account }], {
        requestId: call.requestId,
        ...batch,
      });
      return outcome;
    };
    return hasRemoteSources(ctx.config) ? compositeExecute(ctx, caller, args, here, { joinOnly: batch?.joinOnly }) : here(args);
  },
});

/** The two agent tools, opt-in; their names are exported for tool definitions to select. */
export const CONNECTION_TOOL_NAMES = ['connections_search', 'connections_execute'] as const;
