/**
 * The outcome of one tool call, shared by the engine, the workflow and both front ends.
 * Pure types and constructors: safe in workflows.
 */

import type { ApprovalSummary } from './approval-summary.js';
import type { ApprovalWaitStatus } from './approvals.js';

/** Every code a failed call answers with (the OpenAPI document lists these). */
export const TOOL_ERROR_CODES = [
  'forbidden',
  'provider_disabled',
  'not_found',
  'not_connected',
  'needs_reauth',
  'invalid_arguments',
  'tool_failed',
  'outcome_unknown',
  'rate_limited',
  'timeout',
  'approval_required',
  'cancelled',
] as const;

export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number];

export interface ToolFailure {
  code: ToolErrorCode;
  message: string;
  /** invalid_arguments: what does not fit the schema. */
  issues?: { path: (string | number)[]; message: string }[];
  /** tool_failed / rate_limited: the provider's HTTP status. */
  status?: number;
  /** not_connected / needs_reauth: which integration to connect; rate_limited: which one is limiting. */
  integration?: string;
  /** rate_limited: whole seconds (0 to an hour) until the service takes calls again. */
  retryAfterSec?: number;
  /** needs_reauth after a step-up challenge: what the service needs the new consent to grant. */
  reason?: string;
  /** approval_required: the approval to wait for (wait_for_approval). */
  approvalId?: string;
  /** approval_required: the portal page where a person approves or denies the call. */
  url?: string;
  /** approval_required: what will run, as the person sees it (secrets redacted, long values cut). */
  summary?: ApprovalSummary;
  /** approval_required on a resubmitted request: where the approval stands (core/approvals.ts). */
  approvalStatus?: ApprovalWaitStatus;
}

/**
 * A cut result (`truncated`) also names where the whole one is kept (`resultRef`, readable with
 * read_result by its own user) and its size (`totalBytes`, the bytes of its JSON text).
 */
export type ToolOutcome =
  | { ok: true; result: unknown; truncated?: true; originalBytes?: number; resultRef?: string; totalBytes?: number }
  | { ok: false; error: ToolFailure };

/** One entry of a batch, as the workflow carries it: names and arguments, never credentials. */
export interface ToolCallRequest {
  /** Qualified name, `<provider>__<tool>`. */
  tool: string;
  args: Record<string, unknown>;
  /** Connection id, account id or label. */
  account?: string;
}

export const failure = (code: ToolErrorCode, message: string, extra: Omit<ToolFailure, 'code' | 'message'> = {}): ToolOutcome => ({
  ok: false,
  error: { code, message, ...extra },
});

/** At most this many calls of one batch run at once. */
export const BATCH_CONCURRENCY = 8;

/**
 * The outcome of a call whose result never came back (its worker was lost, its time ran out, or
 * it was cut off and re-run): it may or may not have reached the service, so it is not retried.
 * `outcome_unknown`, not `tool_failed`, which an agent retries: a write could run twice.
 */
export const outcomeUnknown = (tool: string, timedOut = false): ToolOutcome =>
  timedOut
    ? failure('timeout', `${tool} did not report within its deadline; its outcome is unknown, so check before retrying a write.`)
    : failure('outcome_unknown', `${tool} was interrupted; its outcome is unknown, so check before retrying a write.`);

/** How a call whose result was lost is audited: `timeout` past its deadline, else `outcome_unknown`. */
export type LostCallCode = 'timeout' | 'outcome_unknown';
