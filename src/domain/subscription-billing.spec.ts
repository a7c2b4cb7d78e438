import { addDays } from './dates';
import { cents } from './money';
import { BillingState, DEFAULT_DUNNING, dueBillingAction, nextRetryAt, subscriptionMetrics } from './subscription-billing';

const D = new Date('2026-01-10T12:00:00Z');
const base: BillingState = {
  status: 'ACTIVE',
  paymentMethod: 'CREDIT_CARD',
  nextBillingDate: D,
  scheduledCancellationDate: null,
  periodDueAt: null,
  nextRetryAt: null,
  pastDueSince: null,
  awaitingPaymentSince: null,
};
const at = (state: Partial<BillingState>, now: Date) => dueBillingAction({ ...base, ...state }, now, DEFAULT_DUNNING)?.kind ?? null;

describe('subscription billing decisions', () => {
  it('renews on nextBillingDate, not before, and never while PENDING, PAUSED or final', () => {
    expect(at({}, addDays(D, -0.001))).toBeNull();
    expect(at({}, D)).toBe('RENEW');
    expect(at({ status: 'TRIALING' }, D)).toBe('RENEW');
    for (const status of ['PENDING', 'PAUSED', 'CANCELLED', 'EXPIRED'] as const) expect(at({ status }, addDays(D, 400))).toBeNull();
  });

  it('cancels at the scheduled period end instead of charging', () => {
    expect(at({ scheduledCancellationDate: D }, D)).toBe('CANCEL_AT_PERIOD_END');
  });

  it('retries a failed card renewal 1, 3 and 5 days after its billing date, and ends it 7 days after', () => {
    expect([1, 2, 3, 4].map((failures) => nextRetryAt(D, failures, DEFAULT_DUNNING)?.toISOString() ?? null)).toEqual([
      addDays(D, 1).toISOString(),
      addDays(D, 3).toISOString(),
      addDays(D, 5).toISOString(),
      null,
    ]);
    const pastDue: Partial<BillingState> = { status: 'PAST_DUE', pastDueSince: D, nextRetryAt: addDays(D, 1) };
    expect(at(pastDue, addDays(D, 0.5))).toBeNull();
    expect(at(pastDue, addDays(D, 1))).toBe('RETRY');
    expect(at({ ...pastDue, nextRetryAt: null }, addDays(D, 6.9))).toBeNull();
    expect(at({ ...pastDue, nextRetryAt: null }, addDays(D, 7))).toBe('GRACE_PERIOD_ENDED');
  });

  it('makes an unpaid PIX renewal PAST_DUE the day after its billing date, and never retries PIX', () => {
    const awaiting: Partial<BillingState> = { paymentMethod: 'PIX', awaitingPaymentSince: D, nextBillingDate: addDays(D, 30) };
    expect(at(awaiting, addDays(D, 0.9))).toBeNull();
    expect(at(awaiting, addDays(D, 1))).toBe('PIX_OVERDUE');
    expect(at({ paymentMethod: 'PIX', status: 'PAST_DUE', pastDueSince: D, nextRetryAt: addDays(D, 1) }, addDays(D, 2))).toBeNull();
  });
});

describe('subscription metrics (spec 2.7, platform.md §7)', () => {
  const now = new Date('2026-06-01T00:00:00Z');
  it('sums mrr as amount × 30 / cycle days over ACTIVE and TRIALING, arr = mrr × 12, churn over the last 30 days', () => {
    const metrics = subscriptionMetrics(
      [
        { status: 'ACTIVE', amountCents: cents(9990), billingCycle: 'MONTHLY', cancelledAt: null },
        { status: 'TRIALING', amountCents: cents(36500), billingCycle: 'YEARLY', cancelledAt: null },
        { status: 'ACTIVE', amountCents: cents(700), billingCycle: 'WEEKLY', cancelledAt: null },
        { status: 'PAUSED', amountCents: cents(5000), billingCycle: 'MONTHLY', cancelledAt: null },
        { status: 'CANCELLED', amountCents: cents(5000), billingCycle: 'MONTHLY', cancelledAt: addDays(now, -3) },
        { status: 'CANCELLED', amountCents: cents(5000), billingCycle: 'MONTHLY', cancelledAt: addDays(now, -45) },
      ],
      now,
    );
    // 99.90 + 365.00 × 30/365 (= 30.00) + 7.00 × 30/7 (= 30.00) = 159.90
    expect(metrics).toEqual({ total: 6, active: 3, cancelled: 2, paused: 1, mrr: 159.9, arr: 1918.8, churnRate: 25 });
  });

  it('rounds the mrr once, half up, and answers zeros without subscriptions', () => {
    const thirds = subscriptionMetrics([{ status: 'ACTIVE', amountCents: cents(1000), billingCycle: 'QUARTERLY', cancelledAt: null }], now);
    expect(thirds.mrr).toBe(3.33);
    expect(subscriptionMetrics([], now)).toEqual({ total: 0, active: 0, cancelled: 0, paused: 0, mrr: 0, arr: 0, churnRate: 0 });
  });
});
