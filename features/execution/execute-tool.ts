import type { LostCallCode } from '../../core/execution.js';
import type { CallOutcome } from '../../core/stored-results.js';
import { tokenRefreshes } from '../../platform/telemetry/metrics.js';
import { CredentialStore } from '../connections/credentials.js';
import { AccountSlots } from './account-slots.js';
import type { CallAudit, ExecuteDeps, ExecuteToolInput, Runner, RunOptions } from './call/call.js';
import { auditIdentity } from './call/call.js';
import { callInput, withOpenedArguments } from './call/call-input.js';
import { claimAndRun } from './call/claim.js';
import { runToolCall } from './call/pipeline.js';
import { recordCallOutcome } from './call/record-outcome.js';
import { recordToolCall } from './store/audit.js';

export type { ExecuteToolInput } from './call/call.js';
export { MAX_SECRET_ARGUMENT_VALUES } from './call/parse-arguments.js';

/**
 * The execute activity and the approval workflow's run of an approved call share one runner, so
 * an approved call goes through the same policy, claim, deadline and audit as any other. The
 * call's steps are in tool-call/pipeline.ts; failures are returned as outcomes, never thrown.
 */
export function createToolCallRunner(deps: ExecuteDeps) {
  const runner: Runner = {
    deps,
    slots: new AccountSlots(deps.pool, deps.config.CONNECTIONS_ACCOUNT_MAX_CONCURRENCY, (err) =>
      deps.logger.warn({ err: err.message }, 'could not renew account slots'),
    ),
    credentials: new CredentialStore(deps.pool, deps.keyring, deps.registry, (provider, outcome) =>
      tokenRefreshes.inc({ provider, outcome }),
    ),
  };

  return {
    async executeToolCall(sealed: ExecuteToolInput, options: RunOptions = {}): Promise<CallOutcome> {
      const { request, refusal } = withOpenedArguments(deps.keyring, sealed);
      const input = callInput(deps.config, request);
      const started = performance.now();
      const audit: CallAudit = {};
      const outcome = await claimAndRun(deps, input, audit, refusal, () => runToolCall(runner, input, audit, options));
      await recordCallOutcome(deps, input, audit, outcome, performance.now() - started);
      return outcome;
    },

    /** The audit row of a call whose activity never reported (worker lost, deadline passed). */
    async recordLostToolCall(sealed: ExecuteToolInput & { errorCode: LostCallCode }): Promise<void> {
      const { request } = withOpenedArguments(deps.keyring, sealed);
      await recordToolCall(deps.pool, {
        ...auditIdentity(request),
        ownerUserId: null,
        accountId: null,
        outcome: 'error',
        errorCode: sealed.errorCode,
        durationMs: 0,
      });
    },
  };
}

export type ToolCallRunner = ReturnType<typeof createToolCallRunner>;

/** The execute activities as Temporal registers them (a workflow's call can never claim to be approved). */
export function createExecuteActivities(deps: ExecuteDeps, runner: ToolCallRunner = createToolCallRunner(deps)) {
  return {
    executeToolCall: (request: ExecuteToolInput): Promise<CallOutcome> => runner.executeToolCall(request),
    recordLostToolCall: runner.recordLostToolCall,
  };
}

export type ExecuteActivities = ReturnType<typeof createExecuteActivities>;
