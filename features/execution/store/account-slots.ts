import type { Queryable } from '../../../platform/database/queryable.js';

/**
 * The per-account queue of calls (migration 021): a ticket per call, the first `max` live tickets
 * of an account hold its slots. Every statement is short; no connection is held while a call runs.
 * Taking a slot (migration 031's functions) holds the account's advisory lock for one statement.
 */

export interface SlotAccount {
  tenantId: string;
  id: string;
}

/** `now()` plus the lease in milliseconds given as parameter `$n`. */
const leaseFrom = (n: number) => `now() + make_interval(secs => $${n}::double precision / 1000)`;

/**
 * Joins the account's queue and takes a slot at once if one is free. The ticket is a string
 * (bigint). One round trip: migration 031's function takes the account's lock, inserts the ticket
 * and grants it when its turn has come (lapsed tickets swept on the way), in one statement's transaction.
 */
export async function enqueueCall(
  db: Queryable,
  account: SlotAccount,
  max: number,
  leaseMs: number,
): Promise<{ ticket: string; granted: boolean }> {
  const { rows } = await db.query('SELECT ticket, granted FROM account_call_slot_enqueue($1, $2, $3, $4)', [
    account.tenantId,
    account.id,
    max,
    leaseMs,
  ]);
  return { ticket: rows[0].ticket, granted: rows[0].granted };
}

/**
 * Takes the slot when this ticket's turn has come (fewer than `max` tickets hold a slot or wait
 * ahead of it), else renews its place. `lost`: the ticket lapsed (its worker stalled past a lease).
 */
export async function tryTakeSlot(
  db: Queryable,
  account: SlotAccount,
  ticket: string,
  max: number,
  leaseMs: number,
): Promise<'granted' | 'waiting' | 'lost'> {
  const { rows } = await db.query('SELECT account_call_slot_try($1, $2, $3, $4, $5) AS state', [
    account.tenantId,
    account.id,
    ticket,
    max,
    leaseMs,
  ]);
  return rows[0].state;
}

/** Keeps held slots from lapsing while their calls run. */
export async function renewTickets(db: Queryable, tickets: string[], leaseMs: number): Promise<void> {
  if (!tickets.length) return;
  await db.query(`UPDATE account_call_slots SET lease_until = ${leaseFrom(2)} WHERE ticket = ANY($1::bigint[])`, [tickets, leaseMs]);
}

/** Gives a slot back, or leaves the queue. */
export async function leaveQueue(db: Queryable, ticket: string): Promise<void> {
  await db.query('DELETE FROM account_call_slots WHERE ticket = $1', [ticket]);
}
