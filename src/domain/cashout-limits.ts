import { cents } from './money';

/** Spec §8: a cashout is at least 100.00 and at most 100000.00 reais. */
export const CASHOUT_MINIMUM_CENTS = cents(10_000);
export const CASHOUT_MAXIMUM_CENTS = cents(10_000_000);
