import { describe, expect, it } from 'vitest';
import { FairSlots } from '../../platform/browser/fair-slots.js';

const never = new AbortController().signal;

describe('FairSlots (browser pages shared between tenants)', () => {
  it("finding 12: one tenant queuing many pages cannot starve another tenant's page", async () => {
    const slots = new FairSlots(4);
    const order: string[] = [];
    const releases: (() => void)[] = [];
    const take = (tenant: string, n: number) =>
      slots.acquire(tenant, never).then((release) => {
        order.push(`${tenant}${n}`);
        releases.push(release);
      });
    // Tenant a asks for 20 pages at once: it gets the 4 slots, 16 wait.
    const a = Array.from({ length: 20 }, (_, i) => take('a', i));
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['a0', 'a1', 'a2', 'a3']);
    // Tenant b's one page comes later, behind a's 16.
    const b = take('b', 0);
    await new Promise((r) => setImmediate(r));
    // The first slot freed goes to b (it holds none), not to a's next.
    releases.shift()!();
    await b;
    expect(order.at(-1)).toBe('b0');
    expect(slots.holding('b')).toBe(1);
    expect(slots.holding('a')).toBe(3);
    // a's own calls still go in order.
    while (releases.length) {
      releases.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(a);
    expect(order.filter((o) => o.startsWith('a'))).toEqual(Array.from({ length: 20 }, (_, i) => `a${i}`));
  });

  it('a waiting call that is cancelled leaves the queue with a clear error', async () => {
    const slots = new FairSlots(1);
    const release = await slots.acquire('a', never);
    const controller = new AbortController();
    const waiting = slots.acquire('b', controller.signal, 'The tool call was cancelled while waiting for the browser.');
    controller.abort();
    await expect(waiting).rejects.toThrow('cancelled while waiting for the browser');
    release();
    const next = await slots.acquire('c', never);
    expect(slots.holding('c')).toBe(1);
    next();
    expect(slots.holding('c')).toBe(0);
  });
});
