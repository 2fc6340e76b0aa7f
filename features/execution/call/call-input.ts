import { failure, type ToolOutcome } from '../../../core/execution.js';
import { MAX_ARGUMENT_NESTING, nestsDeeperThan } from '../../../core/json-depth.js';
import { workflowResultLimit } from '../../../core/stored-results.js';
import type { Keyring } from '../../../platform/database/keyring.js';
import { hasSealedArguments, openSealedArguments, SealedArgumentError } from '../store/sealed-arguments.js';
import type { CallInput, ExecuteDeps, ExecuteToolInput } from './call.js';

/** A request with the deployment's defaults filled in. */
export function callInput(config: ExecuteDeps['config'], request: ExecuteToolInput): CallInput {
  const inline = (bytes: number) => (request.inlineResultMaxBytes === undefined ? workflowResultLimit(bytes) : bytes);
  return {
    claimFirst: false,
    notifyApproval: false,
    ...request,
    timeoutMs: request.timeoutMs ?? config.CONNECTIONS_TOOL_TIMEOUT_MS,
    // Every result inline (an agent's workflow) is cut within what a workflow can carry.
    maxResultBytes: inline(request.maxResultBytes ?? config.CONNECTIONS_TOOL_RESULT_MAX_BYTES),
    inlineResultMaxBytes: request.inlineResultMaxBytes ?? Number.POSITIVE_INFINITY,
  };
}

/**
 * The call with its sealed arguments opened (a tool batch's input seals secret ones:
 * features/execution/batch/seal-arguments.ts), or, when one does not open, the call as it came and the
 * invalid_arguments answer: nothing runs.
 */
export function withOpenedArguments<T extends ExecuteToolInput>(keyring: Keyring, input: T): { request: T; refusal?: ToolOutcome } {
  // An agent's workflow passes its arguments straight here (the meta-tools refuse deeper ones at the
  // front): walked recursively below, so refused by name rather than overflowing the stack.
  if (nestsDeeperThan(input.call.args, MAX_ARGUMENT_NESTING)) {
    return {
      request: input,
      refusal: failure('invalid_arguments', `Arguments of ${input.call.tool} are nested more than ${MAX_ARGUMENT_NESTING} levels deep.`),
    };
  }
  if (!hasSealedArguments(input.call.args)) return { request: input };
  try {
    const owner = { tenantId: input.tenantId, userId: input.userId, tool: input.call.tool };
    return { request: { ...input, call: { ...input.call, args: openSealedArguments(keyring, owner, input.call.args) } } };
  } catch (err) {
    if (!(err instanceof SealedArgumentError)) throw err;
    return { request: input, refusal: failure('invalid_arguments', `Arguments of ${input.call.tool} are not accepted: ${err.message}.`) };
  }
}
