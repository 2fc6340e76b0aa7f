/**
 * Identifiers and Temporal names. Workflow ids say what they are, so an operator can find a run
 * in Temporal UI by reading it: `connection-<attemptId>`, `tool-batch-<batchId>`.
 * Pure string code: safe to import from workflows.
 */

export const connectionWorkflowId = (attemptId: string): string => `connection-${attemptId}`;
export const toolBatchWorkflowId = (batchId: string): string => `tool-batch-${batchId}`;

/** Prefixes make an id's kind visible in logs and URLs. */
export const ID_PREFIX = {
  tenant: 'ten_',
  user: 'usr_',
  apiKey: 'key_',
  account: 'acc_',
  jot: 'jot_',
} as const;

/** `approval-<approvalId>`: the workflow that waits for a person's decision and then runs the call. */
export const approvalWorkflowId = (approvalId: string): string => `approval-${approvalId}`;
