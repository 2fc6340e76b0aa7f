import { describe, expect, it } from 'vitest';
import { InFlightLimit } from '../../core/in-flight-limit.js';

describe('InFlightLimit', () => {
  it('admits up to each key’s bound, all keys or none, and gives places back once per release', () => {
    const limit = new InFlightLimit([2, 3]);
    const a1 = limit.tryEnter(['user:a', 'tenant:t']);
    const a2 = limit.tryEnter(['user:a', 'tenant:t']);
    expect(a1 && a2).toBeTruthy();
    // user a is at its bound: refused, and the tenant's count is not taken by the refusal.
    expect(limit.tryEnter(['user:a', 'tenant:t'])).toBeUndefined();
    expect(limit.inFlight('tenant:t')).toBe(2);
    const b1 = limit.tryEnter(['user:b', 'tenant:t']);
    expect(b1).toBeTruthy();
    // The tenant is at its bound: another user of it is refused, a user of another tenant is not.
    expect(limit.tryEnter(['user:c', 'tenant:t'])).toBeUndefined();
    expect(limit.inFlight('user:c')).toBe(0);
    const other = limit.tryEnter(['user:x', 'tenant:u']);
    expect(other).toBeTruthy();
    a1?.();
    a1?.();
    expect(limit.inFlight('user:a')).toBe(1);
    expect(limit.inFlight('tenant:t')).toBe(2);
    expect(limit.tryEnter(['user:c', 'tenant:t'])).toBeTruthy();
    for (const release of [a2, b1, other]) release?.();
    expect(limit.inFlight('user:a')).toBe(0);
    expect(limit.inFlight('tenant:u')).toBe(0);
  });

  it('says whether a key is at its bound without taking a place (the front gate asks, the route enters)', () => {
    const limit = new InFlightLimit([1, 2]);
    expect(limit.isFull(['user:a', 'tenant:t'])).toBe(false);
    expect(limit.inFlight('user:a')).toBe(0);
    const a = limit.tryEnter(['user:a', 'tenant:t']);
    expect(limit.isFull(['user:a', 'tenant:t'])).toBe(true);
    expect(limit.isFull(['user:b', 'tenant:t'])).toBe(false);
    const b = limit.tryEnter(['user:b', 'tenant:t']);
    expect(limit.isFull(['user:c', 'tenant:t'])).toBe(true);
    a?.();
    b?.();
    expect(limit.isFull(['user:a', 'tenant:t'])).toBe(false);
  });

  it('refuses a call with the wrong number of keys', () => {
    expect(() => new InFlightLimit([1]).tryEnter(['a', 'b'])).toThrow('1 keys expected, got 2');
  });
});
