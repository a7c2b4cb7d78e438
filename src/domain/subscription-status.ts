import { InvalidTransitionError } from './domain-error';

/** Spec 2.6 / 3.2. */
export const SUBSCRIPTION_STATUSES = ['PENDING', 'ACTIVE', 'TRIALING', 'PAUSED', 'CANCELLED', 'PAST_DUE', 'EXPIRED'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** What moves a subscription (spec 3.2). */
export const SUBSCRIPTION_EVENTS = [
  'FIRST_PAYMENT_CONFIRMED',
  'FIRST_PAYMENT_CONFIRMED_WITH_TRIAL',
  'CHARGE_CONFIRMED',
  'CHARGE_FAILED',
  'PAUSE',
  'RESUME',
  'CANCEL',
  'GRACE_PERIOD_ENDED',
  'EXPIRY_DATE_REACHED',
] as const;
export type SubscriptionEvent = (typeof SUBSCRIPTION_EVENTS)[number];

/**
 * The whole table of spec 3.2: from each status, the events it accepts and where they lead. A renewal
 * paid while ACTIVE changes no status (it is not in the table); CANCELLED and EXPIRED are final.
 */
export const SUBSCRIPTION_TRANSITIONS: Record<SubscriptionStatus, Partial<Record<SubscriptionEvent, SubscriptionStatus>>> = {
  PENDING: { FIRST_PAYMENT_CONFIRMED: 'ACTIVE', FIRST_PAYMENT_CONFIRMED_WITH_TRIAL: 'TRIALING', CANCEL: 'CANCELLED' },
  TRIALING: { CHARGE_CONFIRMED: 'ACTIVE', CANCEL: 'CANCELLED', CHARGE_FAILED: 'PAST_DUE', PAUSE: 'PAUSED' },
  ACTIVE: { PAUSE: 'PAUSED', CANCEL: 'CANCELLED', CHARGE_FAILED: 'PAST_DUE', EXPIRY_DATE_REACHED: 'EXPIRED' },
  PAUSED: { RESUME: 'ACTIVE', CANCEL: 'CANCELLED' },
  PAST_DUE: { CHARGE_CONFIRMED: 'ACTIVE', GRACE_PERIOD_ENDED: 'CANCELLED', CANCEL: 'CANCELLED' },
  CANCELLED: {},
  EXPIRED: {},
};

/** The status `event` moves a subscription in `from` to; InvalidTransitionError when spec 3.2 does not allow it. */
export function nextSubscriptionStatus(from: SubscriptionStatus, event: SubscriptionEvent): SubscriptionStatus {
  const to = SUBSCRIPTION_TRANSITIONS[from][event];
  if (!to) throw new InvalidTransitionError(from, event);
  return to;
}

export function canMove(from: SubscriptionStatus, event: SubscriptionEvent): boolean {
  return SUBSCRIPTION_TRANSITIONS[from][event] !== undefined;
}

/** A status the table leaves no way out of (CANCELLED, EXPIRED): derived from the table, never listed by hand. */
export function isFinalSubscriptionStatus(status: SubscriptionStatus): boolean {
  return Object.keys(SUBSCRIPTION_TRANSITIONS[status]).length === 0;
}
