import { failure, type ToolOutcome } from '../../../core/execution.js';
import { providerErrorText } from '../../../core/result-limits.js';
import type { ProviderRegistry, ToolEntry } from '../../../providers/registry.js';
import { ProviderHttpError } from '../../../providers/sdk/http.js';
import type { Credential, Provider } from '../../../providers/sdk/index.js';
import { type Account, setAccountStatus } from '../../accounts/store/accounts.js';
import type { LoadedCredential } from '../../accounts/store/credential-seal.js';
import { toToolCredential } from '../../connections/credentials.js';
import { approvalGate } from './approval-gate.js';
import type { CallInput, ExecuteDeps, Runner, ToolCall } from './call.js';
import { parseArguments } from './parse-arguments.js';
import { needsReauth, stepUp } from './reauth.js';

/** listedTool's answer to a 401 on an OAuth token it may refresh. */
const REFRESH_AND_RETRY = Symbol('refresh-and-retry');

/**
 * An upstream server's tool as this account sees it (listed with its credential when stale), into
 * `call.entry`; then its arguments and its approval gate, which a declared tool passed before its
 * credential was loaded. A 401 on an OAuth token: one refresh, one more listing (the tool call
 * gets the same one on its own 401).
 */
export async function resolveListedTool({ deps, credentials }: Runner, call: ToolCall): Promise<ToolOutcome | undefined> {
  const { listed, account } = call;
  if (!listed) return undefined;
  const credential = (loaded?: LoadedCredential): Credential => (loaded ? toToolCredential(loaded.credential) : { type: 'none' });
  let found = await listedTool(deps, call.registry, listed, call.input, credential(call.loaded), account);
  if (found === REFRESH_AND_RETRY && account && call.loaded) {
    call.loaded = await credentials.refresh(account, call.loaded.version);
    found = await listedTool(deps, call.registry, listed, call.input, credential(call.loaded), account, false);
  }
  if (found === REFRESH_AND_RETRY || !('tool' in found)) return found as ToolOutcome;
  call.entry = found;
  return (await parseArguments(call)) ?? (await approvalGate(deps, call));
}

/**
 * The entry of an upstream MCP server's tool for this credential, or the failure to answer: the
 * server does not offer it (not_found), refused the credential (needs_reauth), or could not list;
 * REFRESH_AND_RETRY when an OAuth token was refused (401) and `mayRefresh`.
 */
async function listedTool(
  deps: Pick<ExecuteDeps, 'pool'>,
  registry: ProviderRegistry,
  provider: Provider,
  input: CallInput,
  credential: Credential,
  account?: Account,
  mayRefresh = true,
): Promise<ToolEntry | ToolOutcome | typeof REFRESH_AND_RETRY> {
  const integration = provider.manifest.name;
  const signal = AbortSignal.timeout(input.timeoutMs);
  try {
    const found = await registry.dynamicTool(provider, input.call.tool, credential, signal);
    return found ?? failure('not_found', `No tool is named ${input.call.tool}.`);
  } catch (err) {
    if (mayRefresh && err instanceof ProviderHttpError && err.status === 401 && account && credential.type === 'oauth2') {
      return REFRESH_AND_RETRY;
    }
    if (err instanceof ProviderHttpError && (err.status === 401 || err.status === 403) && account) {
      const stepped = await stepUp(deps, err, integration, account, toolSecrets(credential));
      if (stepped) return stepped;
      await setAccountStatus(deps.pool, account.tenantId, account.id, 'needs_reauth');
      return needsReauth(integration, account);
    }
    if (signal.aborted) return failure('timeout', `${integration} did not list its tools within ${input.timeoutMs} ms.`);
    const why = err instanceof ProviderHttpError ? `answered HTTP ${err.status}` : (err as Error).message;
    return failure('tool_failed', `${integration} could not list its tools: ${providerErrorText(why, toolSecrets(credential))}`);
  }
}

/** The secret strings of a tool credential, for redaction. */
const toolSecrets = (credential: Credential): string[] =>
  credential.type === 'apikey' ? Object.values(credential.fields) : credential.type === 'oauth2' ? [credential.accessToken] : [];
