import type { CallerOwner } from '../../core/caller.js';
import type { Credential, Provider, ToolContext, ToolLogger } from '../../providers/sdk/index.js';
import { createToolContext } from '../../providers/sdk/tool-context.js';
import type { ConnectionServices } from './services.js';

/**
 * The tool context of a check the server makes outside a tool call (identify after consent, an
 * API key's test call, a cookie session's check): the same API-base fence and the operator's
 * response cap as a tool call, under its own short deadline.
 */
export function checkContext(
  ctx: Pick<ConnectionServices, 'registry' | 'config'>,
  input: {
    provider: Provider;
    credential: Credential;
    caller: CallerOwner;
    logger: ToolLogger;
    timeoutMs: number;
  },
): ToolContext {
  return createToolContext({
    provider: input.provider,
    credential: input.credential,
    apiBaseUrl: ctx.registry.apiBaseUrl(input.provider.manifest.name),
    signal: AbortSignal.timeout(input.timeoutMs),
    logger: input.logger,
    caller: input.caller,
    maxResponseBytes: ctx.config.CONNECTIONS_PROVIDER_RESPONSE_MAX_BYTES,
  });
}
