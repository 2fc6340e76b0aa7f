import type { Caller } from '../core/caller.js';
import type { Config } from '../core/config.js';
import { MetaToolError } from '../core/errors.js';

/**
 * Requests a caller keeps open on this process while they wait for something, each holding a TCP
 * connection of the server's HTTP_MAX_CONNECTIONS: wait_for_connection and wait_for_approval (up to
 * 15 minutes each), tasks/result, a task subscription, a tool call eliciting a person. Without bounds
 * of their own, one key's waits could take every connection and lock every other tenant out. Each
 * kind has its bound per user; all kinds together count against one bound per tenant
 * (WAITS_MAX_PER_TENANT), so neither one user nor one tenant's users together can hold them all.
 * Counted in this process's memory: the connections they hold are this process's too.
 */
type WaitKind = 'wait' | 'task-result' | 'task-subscription' | 'eliciting';

export type WaitLimits = Pick<Config, 'WAITS_MAX_PER_USER' | 'WAITS_MAX_PER_TENANT'>;

const held = new Map<string, number>();
const userKey = (kind: WaitKind, caller: Pick<Caller, 'tenantId' | 'userId'>) => `${kind}\0${caller.tenantId}\0${caller.userId}`;
const tenantKey = (caller: Pick<Caller, 'tenantId'>) => `tenant\0${caller.tenantId}`;

/** Requests of `kind` this user holds open in this process now. */
export const heldWaits = (kind: WaitKind, caller: Pick<Caller, 'tenantId' | 'userId'>): number => held.get(userKey(kind, caller)) ?? 0;

/** Whose bound a request of `kind` would be refused by now, if any. */
export function fullBound(kind: WaitKind, caller: Pick<Caller, 'tenantId' | 'userId'>, bounds: { perUser: number; perTenant: number }) {
  if ((held.get(userKey(kind, caller)) ?? 0) >= bounds.perUser) return 'user';
  if ((held.get(tenantKey(caller)) ?? 0) >= bounds.perTenant) return 'tenant';
  return undefined;
}

/**
 * Runs `wait` in one of the caller's slots of `kind` (at most `perUser` of them, and the tenant's
 * WAITS_MAX_PER_TENANT across every kind), or answers `refused(whose bound is full)` at once.
 */
export async function inSlot<T>(
  kind: WaitKind,
  caller: Pick<Caller, 'tenantId' | 'userId'>,
  bounds: { perUser: number; perTenant: number },
  refused: (whose: 'user' | 'tenant') => T,
  wait: () => Promise<T>,
): Promise<T> {
  const full = fullBound(kind, caller, bounds);
  if (full) return refused(full);
  const user = userKey(kind, caller);
  const tenant = tenantKey(caller);
  held.set(user, (held.get(user) ?? 0) + 1);
  held.set(tenant, (held.get(tenant) ?? 0) + 1);
  try {
    return await wait();
  } finally {
    release(user);
    release(tenant);
  }
}

function release(key: string): void {
  const left = (held.get(key) ?? 1) - 1;
  if (left > 0) held.set(key, left);
  else held.delete(key);
}

/** Seconds a refused caller is told to wait: a slot frees as soon as one of the waits answers. */
const RETRY_AFTER_SEC = 10;

/** wait_for_connection and wait_for_approval in one of the caller's slots, or 429 when their user's or tenant's are all taken. */
export function inWaitSlot<T>(limits: WaitLimits, caller: Caller, wait: () => Promise<T>): Promise<T> {
  return inSlot(
    'wait',
    caller,
    { perUser: limits.WAITS_MAX_PER_USER, perTenant: limits.WAITS_MAX_PER_TENANT },
    (whose) => {
      throw whose === 'user'
        ? refused(
            `Too many waits at once: a user has at most ${limits.WAITS_MAX_PER_USER} wait_for_connection and wait_for_approval calls ` +
              `waiting at once (WAITS_MAX_PER_USER), and all are taken. Nothing was waited on: let one of them answer, then wait again.`,
          )
        : refused(tenantFull(limits));
    },
    wait,
  );
}

/** What a request refused for its tenant's bound says (the bound counts every kind of waiting request). */
export const tenantFull = (limits: WaitLimits) =>
  `Too many waits at once: your organisation has at most ${limits.WAITS_MAX_PER_TENANT} requests waiting at once ` +
  `(wait_for_connection, wait_for_approval, MCP tasks/result and task subscriptions, calls asking a person) ` +
  `(WAITS_MAX_PER_TENANT), and all are taken. Nothing was waited on: try again shortly.`;

const refused = (error: string) =>
  new MetaToolError({ error, retryAfterSec: RETRY_AFTER_SEC }, 429, { 'Retry-After': String(RETRY_AFTER_SEC) });
