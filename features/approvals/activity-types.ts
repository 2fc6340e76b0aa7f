import type { ApprovalStatus } from '../../core/approvals.js';

/**
 * The approval workflow's activities, by type (the workflow reaches them by name). Implemented in
 * features/approvals/approval-activities.ts, next to the execute activity whose code runs the approved call.
 */
export interface ApprovalActivities {
  /** Expires (or cancels) an undecided approval; answers its status afterwards (a recorded decision wins). */
  closeUndecidedApproval(input: { approvalId: string; status: 'EXPIRED' | 'CANCELLED' }): Promise<ApprovalStatus>;
  /** The approval's status as recorded in the database (a decision is only what the portal recorded there). */
  approvalStatus(input: { approvalId: string }): Promise<ApprovalStatus>;
  /** Runs the approved call once (claim, audit, deadline) and records its outcome; answers DONE. */
  runApprovedCall(input: { approvalId: string }): Promise<{ status: ApprovalStatus }>;
  /** Records "outcome unknown" for an approved call whose activity never reported. */
  recordLostApprovedCall(input: { approvalId: string; timedOut: boolean }): Promise<{ status: ApprovalStatus }>;
}
