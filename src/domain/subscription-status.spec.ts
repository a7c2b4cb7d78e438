import { InvalidTransitionError } from './domain-error';
import { nextSubscriptionStatus, SUBSCRIPTION_EVENTS, SUBSCRIPTION_STATUSES } from './subscription-status';

/** Spec 3.2 written out row by row; every other (status, event) pair must be refused. */
const SPEC_ROWS: Array<[string, string, string]> = [
  ['PENDING', 'FIRST_PAYMENT_CONFIRMED', 'ACTIVE'],
  ['PENDING', 'FIRST_PAYMENT_CONFIRMED_WITH_TRIAL', 'TRIALING'],
  ['PENDING', 'CANCEL', 'CANCELLED'],
  ['TRIALING', 'CHARGE_CONFIRMED', 'ACTIVE'],
  ['TRIALING', 'CANCEL', 'CANCELLED'],
  ['TRIALING', 'CHARGE_FAILED', 'PAST_DUE'],
  ['TRIALING', 'PAUSE', 'PAUSED'],
  ['ACTIVE', 'PAUSE', 'PAUSED'],
  ['ACTIVE', 'CANCEL', 'CANCELLED'],
  ['ACTIVE', 'CHARGE_FAILED', 'PAST_DUE'],
  ['ACTIVE', 'EXPIRY_DATE_REACHED', 'EXPIRED'],
  ['PAUSED', 'RESUME', 'ACTIVE'],
  ['PAUSED', 'CANCEL', 'CANCELLED'],
  ['PAST_DUE', 'CHARGE_CONFIRMED', 'ACTIVE'],
  ['PAST_DUE', 'GRACE_PERIOD_ENDED', 'CANCELLED'],
  ['PAST_DUE', 'CANCEL', 'CANCELLED'],
];

describe('subscription status machine (spec 3.2)', () => {
  for (const from of SUBSCRIPTION_STATUSES) {
    for (const event of SUBSCRIPTION_EVENTS) {
      const row = SPEC_ROWS.find(([f, e]) => f === from && e === event);
      it(`${from} + ${event} → ${row ? row[2] : 'refused'}`, () => {
        if (row) expect(nextSubscriptionStatus(from, event)).toBe(row[2]);
        else expect(() => nextSubscriptionStatus(from, event)).toThrow(InvalidTransitionError);
      });
    }
  }

  it('has no way out of CANCELLED and EXPIRED', () => {
    for (const event of SUBSCRIPTION_EVENTS) {
      expect(() => nextSubscriptionStatus('CANCELLED', event)).toThrow(InvalidTransitionError);
      expect(() => nextSubscriptionStatus('EXPIRED', event)).toThrow(InvalidTransitionError);
    }
  });
});
