/**
 * An approval's states and what waiting on one answers. Pure: the approval workflow, the waiter,
 * the meta-tool and the portal all read them from here.
 */

/** PENDING until a person decides or it expires; APPROVED runs the call once (RUNNING, then DONE). */
export type ApprovalStatus = 'PENDING' | 'APPROVED' | 'RUNNING' | 'DONE' | 'DENIED' | 'EXPIRED' | 'CANCELLED';

/** What `wait_for_approval` answers. */
export type ApprovalWaitStatus = 'PENDING' | 'APPROVED' | 'DENIED' | 'EXPIRED';

export const APPROVAL_WAIT_DEFAULT_SEC = 300;
export const APPROVAL_WAIT_MAX_SEC = 900;

/** Whether nothing more will happen to the approval (its call ran, or never will). */
export const isSettled = (status: ApprovalStatus): boolean =>
  status === 'DONE' || status === 'DENIED' || status === 'EXPIRED' || status === 'CANCELLED';

/** A cancelled approval answers EXPIRED: like an expired one, its call never runs and a new call asks again. */
export function approvalWaitStatus(status: ApprovalStatus): ApprovalWaitStatus {
  switch (status) {
    case 'PENDING':
      return 'PENDING';
    case 'APPROVED':
    case 'RUNNING':
    case 'DONE':
      return 'APPROVED';
    case 'DENIED':
      return 'DENIED';
    default:
      return 'EXPIRED';
  }
}

/** The portal page of one approval, for the human. */
export const approvalPageUrl = (config: { PUBLIC_BASE_URL: string }, approvalId: string): string =>
  `${config.PUBLIC_BASE_URL}/portal/approvals/${encodeURIComponent(approvalId)}`;
