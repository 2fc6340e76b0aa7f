import { secretArgumentTexts } from '../../../core/approval-summary.js';
import { cachedInputJsonSchema } from '../../../core/json-schema.js';
import type { CallOutcome } from '../../../core/stored-results.js';
import { createToolContext } from '../../../providers/sdk/tool-context.js';
import type { LoadedCredential } from '../../accounts/store/credential-seal.js';
import { secretsOf, toToolCredential } from '../../connections/credentials.js';
import { deliverResult } from '../deliver-result.js';
import type { CallAudit, Runner, ToolCall } from './call.js';
import { isOutcome } from './call.js';
import { callFailure } from './call-failure.js';
import { callDeadline, takeAccountSlot, withinDeadline } from './deadline.js';
import { redactResult } from './redact-result.js';
import { runRefreshingOnce } from './refresh-once.js';

/**
 * Steps 4 to 6: the provider's tool runs under the deadline (after a turn on the account), with
 * one refresh and one retry on a 401; its result is redacted and delivered (cut, or stored and
 * answered as a reference). An error becomes the call's failure (callFailure).
 */
export async function invokeTool(runner: Runner, call: ToolCall, audit: CallAudit): Promise<CallOutcome> {
  const { deps } = runner;
  const { input, account, loaded } = call;
  const entry = call.entry!;
  const integration = entry.provider.manifest.name;
  const signal = callDeadline(input.timeoutMs);
  // The credential's secrets, and the arguments the tool's schema marks secret (a service may echo one back).
  const secrets = [
    ...(loaded ? secretsOf(loaded.credential) : []),
    ...secretArgumentTexts(input.call.args ?? {}, cachedInputJsonSchema(entry.tool)),
  ];
  const attempt = (current?: LoadedCredential) =>
    withinDeadline(
      signal,
      entry.tool.run(
        call.args,
        createToolContext({
          provider: entry.provider,
          credential: current ? toToolCredential(current.credential) : { type: 'none' },
          apiBaseUrl: call.registry.apiBaseUrl(integration),
          signal,
          logger: deps.logger.child({ tool: input.call.tool }),
          caller: { tenantId: input.tenantId, userId: input.userId },
          services: deps.toolServices,
          maxResponseBytes: deps.config.CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES,
        }),
      ),
    );

  const waited = await takeAccountSlot(runner, input, integration, account, audit, signal);
  if (waited) return waited;
  try {
    const ran = await runRefreshingOnce(runner, attempt, { integration, account, loaded, signal, secrets });
    if (isOutcome(ran)) return ran;
    const owner = { tenantId: input.tenantId, userId: input.userId, tool: input.call.tool };
    return await deliverResult(deps, owner, redactResult(ran.result, secrets), input);
  } catch (err) {
    const oauth = loaded?.credential.type === 'oauth2';
    return await callFailure(deps, err, {
      tool: input.call.tool,
      timeoutMs: input.timeoutMs,
      integration,
      account,
      oauth,
      signal,
      secrets,
    });
  }
}
