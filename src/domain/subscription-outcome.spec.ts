import { DEFAULT_DUNNING } from './subscription-billing';
import { chargeOpenedColumns, chargeOutcome, nextBillingAfter, subscriptionChangeOnCharge, SubscriptionState, subscriptionTransition } from './subscription-outcome';
import { isFinalSubscriptionStatus, SUBSCRIPTION_STATUSES } from './subscription-status';

const DAY = 86_400_000;
const NOW = new Date('2031-03-10T12:00:00.000Z');
const DUE = new Date('2031-03-01T12:00:00.000Z');

const active = (overrides: Partial<SubscriptionState> = {}): SubscriptionState => ({
  status: 'ACTIVE',
  billingCycle: 'MONTHLY',
  paymentMethod: 'CREDIT_CARD',
  trialDays: 0,
  currentPeriod: 2,
  periodDueAt: DUE,
  periodAttempts: 1,
  nextBillingDate: new Date(DUE.getTime() + 30 * DAY),
  pastDueSince: null,
  totalBillings: 3,
  successfulBillings: 2,
  failedBillings: 0,
  refundedBillings: 0,
  ...overrides,
});

describe('What a charge does to its subscription (subscriptionChangeOnCharge)', () => {
  it('tells which moves concern a subscription: a payment, a failure, a lapse unpaid; nothing else', () => {
    expect(chargeOutcome('PAGO', 'EM_PROCESSAMENTO')).toBe('PAID');
    expect(chargeOutcome('PAGO', 'FALHA')).toBe('PAID');
    expect(chargeOutcome('ESTORNADO', 'PAGO')).toBeNull();
    expect(chargeOutcome('RECUSADO', 'EM_PROCESSAMENTO')).toBe('FAILED');
    expect(chargeOutcome('CANCELADO', 'PENDENTE')).toBe('LAPSED');
    expect(chargeOutcome('CANCELADO', 'FALHA')).toBeNull();
    expect(chargeOutcome('EM_PROCESSAMENTO', 'PENDENTE')).toBeNull();
  });

  it('starts a subscription on its first payment, with its trial when it has one', () => {
    const pending = active({ status: 'PENDING', currentPeriod: 0, successfulBillings: 0, totalBillings: 1 });
    expect(subscriptionChangeOnCharge(pending, { status: 'PAGO', billingPeriod: 0 }, 'PENDENTE', NOW, DEFAULT_DUNNING)).toEqual({
      event: 'FIRST_PAYMENT_CONFIRMED',
      refund: false,
      changes: expect.objectContaining({ startedAt: NOW, trialEndsAt: null, successfulBillings: 1, lastPaymentStatus: 'PAGO', nextBillingDate: new Date(NOW.getTime() + 30 * DAY) }),
    });
    const trial = subscriptionChangeOnCharge({ ...pending, trialDays: 7 }, { status: 'PAGO', billingPeriod: 0 }, 'PENDENTE', NOW, DEFAULT_DUNNING);
    expect(trial?.event).toBe('FIRST_PAYMENT_CONFIRMED_WITH_TRIAL');
    expect(trial?.changes.nextBillingDate).toEqual(new Date(NOW.getTime() + 7 * DAY));
  });

  it('moves a refused renewal of the current period to PAST_DUE with its first retry date, and counts it once', () => {
    const change = subscriptionChangeOnCharge(active(), { status: 'RECUSADO', billingPeriod: 2 }, 'EM_PROCESSAMENTO', NOW, DEFAULT_DUNNING);
    expect(change).toEqual({
      event: 'CHARGE_FAILED',
      refund: false,
      changes: { failedBillings: 1, lastPaymentStatus: 'RECUSADO', pastDueSince: DUE, nextRetryAt: new Date(DUE.getTime() + DAY) },
    });
    // Already PAST_DUE: no second move, the next retry date moves on.
    const again = subscriptionChangeOnCharge(active({ status: 'PAST_DUE', pastDueSince: DUE, periodAttempts: 2, failedBillings: 1 }), { status: 'RECUSADO', billingPeriod: 2 }, 'EM_PROCESSAMENTO', NOW, DEFAULT_DUNNING);
    expect(again?.event).toBeNull();
    expect(again?.changes).toMatchObject({ failedBillings: 2, pastDueSince: DUE, nextRetryAt: new Date(DUE.getTime() + 3 * DAY) });
  });

  it('brings a PAST_DUE subscription back on a paid retry, and uncounts the failure a FALHA → PAGO retry had counted', () => {
    const change = subscriptionChangeOnCharge(active({ status: 'PAST_DUE', pastDueSince: DUE, failedBillings: 1 }), { status: 'PAGO', billingPeriod: 2 }, 'FALHA', NOW, DEFAULT_DUNNING);
    expect(change?.event).toBe('CHARGE_CONFIRMED');
    expect(change?.changes).toMatchObject({ successfulBillings: 3, failedBillings: 0, pastDueSince: null, nextRetryAt: null, lastPaymentDate: NOW });
  });

  it('moves the next billing date of a Pix Automático trial from the trial end to one cycle after it when its first charge is paid, once', () => {
    const trialEnd = new Date('2031-03-08T12:00:00.000Z');
    const trialing = active({ status: 'TRIALING', paymentMethod: 'PIX', currentPeriod: 0, periodDueAt: trialEnd, nextBillingDate: trialEnd, automaticPixJourney: 'JOURNEY_2' });
    const paid = subscriptionChangeOnCharge(trialing, { status: 'PAGO', billingPeriod: 0 }, 'PENDENTE', NOW, DEFAULT_DUNNING);
    expect(paid?.event).toBe('CHARGE_CONFIRMED');
    expect(paid?.changes.nextBillingDate).toEqual(new Date('2031-04-08T12:00:00.000Z'));
    // A renewal's opening moved the date already: its payment leaves it.
    expect(subscriptionChangeOnCharge(active(), { status: 'PAGO', billingPeriod: 2 }, 'PENDENTE', NOW, DEFAULT_DUNNING)?.changes).not.toHaveProperty('nextBillingDate');
  });

  it('marks a charge paid after the subscription stopped to be refunded, and changes nothing else', () => {
    for (const status of ['CANCELLED', 'PAUSED'] as const) {
      expect(subscriptionChangeOnCharge(active({ status }), { status: 'PAGO', billingPeriod: 2 }, 'EM_PROCESSAMENTO', NOW, DEFAULT_DUNNING)).toEqual({
        event: null,
        changes: { refundedBillings: 1 },
        refund: true,
      });
    }
  });

  it('cancels a subscription whose first charge is refused or whose first PIX lapses; a renewal lapsing only counts', () => {
    const pending = active({ status: 'PENDING', currentPeriod: 0 });
    expect(subscriptionChangeOnCharge(pending, { status: 'RECUSADO', billingPeriod: 0 }, 'EM_PROCESSAMENTO', NOW, DEFAULT_DUNNING)).toMatchObject({
      event: 'CANCEL',
      changes: { cancelledAt: NOW, cancellationReason: 'First payment refused' },
    });
    expect(subscriptionChangeOnCharge(pending, { status: 'CANCELADO', billingPeriod: 0 }, 'PENDENTE', NOW, DEFAULT_DUNNING)).toMatchObject({
      event: 'CANCEL',
      changes: { cancellationReason: 'First payment not made' },
    });
    expect(subscriptionChangeOnCharge(active({ status: 'CANCELLED' }), { status: 'CANCELADO', billingPeriod: 2 }, 'PENDENTE', NOW, DEFAULT_DUNNING)).toEqual({
      event: null,
      changes: { failedBillings: 1, lastPaymentStatus: 'FALHA' },
      refund: false,
    });
  });
});

describe('The subscription table and its dates', () => {
  it('derives the final statuses from the table: CANCELLED and EXPIRED, no other', () => {
    expect(SUBSCRIPTION_STATUSES.filter(isFinalSubscriptionStatus)).toEqual(['CANCELLED', 'EXPIRED']);
  });

  it('clears the billing dates when a move ends the subscription, and keeps them otherwise', () => {
    expect(subscriptionTransition('ACTIVE', 'CANCEL', { cancelledAt: NOW })).toEqual({
      next: 'CANCELLED',
      columns: { cancelledAt: NOW, status: 'CANCELLED', nextBillingDate: null, nextRetryAt: null, scheduledCancellationDate: null },
    });
    expect(subscriptionTransition('ACTIVE', 'PAUSE', { pausedAt: NOW })).toEqual({ next: 'PAUSED', columns: { pausedAt: NOW, status: 'PAUSED' } });
    expect(subscriptionTransition('ACTIVE', null, { failedBillings: 2 })).toEqual({ next: 'ACTIVE', columns: { failedBillings: 2, status: 'ACTIVE' } });
    expect(() => subscriptionTransition('CANCELLED', 'RESUME', {})).toThrow();
  });

  it('bills the next period one cycle after the last, or one cycle after a charge so late that date has passed', () => {
    expect(nextBillingAfter(DUE, NOW, 'MONTHLY')).toEqual(new Date(DUE.getTime() + 30 * DAY)); // a month is 30 days (platform.md §7)
    expect(nextBillingAfter(DUE, new Date('2031-04-05T12:00:00.000Z'), 'MONTHLY')).toEqual(new Date('2031-05-05T12:00:00.000Z'));
  });

  it('opens a renewal on a new period and a retry on the same one, keeping the next billing date of a retry', () => {
    const current = active();
    expect(chargeOpenedColumns(current, 3, 0, current.nextBillingDate as Date, NOW)).toMatchObject({ currentPeriod: 3, periodAttempts: 1, totalBillings: 4, lastPaymentStatus: 'PENDENTE', awaitingPaymentSince: null });
    const retry = chargeOpenedColumns(current, 2, 1, DUE, NOW);
    expect(retry).toMatchObject({ currentPeriod: 2, periodAttempts: 2, nextBillingDate: current.nextBillingDate });
    expect(chargeOpenedColumns(active({ paymentMethod: 'PIX' }), 3, 0, DUE, NOW).awaitingPaymentSince).toEqual(DUE);
  });
});
