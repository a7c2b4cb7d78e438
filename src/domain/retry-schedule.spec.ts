import { DEFAULT_RETRY_SCHEDULE_SECONDS, nextAttemptAt, payoutCheckDelaySeconds } from './retry-schedule';

const first = new Date('2026-11-22T12:00:00Z');

describe('postback retry schedule', () => {
  it('retries nine times over about a day, counted from the first try', () => {
    expect(DEFAULT_RETRY_SCHEDULE_SECONDS).toHaveLength(9);
    expect(nextAttemptAt(first, 1, undefined, () => 0.5)?.toISOString()).toBe('2026-11-22T12:00:30.000Z');
    expect(nextAttemptAt(first, 9, undefined, () => 0.5)?.toISOString()).toBe('2026-11-23T12:00:00.000Z');
    expect(nextAttemptAt(first, 10)).toBeNull();
  });

  it('adds at most ±10 % jitter', () => {
    expect(nextAttemptAt(first, 2, undefined, () => 0)?.getTime()).toBe(first.getTime() + 108_000);
    expect(nextAttemptAt(first, 2, undefined, () => 0.999999)?.getTime()).toBeLessThanOrEqual(first.getTime() + 132_000);
  });

  it('takes another schedule', () => {
    expect(nextAttemptAt(first, 1, [0.2], () => 0.5)?.getTime()).toBe(first.getTime() + 200);
    expect(nextAttemptAt(first, 2, [0.2])).toBeNull();
  });
});

describe('payout look-up backoff', () => {
  it('doubles the wait after each look-up of a withdrawal still open, up to an hour', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((checks) => payoutCheckDelaySeconds(120, checks))).toEqual([120, 240, 480, 960, 1920, 3600, 3600]);
    expect(payoutCheckDelaySeconds(2, 1)).toBe(4);
    expect(payoutCheckDelaySeconds(2, 500)).toBe(3600);
  });

  it('never waits less than the first wait', () => {
    expect(payoutCheckDelaySeconds(7200, 0)).toBe(7200);
    expect(payoutCheckDelaySeconds(7200, 3)).toBe(7200);
  });
});
