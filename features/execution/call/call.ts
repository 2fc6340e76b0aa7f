import type { ToolCallRequest, ToolOutcome } from '../../../core/execution.js';
import type { TenantSettings } from '../../../core/policy.js';
import type { ProviderRegistry, ToolEntry } from '../../../providers/registry.js';
import type { Provider } from '../../../providers/sdk/index.js';
import type { Account, SealedCredentialRow } from '../../accounts/store/accounts.js';
import type { LoadedCredential } from '../../accounts/store/credential-seal.js';
import type { UserAndTenant } from '../../accounts/store/user-and-tenant.js';
import type { ActivityDeps } from '../../activity-deps.js';
import type { CredentialStore } from '../../connections/credentials.js';
import type { AccountSlots, SlotRelease } from '../account-slots.js';
import type { ToolCallClaim } from '../store/audit.js';

export interface ExecuteToolInput {
  /** Unique per call (workflow id + index): the audit row is written once under it. */
  callKey: string;
  tenantId: string;
  userId: string;
  call: ToolCallRequest;
  /** Default CONNECTIONS_TOOL_TIMEOUT_MS (agent workflows leave it to the deployment). */
  timeoutMs?: number;
  /** Default CONNECTIONS_TOOL_RESULT_MAX_BYTES. */
  maxResultBytes?: number;
  /**
   * Results (JSON bytes) above this are stored sealed and answered as a reference (a tool batch
   * sets it; see core/stored-results.ts). Unset: every result is answered inline, cut at
   * maxResultBytes — a cut one with its `resultRef`.
   */
  inlineResultMaxBytes?: number;
  /**
   * Claim the call key (the audit row, no outcome yet) before anything reaches the service, and
   * answer "outcome unknown" if it was claimed before. For a local activity, which Temporal runs
   * again when the workflow task that ran it is lost; a normal activity with one attempt needs none.
   */
  claimFirst?: boolean;
  /**
   * An agent's workflow asks: when the call needs approval, the approval workflow signals this
   * workflow once it is settled (switchboard/workflow waits on that signal).
   */
  notifyApproval?: boolean;
}

/** A call with every default filled in (callInput). */
export type CallInput = Required<ExecuteToolInput>;

/** How a call runs: `approved` when an approval workflow runs a call a person approved (no second gate). */
export interface RunOptions {
  approved?: boolean;
}

/** What the call's audit row needs to learn while the call runs. */
export interface CallAudit {
  account?: Account;
  /** The account slot the call holds: given back with the call's audit row (recordCallOutcome). */
  slot?: SlotRelease;
  /** The caller's user and tenant, when the claim's statement read them (claimToolCallReadingCaller). */
  caller?: UserAndTenant;
}

export type ExecuteDeps = Pick<ActivityDeps, 'pool' | 'keyring' | 'registry' | 'logger' | 'config' | 'toolServices' | 'temporal'>;

/** What the steps share for the runner's lifetime: its dependencies, the account slots and the credential store. */
export interface Runner {
  deps: ExecuteDeps;
  slots: AccountSlots;
  credentials: CredentialStore;
}

/**
 * A call that passed policy, and what the later steps learn about it: its arguments, its
 * credential, and (an upstream server's tool) its entry once listed with that credential.
 */
export interface ToolCall {
  input: CallInput;
  options: RunOptions;
  /** The caller's tenant's view: its own upstream servers, never another tenant's. */
  registry: ProviderRegistry;
  provider: Provider;
  integration: string;
  settings: TenantSettings;
  /** An upstream server's provider: its tool's entry is known once listed with the caller's credential. */
  listed?: Provider;
  entry?: ToolEntry;
  /** The account the call runs on; undefined for a provider without auth. */
  account?: Account;
  /** The account's sealed credential as listed with it (CredentialStore.load opens it). */
  sealed?: SealedCredentialRow;
  args?: unknown;
  loaded?: LoadedCredential;
  /** The credential's secrets as loaded: a failed refresh's text (the token endpoint's words) is redacted with them. */
  secrets: string[];
}

/** A step's answer when the call stops there (every outcome has `ok`; nothing a step passes on does). */
export const isOutcome = <T extends object>(value: T | ToolOutcome): value is ToolOutcome => 'ok' in value;

/** Who called which tool with which argument names: the part of the audit row known before the call. */
export const auditIdentity = (input: ExecuteToolInput): ToolCallClaim => ({
  callKey: input.callKey,
  tenantId: input.tenantId,
  actorUserId: input.userId,
  tool: input.call.tool,
  argNames: Object.keys(input.call.args ?? {}),
});
