import { cents } from './money';

/** Spec §8: a withdrawal (POST /api/public/cashout) is at least 100.00 and at most 100000.00 reais. */
export const WITHDRAWAL_MINIMUM_CENTS = cents(10_000);
export const WITHDRAWAL_MAXIMUM_CENTS = cents(10_000_000);
