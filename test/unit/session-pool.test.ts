import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SessionPool } from '../../providers/remote-mcp/session-pool.js';

// The pool of upstream sessions, with plain values for sessions: what it closes, and when.

interface Fake {
  key: string;
  closed: boolean;
}

function pool(max = 2, idleMs = 60_000) {
  const closed: string[] = [];
  const sessions = new SessionPool<Fake>({
    max,
    idleMs,
    close: (s) => {
      s.closed = true;
      closed.push(s.key);
    },
  });
  const acquire = (key: string) => sessions.acquire(key, async () => ({ key, closed: false }));
  return { sessions, closed, acquire };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the upstream session pool', () => {
  it('never closes a session in use: past its size it holds more, and trims the surplus as calls end', async () => {
    const { sessions, closed, acquire } = pool(2);
    const a = await acquire('a');
    const b = await acquire('b');
    const c = await acquire('c');
    expect(closed).toEqual([]);
    expect(sessions.size).toBe(3);
    b.release();
    // b is idle now, and one too many: it closes; a and c run on.
    expect(closed).toEqual(['b']);
    a.release();
    c.release();
    expect(closed).toEqual(['b']);
    expect(sessions.size).toBe(2);
  });

  it('counts every lease: a session two calls use stays until both gave it back', async () => {
    const { sessions, closed, acquire } = pool(1);
    const first = await acquire('a');
    const second = await acquire('a');
    expect(second.session).toBe(first.session);
    first.release();
    first.release(); // a second release of one lease counts once
    await acquire('b').then((l) => l.release());
    // 'b' came in over the size while 'a' was still in use by `second`: 'b', idle, went.
    expect(closed).toEqual(['b']);
    second.release();
    expect(sessions.size).toBe(1);
  });

  it('evicts the least recently used idle session, not the first opened', async () => {
    const { closed, acquire } = pool(2);
    (await acquire('a')).release();
    (await acquire('b')).release();
    (await acquire('a')).release(); // a is used again: b is now the least recently used
    (await acquire('c')).release();
    expect(closed).toEqual(['b']);
  });

  it('a session that failed to open takes no place, and callers waiting on it all hear why', async () => {
    const { sessions, closed, acquire } = pool(1);
    (await acquire('good')).release();
    const refused = () => sessions.acquire('bad', async () => Promise.reject(new Error('401')));
    const answers = await Promise.allSettled([refused(), refused(), refused()]);
    expect(answers.map((a) => a.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(sessions.size).toBe(1);
    expect(closed).toEqual([]);
    expect((await acquire('good')).session.key).toBe('good');
  });

  it('concurrent first calls of one key share one opening', async () => {
    const opened: string[] = [];
    const sessions = new SessionPool<Fake>({ max: 5, idleMs: 60_000, close: () => {} });
    const open = async () => {
      opened.push('a');
      return { key: 'a', closed: false };
    };
    const [x, y] = await Promise.all([sessions.acquire('a', open), sessions.acquire('a', open)]);
    expect(x.session).toBe(y.session);
    expect(opened).toEqual(['a']);
  });

  it('closes a session idle for idleMs, and not one in use or used since', async () => {
    const { closed, acquire } = pool(5, 1000);
    const busy = await acquire('busy');
    (await acquire('idle')).release();
    (await acquire('reused')).release();
    await vi.advanceTimersByTimeAsync(600);
    (await acquire('reused')).release();
    await vi.advanceTimersByTimeAsync(600);
    expect(closed).toEqual(['idle']);
    await vi.advanceTimersByTimeAsync(600);
    expect(closed).toEqual(['idle', 'reused']);
    busy.release();
    await vi.advanceTimersByTimeAsync(1000);
    expect(closed).toEqual(['idle', 'reused', 'busy']);
  });

  it('a retired session (it stopped working) is closed once its last call ends, and the key opens anew', async () => {
    const { sessions, closed, acquire } = pool(5);
    const lease = await acquire('a');
    lease.retire();
    expect(closed).toEqual([]);
    const fresh = await acquire('a');
    expect(fresh.session).not.toBe(lease.session);
    lease.release();
    expect(closed).toEqual(['a']);
    expect(lease.session.closed).toBe(true);
    expect(fresh.session.closed).toBe(false);
    expect(sessions.size).toBe(1);
  });

  it('closeAll closes the idle sessions now and the busy ones when their calls end', async () => {
    const { sessions, closed, acquire } = pool(5);
    const busy = await acquire('busy');
    (await acquire('idle')).release();
    await sessions.closeAll();
    expect(closed).toEqual(['idle']);
    busy.release();
    expect(closed).toEqual(['idle', 'busy']);
    expect(sessions.size).toBe(0);
  });
});
