import type { Caller } from '../core/caller.js';
import type { Config } from '../core/config.js';
import { MetaToolError } from '../core/errors.js';

/**
 * wait_for_connection and wait_for_approval each hold a request, and its TCP connection, open for
 * up to 15 minutes; the server holds HTTP_MAX_CONNECTIONS for everyone. Without a bound of its own,
 * one key's waits could take them all (600 a minute, each kept 15 minutes) and lock every other
 * tenant out. So each server process lets one user hold WAITS_MAX_PER_USER of them at once and one
 * tenant WAITS_MAX_PER_TENANT; past either, the call is refused at once (429), nothing is waited on.
 * Counted in this process's memory: the connections it protects are this process's too.
 */

const byUser = new Map<string, number>();
const byTenant = new Map<string, number>();
const userKey = (caller: Caller) => `${caller.tenantId}\0${caller.userId}`;

/** Seconds a refused caller is told to wait: a slot frees as soon as one of the waits answers. */
const RETRY_AFTER_SEC = 10;

export type WaitLimits = Pick<Config, 'WAITS_MAX_PER_USER' | 'WAITS_MAX_PER_TENANT'>;

/** Runs `wait` in one of the caller's wait slots of this process, or refuses with 429 when their user's or tenant's are all taken. */
export async function inWaitSlot<T>(limits: WaitLimits, caller: Caller, wait: () => Promise<T>): Promise<T> {
  const user = userKey(caller);
  const userHolds = byUser.get(user) ?? 0;
  const tenantHolds = byTenant.get(caller.tenantId) ?? 0;
  if (userHolds >= limits.WAITS_MAX_PER_USER) {
    throw refused(
      `Too many waits at once: a user has at most ${limits.WAITS_MAX_PER_USER} wait_for_connection and wait_for_approval calls ` +
        `waiting at once (WAITS_MAX_PER_USER), and all are taken. Nothing was waited on: let one of them answer, then wait again.`,
    );
  }
  if (tenantHolds >= limits.WAITS_MAX_PER_TENANT) {
    throw refused(
      `Too many waits at once: your organisation has at most ${limits.WAITS_MAX_PER_TENANT} wait_for_connection and ` +
        `wait_for_approval calls waiting at once (WAITS_MAX_PER_TENANT), and all are taken. Nothing was waited on: try again shortly.`,
    );
  }
  byUser.set(user, userHolds + 1);
  byTenant.set(caller.tenantId, tenantHolds + 1);
  try {
    return await wait();
  } finally {
    release(byUser, user);
    release(byTenant, caller.tenantId);
  }
}

function release(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}

const refused = (error: string) =>
  new MetaToolError({ error, retryAfterSec: RETRY_AFTER_SEC }, 429, { 'Retry-After': String(RETRY_AFTER_SEC) });
