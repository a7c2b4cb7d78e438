import { AutomaticPixStatus, automaticRenewalSendAt, collectsAutomatically } from './automatic-pix';
import { addDays } from './dates';
import { Cents, centsToReaisString, cents } from './money';
import { SubscriptionStatus } from './subscription-status';

export const BILLING_CYCLES = ['WEEKLY', 'BIWEEKLY', 'MONTHLY', 'QUARTERLY', 'SEMIANNUAL', 'YEARLY'] as const;
export type BillingCycle = (typeof BILLING_CYCLES)[number];

/** Spec 2.4: the interval of each cycle, in days. */
export const BILLING_CYCLE_DAYS: Record<BillingCycle, number> = {
  WEEKLY: 7,
  BIWEEKLY: 14,
  MONTHLY: 30,
  QUARTERLY: 90,
  SEMIANNUAL: 180,
  YEARLY: 365,
};

/** Calendar months in each cycle, for subscriptions billed on the BCB's calendar periods (Pix Automático). */
const CYCLE_MONTHS: Partial<Record<BillingCycle, number>> = { MONTHLY: 1, QUARTERLY: 3, SEMIANNUAL: 6, YEARLY: 12 };

/**
 * One cycle after `from`: its days (spec 2.4); or, for a Pix Automático subscription (`calendar`), the
 * same day of the month one, three, six or twelve months later (the last day of a shorter month), since
 * the BCB takes one recurring charge per calendar period and 30-day steps would put two in one month.
 */
export function addCycle(from: Date, cycle: BillingCycle, calendar = false): Date {
  const months = calendar ? CYCLE_MONTHS[cycle] : undefined;
  if (months === undefined) return addDays(from, BILLING_CYCLE_DAYS[cycle]);
  // Counted on the Brazilian calendar (UTC-3) and kept at the same time of day.
  const local = new Date(from.getTime() - BRAZIL_OFFSET_MS);
  const year = local.getUTCFullYear();
  const month = local.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const moved = Date.UTC(year, month, Math.min(local.getUTCDate(), lastDay), local.getUTCHours(), local.getUTCMinutes(), local.getUTCSeconds(), local.getUTCMilliseconds());
  return new Date(moved + BRAZIL_OFFSET_MS);
}

const BRAZIL_OFFSET_MS = 3 * 60 * 60 * 1000;

/** Dunning (platform.md §7): retries of a failed card renewal, days after its billing date, and the grace period. */
export interface DunningPolicy {
  retryOffsetsDays: readonly number[];
  graceDays: number;
  /** A PIX renewal unpaid this many days after its billing date makes the subscription PAST_DUE. */
  pixOverdueDays: number;
  /** A PIX renewal expires this many days after its billing date. */
  pixExpiryDays: number;
}

export const DEFAULT_DUNNING: DunningPolicy = { retryOffsetsDays: [1, 3, 5], graceDays: 7, pixOverdueDays: 1, pixExpiryDays: 7 };

/** What the billing job reads of a subscription. */
export interface BillingState {
  status: SubscriptionStatus;
  paymentMethod: 'PIX' | 'CREDIT_CARD';
  nextBillingDate: Date | null;
  scheduledCancellationDate: Date | null;
  /** The billing date of the period last charged, and how many attempts it has had. */
  periodDueAt: Date | null;
  nextRetryAt: Date | null;
  pastDueSince: Date | null;
  /** Billing date of a PIX renewal issued and not paid yet. */
  awaitingPaymentSince: Date | null;
  /** Pix Automático: renewals collected by the PSP are sent AUTOMATIC_PIX_LEAD_DAYS before they are due. */
  automaticPixStatus?: AutomaticPixStatus | null;
}

/** One step of the billing job for a subscription at `now`; null when nothing is due. */
export type BillingAction =
  | { kind: 'CANCEL_AT_PERIOD_END' }
  | { kind: 'GRACE_PERIOD_ENDED' }
  | { kind: 'PIX_OVERDUE' }
  | { kind: 'RETRY' }
  | { kind: 'RENEW' };

/**
 * What is due first for a subscription at `now` (pure): a cancellation scheduled for the period's end;
 * the end of the grace period of a PAST_DUE subscription (platform.md §7: 7 days after the failed
 * billing date); a PIX renewal unpaid the day after its billing date; a card retry on the dunning
 * schedule; a renewal on nextBillingDate. Nothing while PENDING, PAUSED or final.
 */
export function dueBillingAction(state: BillingState, now: Date, policy: DunningPolicy): BillingAction | null {
  const due = (at: Date | null) => at !== null && at.getTime() <= now.getTime();
  if (state.status !== 'ACTIVE' && state.status !== 'TRIALING' && state.status !== 'PAST_DUE') return null;
  if (due(state.scheduledCancellationDate)) return { kind: 'CANCEL_AT_PERIOD_END' };
  if (state.status === 'PAST_DUE') {
    if (state.pastDueSince && due(addDays(state.pastDueSince, policy.graceDays))) return { kind: 'GRACE_PERIOD_ENDED' };
    if (state.paymentMethod === 'CREDIT_CARD' && due(state.nextRetryAt)) return { kind: 'RETRY' };
    return null;
  }
  if (state.awaitingPaymentSince) {
    return due(addDays(state.awaitingPaymentSince, policy.pixOverdueDays)) ? { kind: 'PIX_OVERDUE' } : null;
  }
  const automatic = state.nextBillingDate !== null && state.paymentMethod === 'PIX' && collectsAutomatically(state.automaticPixStatus ?? null);
  // Sent early, a Pix Automático renewal would charge a period a cancellation scheduled for its start never gives.
  if (automatic && state.scheduledCancellationDate && state.nextBillingDate && state.scheduledCancellationDate.getTime() <= state.nextBillingDate.getTime()) return null;
  const renewAt = automatic ? automaticRenewalSendAt(state.nextBillingDate as Date) : state.nextBillingDate;
  return due(renewAt) ? { kind: 'RENEW' } : null;
}

/** When the next card retry of a period is due after `failedAttempts` failures, or null when none is left. */
export function nextRetryAt(periodDueAt: Date, failedAttempts: number, policy: DunningPolicy): Date | null {
  const offset = policy.retryOffsetsDays[failedAttempts - 1];
  return offset === undefined ? null : addDays(periodDueAt, offset);
}

/** A subscription as the metrics see it. */
export interface MetricsRow {
  status: SubscriptionStatus;
  amountCents: Cents;
  billingCycle: BillingCycle;
  cancelledAt: Date | null;
}

export interface SubscriptionMetrics {
  total: number;
  active: number;
  cancelled: number;
  paused: number;
  mrr: number;
  arr: number;
  churnRate: number;
}

/**
 * Spec 2.7 with platform.md §7: mrr = Σ over ACTIVE and TRIALING of amount × 30 / the cycle's days, in
 * reais with two decimals; arr = mrr × 12; churnRate = cancelled in the last 30 days ÷ (ACTIVE and
 * TRIALING now + those cancelled) × 100, two decimals. Sums are exact (in hundredths of a cent) and
 * rounded half up once.
 */
export function subscriptionMetrics(rows: MetricsRow[], now: Date): SubscriptionMetrics {
  const live = rows.filter((row) => row.status === 'ACTIVE' || row.status === 'TRIALING');
  // amount × 30 / days, kept as an exact fraction over the cycles' common multiple of days.
  const LCM = 7 * 2 * 3 * 3 * 5 * 73 * 4; // a multiple of 7, 14, 30, 90, 180 and 365
  const scaled = live.reduce((sum, row) => sum + BigInt(row.amountCents) * 30n * BigInt(LCM / BILLING_CYCLE_DAYS[row.billingCycle]), 0n);
  const mrrCents = Number((scaled * 2n + BigInt(LCM)) / (2n * BigInt(LCM)));
  const cancelledRecently = rows.filter((row) => row.status === 'CANCELLED' && row.cancelledAt && row.cancelledAt.getTime() > addDays(now, -30).getTime()).length;
  const base = live.length + cancelledRecently;
  return {
    total: rows.length,
    active: live.length,
    cancelled: rows.filter((row) => row.status === 'CANCELLED').length,
    paused: rows.filter((row) => row.status === 'PAUSED').length,
    mrr: Number(centsToReaisString(cents(mrrCents))),
    arr: Number(centsToReaisString(cents(mrrCents * 12))),
    churnRate: base === 0 ? 0 : Math.round((cancelledRecently * 10000) / base) / 100,
  };
}
