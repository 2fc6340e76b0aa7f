import type pg from 'pg';
import { lockKey, type Queryable, transaction } from './queryable.js';

/**
 * The per-account queue of calls (migration 021): a ticket per call, the first `max` live tickets
 * of an account hold its slots. Every statement is short; no connection is held while a call runs.
 */

export interface SlotAccount {
  tenantId: string;
  id: string;
}

/** Tickets nobody renewed for this long belong to dead workers of accounts no longer called: swept on the way. */
const SWEEP_AFTER = "interval '1 hour'";

/** `now()` plus the lease in milliseconds given as parameter `$n`. */
const leaseFrom = (n: number) => `now() + make_interval(secs => $${n}::double precision / 1000)`;

/** Joins the account's queue and takes a slot at once if one is free. The ticket is a string (bigint). */
export function enqueueCall(
  pool: pg.Pool,
  account: SlotAccount,
  max: number,
  leaseMs: number,
): Promise<{ ticket: string; granted: boolean }> {
  return transaction(pool, async (db) => {
    await lockKey(db, slotKey(account));
    const { rows } = await db.query(
      `INSERT INTO account_call_slots (tenant_id, account_id, lease_until) VALUES ($1, $2, ${leaseFrom(3)}) RETURNING ticket::text AS ticket`,
      [account.tenantId, account.id, leaseMs],
    );
    const ticket: string = rows[0].ticket;
    return { ticket, granted: await grantIfTurn(db, account, ticket, max, leaseMs) };
  });
}

/**
 * Takes the slot when this ticket's turn has come (fewer than `max` tickets hold a slot or wait
 * ahead of it), else renews its place. `lost`: the ticket lapsed (its worker stalled past a lease).
 */
export function tryTakeSlot(
  pool: pg.Pool,
  account: SlotAccount,
  ticket: string,
  max: number,
  leaseMs: number,
): Promise<'granted' | 'waiting' | 'lost'> {
  return transaction(pool, async (db) => {
    await lockKey(db, slotKey(account));
    if (await grantIfTurn(db, account, ticket, max, leaseMs)) return 'granted';
    const { rowCount } = await db.query(`UPDATE account_call_slots SET lease_until = ${leaseFrom(2)} WHERE ticket = $1`, [ticket, leaseMs]);
    return rowCount === 1 ? 'waiting' : 'lost';
  });
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

/**
 * Runs under the account's lock: the account's lapsed tickets go (and long-lapsed ones of any
 * account), then this one takes a slot if its turn has come.
 */
async function grantIfTurn(db: Queryable, account: SlotAccount, ticket: string, max: number, leaseMs: number): Promise<boolean> {
  // SKIP LOCKED: two sweeps (under two accounts' locks) never wait on each other's rows.
  await db.query(
    `DELETE FROM account_call_slots WHERE ticket IN (
       SELECT ticket FROM account_call_slots
        WHERE (tenant_id = $1 AND account_id = $2 AND lease_until <= now()) OR lease_until < now() - ${SWEEP_AFTER}
        FOR UPDATE SKIP LOCKED)`,
    [account.tenantId, account.id],
  );
  const { rowCount } = await db.query(
    `UPDATE account_call_slots SET granted = true, lease_until = ${leaseFrom(5)}
      WHERE ticket = $3 AND tenant_id = $1 AND account_id = $2
        AND (SELECT count(*) FROM account_call_slots o
              WHERE o.tenant_id = $1 AND o.account_id = $2 AND (o.granted OR o.ticket < $3) AND o.ticket <> $3
                AND o.lease_until > now()) < $4`,
    [account.tenantId, account.id, ticket, max, leaseMs],
  );
  return rowCount === 1;
}

const slotKey = (account: SlotAccount) => `account-call-slots:${account.tenantId}:${account.id}`;
