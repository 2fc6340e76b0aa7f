import type { CallOutcome } from '../../../core/stored-results.js';
import { approvalGate } from './approval-gate.js';
import type { CallAudit, CallInput, Runner, RunOptions } from './call.js';
import { isOutcome } from './call.js';
import { checkPolicy } from './check-policy.js';
import { invokeTool } from './invoke-tool.js';
import { resolveListedTool } from './listed-tool.js';
import { parseArguments } from './parse-arguments.js';
import { refuseUnusableAccount } from './reauth.js';
import { answeringCredentialErrors, resolveCredential } from './resolve-credential.js';

/**
 * One tool call, in the spec's order: policy → arguments → credential (refreshed when near
 * expiry) → the provider's tool under the deadline → on a 401, one refresh and one retry → the
 * result, redacted and cut. Each step answers the call's failure or lets it go on; failures are
 * returned, never thrown. The audit row is written by the runner, whatever the answer.
 */
export async function runToolCall(runner: Runner, input: CallInput, audit: CallAudit, options: RunOptions): Promise<CallOutcome> {
  const call = await checkPolicy(runner.deps, input, audit, options); // 1. the tool, the caller's role, account and scopes
  if (isOutcome(call)) return call;
  return (
    (await parseArguments(call)) ?? // 2. a declared tool's arguments (an upstream one's once listed)
    refuseUnusableAccount(call) ??
    (await approvalGate(runner.deps, call)) ?? // a call that waits for a person stops before its credential
    (await answeringCredentialErrors(
      call,
      async () =>
        (await resolveCredential(runner, call)) ?? // 3. the credential, refreshed when near expiry
        (await resolveListedTool(runner, call)) ?? // an upstream tool, listed with it
        invokeTool(runner, call, audit), // 4.–6. deadline, a 401's one refresh and retry, the result
    ))
  );
}
