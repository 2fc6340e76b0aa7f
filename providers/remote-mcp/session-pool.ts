/**
 * Sessions kept open by key, counted by the calls using them. A session in use is never closed
 * under its call; past `max` the least recently used idle one closes, and a session idle for
 * `idleMs` closes. A session takes a place only once it opened: a key whose opening fails (a
 * credential the server refuses) never pushes a working session out.
 *
 * When every session is in use, the pool holds more than `max` for as long as that lasts and
 * trims the surplus as calls end: closing one would lose a call's answer, and making a call wait
 * would let a flood of other keys stall it. Calls in flight are bounded elsewhere (each has a
 * deadline, and a worker runs a bounded number), so this surplus is too.
 */
interface SessionPoolOptions<T> {
  max: number;
  idleMs: number;
  close(session: T): void | Promise<void>;
}

/** One call's hold on a session: given back with `release` (once; a second release is ignored). */
interface Lease<T> {
  readonly session: T;
  release(): void;
  /** The session stopped working (the server dropped it): no new call gets it; it closes once unused. */
  retire(): void;
}

interface Slot<T> {
  key: string;
  session: T;
  busy: number;
  retired: boolean;
  idle?: NodeJS.Timeout;
}

export class SessionPool<T> {
  /** In order of last use, least recent first (a used slot is moved to the end). */
  private readonly slots = new Map<string, Slot<T>>();
  private readonly opening = new Map<string, { waiters: number; slot: Promise<Slot<T>> }>();

  constructor(private readonly options: SessionPoolOptions<T>) {}

  /** Sessions holding a place (in use or idle); those still opening are not counted. */
  get size(): number {
    return this.slots.size;
  }

  /** The key's session, opened with `open` if there is none; concurrent first callers share one opening. */
  async acquire(key: string, open: () => Promise<T>): Promise<Lease<T>> {
    const slot = this.slots.get(key);
    if (slot) {
      slot.busy++;
      this.touch(slot);
      return this.lease(slot);
    }
    let pending = this.opening.get(key);
    if (!pending) {
      const started = { waiters: 0, slot: undefined as unknown as Promise<Slot<T>> };
      started.slot = open()
        .then((session) => {
          // Every caller waiting on the opening holds it from the start, so trimming cannot take it.
          const opened: Slot<T> = { key, session, busy: started.waiters, retired: false };
          this.slots.set(key, opened);
          this.trim();
          return opened;
        })
        .finally(() => this.opening.delete(key));
      this.opening.set(key, started);
      pending = started;
    }
    pending.waiters++;
    return this.lease(await pending.slot);
  }

  /** Takes the key's session out if it is `session` (it stopped working): closed once unused. */
  retire(key: string, session: T): void {
    const slot = this.slots.get(key);
    if (slot?.session === session) this.retireSlot(slot);
  }

  /** Every session out of the pool: the idle ones close now, those in use when their calls end. */
  async closeAll(): Promise<void> {
    const idle = [...this.slots.values()].filter((slot) => slot.busy === 0);
    for (const slot of [...this.slots.values()]) {
      slot.retired = true;
      clearTimeout(slot.idle);
    }
    this.slots.clear();
    await Promise.all(idle.map((slot) => this.close(slot)));
  }

  private lease(slot: Slot<T>): Lease<T> {
    let held = true;
    return {
      session: slot.session,
      release: () => {
        if (!held) return;
        held = false;
        this.release(slot);
      },
      retire: () => this.retireSlot(slot),
    };
  }

  private release(slot: Slot<T>): void {
    slot.busy--;
    if (slot.busy > 0) return;
    if (slot.retired) {
      void this.close(slot);
      return;
    }
    this.trim();
    if (this.slots.get(slot.key) !== slot) return;
    slot.idle = setTimeout(() => {
      if (slot.busy === 0 && this.slots.get(slot.key) === slot) {
        this.slots.delete(slot.key);
        void this.close(slot);
      }
    }, this.options.idleMs);
    // An idle session never keeps the process alive.
    slot.idle.unref?.();
  }

  private retireSlot(slot: Slot<T>): void {
    if (slot.retired) return;
    slot.retired = true;
    clearTimeout(slot.idle);
    if (this.slots.get(slot.key) === slot) this.slots.delete(slot.key);
    if (slot.busy === 0) void this.close(slot);
  }

  /** Marks the slot most recently used, and not idle. */
  private touch(slot: Slot<T>): void {
    clearTimeout(slot.idle);
    slot.idle = undefined;
    this.slots.delete(slot.key);
    this.slots.set(slot.key, slot);
  }

  /** Closes least recently used idle sessions while there are more than `max`. */
  private trim(): void {
    if (this.slots.size <= this.options.max) return;
    for (const slot of [...this.slots.values()]) {
      if (this.slots.size <= this.options.max) return;
      if (slot.busy > 0) continue;
      clearTimeout(slot.idle);
      this.slots.delete(slot.key);
      void this.close(slot);
    }
  }

  private async close(slot: Slot<T>): Promise<void> {
    try {
      await this.options.close(slot.session);
    } catch {
      // A session that fails to close is gone from the pool all the same.
    }
  }
}
