/**
 * Postback retries (platform.md §7): about 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h, 12 h and 24 h
 * after the first try, each with ±10 % jitter; after the last one the delivery is kept as failed.
 */
export const DEFAULT_RETRY_SCHEDULE_SECONDS: readonly number[] = [30, 120, 600, 1800, 3600, 10800, 21600, 43200, 86400];
export const JITTER_RATIO = 0.1;

/**
 * When the next try after `failedAttempts` failures is due, counted from the first try; null when the
 * schedule is exhausted. `random` is a number in [0, 1) (Math.random by default).
 */
export function nextAttemptAt(
  firstTryAt: Date,
  failedAttempts: number,
  schedule: readonly number[] = DEFAULT_RETRY_SCHEDULE_SECONDS,
  random: () => number = Math.random,
): Date | null {
  const offsetSeconds = schedule[failedAttempts - 1];
  if (offsetSeconds === undefined) return null;
  const jitter = 1 + (random() * 2 - 1) * JITTER_RATIO;
  return new Date(firstTryAt.getTime() + Math.round(offsetSeconds * 1000 * jitter));
}

/** The longest wait between two look-ups of an open withdrawal's payout (unless the first wait is longer). */
export const PAYOUT_CHECK_MAX_DELAY_SECONDS = 3600;

/**
 * The withdrawal recovery job's backoff: after `checks` look-ups of a withdrawal still open, the next waits
 * `firstDelaySeconds` (PROVIDER_RECOVERY_AFTER_SECONDS) doubled once per look-up made, up to an hour.
 */
export function payoutCheckDelaySeconds(firstDelaySeconds: number, checks: number): number {
  const ceiling = Math.max(PAYOUT_CHECK_MAX_DELAY_SECONDS, firstDelaySeconds);
  return Math.min(firstDelaySeconds * 2 ** Math.min(Math.max(checks, 0), 30), ceiling);
}
