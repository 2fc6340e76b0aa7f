import { describe, expect, it } from 'vitest';
import type { AttemptStatus, WaitStatus } from '../../core/connection.js';
import { sharedWaitAnswer, waitAnswer } from '../../core/wait-answer.js';

describe('waitAnswer: the reaper answers TIMEOUT, everyone after it EXPIRED, CONNECTED stays CONNECTED', () => {
  const rows: [AttemptStatus | undefined, boolean, WaitStatus][] = [
    ['CONNECTED', true, 'CONNECTED'],
    ['CONNECTED', false, 'CONNECTED'],
    ['EXPIRED', true, 'TIMEOUT'],
    ['EXPIRED', false, 'EXPIRED'],
    ['FAILED', true, 'EXPIRED'],
    ['FAILED', false, 'EXPIRED'],
    // Read from the database after the workflow is gone: it can never connect now.
    ['PENDING', true, 'EXPIRED'],
    ['PENDING', false, 'EXPIRED'],
    // No such attempt (row deleted).
    [undefined, true, 'EXPIRED'],
    [undefined, false, 'EXPIRED'],
  ];
  it.each(rows)('status %s, reaped by this wait %s → %s', (status, reapedIt, answer) => {
    expect(waitAnswer(status, { reapedIt })).toBe(answer);
  });
});

describe('sharedWaitAnswer: a waiter sharing another wait keeps its answer, but only the same wait times out', () => {
  const rows: [WaitStatus, boolean, WaitStatus][] = [
    ['TIMEOUT', true, 'TIMEOUT'],
    ['TIMEOUT', false, 'EXPIRED'],
    ['CONNECTED', true, 'CONNECTED'],
    ['CONNECTED', false, 'CONNECTED'],
    ['EXPIRED', true, 'EXPIRED'],
    ['EXPIRED', false, 'EXPIRED'],
    ['FAILED', true, 'FAILED'],
    ['FAILED', false, 'FAILED'],
  ];
  it.each(rows)('shared answer %s, same wait %s → %s', (shared, sameWait, answer) => {
    expect(sharedWaitAnswer(shared, { sameWait })).toBe(answer);
  });
});
