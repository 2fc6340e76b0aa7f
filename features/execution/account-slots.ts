import type pg from 'pg';
import { enqueueCall, leaveQueue, renewTickets, type SlotAccount, tryTakeSlot } from './store/account-slots.js';

/** A held slot or a queued ticket lapses this long after its worker last renewed it (a dead worker's slot comes back then). */
export const SLOT_LEASE_MS = 15_000;
/** Held slots are renewed this often, well inside a lease. */
const RENEW_EVERY_MS = 5_000;
/** A waiting call looks again after this, doubling up to the ceiling; a slot freed in this process wakes its next waiter at once. */
const FIRST_LOOK_MS = 50;
const LOOK_CEILING_MS = 500;

/** The call's deadline passed (or it was cancelled) while it waited for a slot. */
export class SlotWaitAborted extends Error {
  constructor() {
    super('gave up waiting for a slot on the account');
    this.name = 'SlotWaitAborted';
  }
}

interface LocalWaiter {
  ticket: bigint;
  wake: () => void;
}

/**
 * At most `max` calls in flight per account across every worker process (the queue lives in
 * Postgres). Calls beyond it wait in ticket order, first come first served; a waiting call looks
 * again on a backoff, or at once when a slot of its account is freed in this process, so a freed
 * slot is not stormed by every waiter.
 */
/** Gives a held slot back: by itself (one round trip), or along with a statement of the caller's. */
export interface SlotRelease {
  (): Promise<void>;
  /** The held ticket, for a statement that deletes it with other work (features/execution/store/audit.ts recordToolCall). */
  readonly ticket: string;
  /** Once such a statement deleted the ticket: stops renewing it here and wakes the next local waiter. */
  releasedElsewhere(): void;
}

export class AccountSlots {
  private readonly held = new Set<string>();
  private readonly waiting = new Map<string, LocalWaiter[]>();
  private renewal?: NodeJS.Timeout;

  constructor(
    private readonly pool: pg.Pool,
    private readonly max: number,
    private readonly onRenewError: (err: Error) => void = () => {},
    private readonly leaseMs = SLOT_LEASE_MS,
  ) {}

  /** Waits for a slot of `account` (until `signal` aborts: SlotWaitAborted); answers its release. */
  async acquire(account: SlotAccount, signal: AbortSignal): Promise<SlotRelease> {
    if (signal.aborted) throw new SlotWaitAborted();
    let { ticket, granted } = await enqueueCall(this.pool, account, this.max, this.leaseMs);
    for (let look = FIRST_LOOK_MS; !granted; look = Math.min(LOOK_CEILING_MS, look * 2)) {
      await this.pause(account, ticket, look, signal);
      if (signal.aborted) {
        await leaveQueue(this.pool, ticket);
        throw new SlotWaitAborted();
      }
      const state = await tryTakeSlot(this.pool, account, ticket, this.max, this.leaseMs);
      // A ticket lapses only if this process stalled for a whole lease: queue again, at the back.
      if (state === 'lost') ({ ticket, granted } = await enqueueCall(this.pool, account, this.max, this.leaseMs));
      else granted = state === 'granted';
    }
    this.hold(ticket);
    let released = false;
    const forget = () => {
      if (released) return false;
      released = true;
      this.held.delete(ticket);
      if (!this.held.size) this.stopRenewal();
      return true;
    };
    const release = async () => {
      if (!forget()) return;
      await leaveQueue(this.pool, ticket);
      this.wakeNext(account);
    };
    return Object.assign(release, {
      ticket,
      releasedElsewhere: () => {
        if (forget()) this.wakeNext(account);
      },
    });
  }

  private hold(ticket: string): void {
    this.held.add(ticket);
    this.renewal ??= setInterval(() => {
      renewTickets(this.pool, [...this.held], this.leaseMs).catch(this.onRenewError);
    }, RENEW_EVERY_MS).unref();
  }

  private stopRenewal(): void {
    clearInterval(this.renewal);
    this.renewal = undefined;
  }

  /** Resolves after `ms`, when woken by a freed slot, or when `signal` aborts. */
  private pause(account: SlotAccount, ticket: string, ms: number, signal: AbortSignal): Promise<void> {
    const key = keyOf(account);
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        const current = this.waiting.get(key);
        const at = current?.indexOf(waiter) ?? -1;
        if (current && at >= 0) current.splice(at, 1);
        if (current && !current.length) this.waiting.delete(key);
        resolve();
      };
      const waiter: LocalWaiter = { ticket: BigInt(ticket), wake: done };
      const list = this.waiting.get(key) ?? [];
      list.push(waiter);
      this.waiting.set(key, list);
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** The oldest ticket waiting here for this account looks now; the others keep their backoff. */
  private wakeNext(account: SlotAccount): void {
    const list = this.waiting.get(keyOf(account));
    if (!list?.length) return;
    list.reduce((first, w) => (w.ticket < first.ticket ? w : first)).wake();
  }
}

const keyOf = (account: SlotAccount) => `${account.tenantId}:${account.id}`;
