/**
 * Which tool calls wait for a person's approval, and who may give it. Pure: the execute activity
 * (the gate), search, get_tool_schema, the portal and the decision all ask these same functions.
 */
import { ADMIN_ROLE, matchesAny, type TenantSettings } from './policy.js';
import { type NamedTool, toolAccessFor, toolOverrideFor } from './tool-overrides.js';

/** Whether destructive tools need approval when a tenant has not said. */
export const APPROVE_DESTRUCTIVE_DEFAULT = true;

/** The approver "role" that names the caller themself. */
export const SELF_APPROVER = 'self';

/** Who approves when a tenant has not said: the caller themself, and administrators. */
const DEFAULT_APPROVER_ROLES: readonly string[] = [SELF_APPROVER, ADMIN_ROLE];

/** How long an approval waits for a decision when a tenant has not said: 24 hours. */
const DEFAULT_APPROVAL_TTL_SEC = 24 * 3600;
/** The longest a tenant may let an approval wait: 30 days. */
const MAX_APPROVAL_TTL_SEC = 30 * 24 * 3600;

/**
 * Whether a call of this tool needs approval: a tool override says so (`always-ask`, `never-ask`:
 * core/tool-overrides.ts); else its unqualified name matches `approvalTools`, or its access for the
 * tenant is destructive and `approveDestructive` is on (the default).
 */
export function needsApproval(settings: TenantSettings, entry: NamedTool): boolean {
  const override = toolOverrideFor(settings, entry);
  if (override === 'always-ask') return true;
  if (override === 'never-ask') return false;
  if (settings.approvalTools?.length && matchesAny(settings.approvalTools, entry.tool.name)) return true;
  return toolAccessFor(settings, entry) === 'destructive' && (settings.approveDestructive ?? APPROVE_DESTRUCTIVE_DEFAULT);
}

export const approverRoles = (settings: TenantSettings): readonly string[] => settings.approverRoles ?? DEFAULT_APPROVER_ROLES;

/** Who approves calls on organisation accounts: `orgApproverRoles`, else the tenant's approver roles. */
export const orgApproverRoles = (settings: TenantSettings): readonly string[] => settings.orgApproverRoles ?? approverRoles(settings);

export const approvalTtlSec = (settings: TenantSettings): number =>
  Math.min(settings.approvalTtlSec ?? DEFAULT_APPROVAL_TTL_SEC, MAX_APPROVAL_TTL_SEC);

/**
 * Whether `approver` may decide a call `requesterUserId` made in `tenantId`: same tenant, and either
 * the approver is the requester and `self` is an approver role, or the approver holds one of the
 * approver roles. With `approverRoles` set without `self`, an organisation can require that someone
 * else (a role other than the caller's own) approves.
 */
export function mayApprove(
  settings: TenantSettings,
  approval: { tenantId: string; requesterUserId: string; accountScope?: 'user' | 'tenant' },
  approver: { tenantId: string; userId: string; roles: readonly string[] },
): boolean {
  if (approver.tenantId !== approval.tenantId) return false;
  // A call on an organisation account may need someone else: orgApproverRoles without `self`.
  const roles = approval.accountScope === 'tenant' ? orgApproverRoles(settings) : approverRoles(settings);
  if (approver.userId === approval.requesterUserId && roles.includes(SELF_APPROVER)) return true;
  return roles.some((r) => r !== SELF_APPROVER && approver.roles.includes(r));
}

/** Whether `approver` may decide calls of other users of the tenant (the portal's organisation list). */
export const approvesForOthers = (settings: TenantSettings, roles: readonly string[]): boolean =>
  [...approverRoles(settings), ...orgApproverRoles(settings)].some((r) => r !== SELF_APPROVER && roles.includes(r));
