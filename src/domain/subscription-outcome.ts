import { addDays } from './dates';
import { SaleStatus } from './sale-status';
import { addCycle, BillingCycle, DunningPolicy, nextRetryAt } from './subscription-billing';
import { canMove, isFinalSubscriptionStatus, nextSubscriptionStatus, SubscriptionEvent, SubscriptionStatus } from './subscription-status';

/** What the decisions below read of a subscription (the entity's properties of the same names). */
export interface SubscriptionState {
  status: SubscriptionStatus;
  billingCycle: BillingCycle;
  paymentMethod: 'PIX' | 'CREDIT_CARD';
  trialDays: number;
  currentPeriod: number;
  periodDueAt: Date | null;
  periodAttempts: number;
  nextBillingDate: Date | null;
  pastDueSince: Date | null;
  totalBillings: number;
  successfulBillings: number;
  failedBillings: number;
  refundedBillings: number;
  /** Set when the subscription asked for Pix Automático: its cycles are calendar periods. */
  automaticPixJourney?: 'JOURNEY_2' | 'JOURNEY_3' | null;
}

/** The columns a decision writes (named as the subscription's properties). */
export interface SubscriptionColumns {
  status?: SubscriptionStatus;
  startedAt?: Date | null;
  trialEndsAt?: Date | null;
  nextBillingDate?: Date | null;
  cancelledAt?: Date | null;
  cancellationReason?: string | null;
  scheduledCancellationDate?: Date | null;
  pausedAt?: Date | null;
  resumedAt?: Date | null;
  currentPeriod?: number;
  periodDueAt?: Date | null;
  periodAttempts?: number;
  nextRetryAt?: Date | null;
  pastDueSince?: Date | null;
  awaitingPaymentSince?: Date | null;
  lastPaymentDate?: Date | null;
  lastPaymentStatus?: string | null;
  totalBillings?: number;
  successfulBillings?: number;
  failedBillings?: number;
  refundedBillings?: number;
}

/** What a sale's move does to its subscription: the event (or none) and the columns, and whether the sale is to be refunded. */
export interface SubscriptionChange {
  event: SubscriptionEvent | null;
  changes: SubscriptionColumns;
  refund: boolean;
}

/** What a subscription's charge (a sale) reads here. */
export interface ChargeSale {
  status: SaleStatus;
  billingPeriod: number | null;
}

/** Cancelled or paused: nothing of it can be paid (a charge approved now is refunded), and its open charges are cancelled. */
/** Billed on calendar periods: a subscription that asked for Pix Automático (see addCycle). */
export function onCalendar(subscription: { automaticPixJourney?: string | null }): boolean {
  return subscription.automaticPixJourney !== null && subscription.automaticPixJourney !== undefined;
}

export function isStopped(status: SubscriptionStatus): boolean {
  return status === 'CANCELLED' || status === 'PAUSED';
}

/** How a sale's move concerns its subscription: its payment, its failure, or its lapse unpaid (null: not at all). */
export function chargeOutcome(status: SaleStatus, previous: SaleStatus): 'PAID' | 'FAILED' | 'LAPSED' | null {
  if (status === 'PAGO') return previous === 'PENDENTE' || previous === 'EM_PROCESSAMENTO' || previous === 'FALHA' ? 'PAID' : null;
  if (status === 'RECUSADO' || status === 'FALHA') return 'FAILED';
  if (status === 'CANCELADO' && previous === 'PENDENTE') return 'LAPSED';
  return null;
}

export function cancelledColumns(at: Date, reason: string | null): SubscriptionColumns {
  return { cancelledAt: at, cancellationReason: reason };
}

/**
 * What the move of one of its charges (`sale`, now in its new status, from `previous`) does to the
 * subscription at `now`: its first payment activates it (or starts its trial); a renewal's payment,
 * failure or lapse moves its counters and its dunning dates; a charge paid after the subscription
 * stopped is to be refunded. Null when the move does not concern it.
 */
export function subscriptionChangeOnCharge(subscription: SubscriptionState, sale: ChargeSale, previous: SaleStatus, now: Date, dunning: DunningPolicy): SubscriptionChange | null {
  // The charge that opens the subscription: period 0 while PENDING. (Period 0 of a Pix Automático trial
  // (journey 2) is collected after the authorization started the trial: it is billed like a renewal.)
  const first = sale.billingPeriod === 0 && subscription.status === 'PENDING';
  const changes: SubscriptionColumns = {};
  let event: SubscriptionEvent | null = null;

  switch (chargeOutcome(sale.status, previous)) {
    case 'PAID':
      if (isStopped(subscription.status)) {
        // Nothing of a cancelled or paused subscription can be paid afterwards: a charge the acquirer
        // approved after the stop is given back.
        return { event: null, changes: { refundedBillings: subscription.refundedBillings + 1 }, refund: true };
      }
      Object.assign(changes, {
        successfulBillings: subscription.successfulBillings + 1,
        failedBillings: subscription.failedBillings - (previous === 'FALHA' ? 1 : 0),
        lastPaymentDate: now,
        lastPaymentStatus: 'PAGO',
      });
      if (first && subscription.status === 'PENDING') {
        const trialEndsAt = subscription.trialDays > 0 ? addDays(now, subscription.trialDays) : null;
        event = trialEndsAt ? 'FIRST_PAYMENT_CONFIRMED_WITH_TRIAL' : 'FIRST_PAYMENT_CONFIRMED';
        Object.assign(changes, { startedAt: now, trialEndsAt, periodDueAt: now, nextBillingDate: trialEndsAt ?? addCycle(now, subscription.billingCycle, onCalendar(subscription)) });
      } else if (!first && sale.billingPeriod === subscription.currentPeriod) {
        if (subscription.status === 'TRIALING' || subscription.status === 'PAST_DUE') event = 'CHARGE_CONFIRMED';
        Object.assign(changes, { pastDueSince: null, nextRetryAt: null, awaitingPaymentSince: null }, nextBillingOnOutcome(subscription, now));
      }
      break;
    case 'FAILED': {
      // Either comes only from PENDENTE or EM_PROCESSAMENTO: counted once, and uncounted by a FALHA → PAGO retry above.
      Object.assign(changes, { failedBillings: subscription.failedBillings + 1, lastPaymentStatus: sale.status });
      const billed = subscription.status === 'PAST_DUE' || canMove(subscription.status, 'CHARGE_FAILED');
      if (!first && billed && sale.billingPeriod === subscription.currentPeriod && subscription.periodDueAt) {
        if (subscription.status !== 'PAST_DUE') event = 'CHARGE_FAILED';
        Object.assign(
          changes,
          {
            pastDueSince: subscription.pastDueSince ?? subscription.periodDueAt,
            nextRetryAt: nextRetryAt(subscription.periodDueAt, subscription.periodAttempts, dunning),
          },
          nextBillingOnOutcome(subscription, now),
        );
      } else if (first && sale.status === 'RECUSADO' && subscription.status === 'PENDING') {
        // The first charge refused for good: the subscription never starts.
        event = 'CANCEL';
        Object.assign(changes, cancelledColumns(now, 'First payment refused'));
      }
      break;
    }
    case 'LAPSED':
      Object.assign(changes, { failedBillings: subscription.failedBillings + 1, lastPaymentStatus: 'FALHA' });
      if (first && subscription.status === 'PENDING') {
        // The first PIX expired (or was cancelled) unpaid: the subscription never starts.
        event = 'CANCEL';
        Object.assign(changes, cancelledColumns(now, 'First payment not made'));
      }
      // A PIX renewal that expired unpaid: the grace period ends the subscription.
      break;
    case null:
      return null;
  }
  return { event, changes, refund: false };
}

/**
 * The next status by the table of spec 3.2 (unchanged without an event; InvalidTransitionError when the
 * table refuses) and the columns saved with it: a final status clears the billing dates.
 */
export function subscriptionTransition(status: SubscriptionStatus, event: SubscriptionEvent | null, changes: SubscriptionColumns): { next: SubscriptionStatus; columns: SubscriptionColumns } {
  const next = event ? nextSubscriptionStatus(status, event) : status;
  const cleared = isFinalSubscriptionStatus(next) ? { nextBillingDate: null, nextRetryAt: null, scheduledCancellationDate: null } : {};
  return { next, columns: { ...changes, status: next, ...cleared } };
}

/**
 * The next billing date once the charge of the current period has its outcome, when it still is that
 * period's own due date: the first charge of a Pix Automático trial (journey 2) is written before the
 * trial ends, and during the trial nextBillingDate is trialEndsAt (platform.md §7); paid or failed, the
 * next date is one cycle after it. Nothing for a renewal, whose opening moved the date already.
 */
function nextBillingOnOutcome(subscription: SubscriptionState, now: Date): SubscriptionColumns {
  const { nextBillingDate, periodDueAt } = subscription;
  if (!nextBillingDate || !periodDueAt || nextBillingDate.getTime() > periodDueAt.getTime()) return {};
  return { nextBillingDate: nextBillingAfter(periodDueAt, now, subscription.billingCycle, onCalendar(subscription)) };
}

/**
 * The next billing date after a renewal charged at `now` for a period due at `dueAt`: one cycle after
 * the period, or, when the charge comes so late that date has passed too, one cycle after the charge
 * (missed periods are not charged all at once).
 */
export function nextBillingAfter(dueAt: Date, now: Date, cycle: BillingCycle, calendar = false): Date {
  const next = addCycle(dueAt, cycle, calendar);
  return next.getTime() > now.getTime() ? next : addCycle(now, cycle, calendar);
}

/** The subscription's columns once the charge `attempt` of `period` (due at `dueAt`) is written: its period, dates and counters. */
export function chargeOpenedColumns(current: SubscriptionState, period: number, attempt: number, dueAt: Date, now: Date): SubscriptionColumns {
  return {
    currentPeriod: period,
    periodDueAt: dueAt,
    periodAttempts: attempt + 1,
    nextRetryAt: null,
    nextBillingDate: attempt === 0 ? nextBillingAfter(dueAt, now, current.billingCycle, onCalendar(current)) : current.nextBillingDate,
    awaitingPaymentSince: current.paymentMethod === 'PIX' ? dueAt : null,
    totalBillings: current.totalBillings + 1,
    lastPaymentStatus: 'PENDENTE',
  };
}
