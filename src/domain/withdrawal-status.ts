import { InvalidTransitionError } from './domain-error';

/** Spec 2.10 / 3.3. A rejection by the payout provider is stored as FAILED and announced as REJECTED. */
export const WITHDRAWAL_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

/** The payout provider's callbacks (platform.md §3). */
export const WITHDRAWAL_EVENTS = ['PROCESSING', 'COMPLETED', 'REJECTED', 'CANCELLED'] as const;
export type WithdrawalEvent = (typeof WITHDRAWAL_EVENTS)[number];

/** platform.md §7: PENDING → PROCESSING, CANCELLED or rejected; PROCESSING → COMPLETED or rejected; the rest final. */
export const WITHDRAWAL_TRANSITIONS: Record<WithdrawalStatus, Partial<Record<WithdrawalEvent, WithdrawalStatus>>> = {
  PENDING: { PROCESSING: 'PROCESSING', CANCELLED: 'CANCELLED', REJECTED: 'FAILED' },
  PROCESSING: { COMPLETED: 'COMPLETED', REJECTED: 'FAILED' },
  COMPLETED: {},
  FAILED: {},
  CANCELLED: {},
};

export function nextWithdrawalStatus(from: WithdrawalStatus, event: WithdrawalEvent): WithdrawalStatus {
  const to = WITHDRAWAL_TRANSITIONS[from][event];
  if (!to) throw new InvalidTransitionError(from, event);
  return to;
}

/**
 * What the payout provider says of a withdrawal's payout when asked by our reference: taken and not on
 * its way yet (PENDING), on its way (PROCESSING), paid (COMPLETED), refused (REJECTED), or cancelled
 * before it was paid (CANCELLED).
 */
export const PAYOUT_STATES = ['PENDING', 'PROCESSING', 'COMPLETED', 'REJECTED', 'CANCELLED'] as const;
export type PayoutState = (typeof PAYOUT_STATES)[number];

/**
 * The provider's callbacks that bring a withdrawal in each status to what its payout provider says of the
 * payout, in order, each a move of WITHDRAWAL_TRANSITIONS: what the withdrawal recovery job applies when it
 * learns by asking what a lost answer or callback would have said. None when the withdrawal already says
 * as much (or more: PROCESSING while the provider's record still says PENDING; a payout not made either
 * way, FAILED or CANCELLED). A payout the provider cancelled while it was on its way is a rejection here
 * (the table has no PROCESSING → CANCELLED; the money comes back the same way). null when they disagree
 * beyond any move (a final withdrawal the provider says otherwise of): left to an operator.
 */
export const WITHDRAWAL_CATCH_UP: Record<WithdrawalStatus, Record<PayoutState, readonly WithdrawalEvent[] | null>> = {
  PENDING: { PENDING: [], PROCESSING: ['PROCESSING'], COMPLETED: ['PROCESSING', 'COMPLETED'], REJECTED: ['REJECTED'], CANCELLED: ['CANCELLED'] },
  PROCESSING: { PENDING: [], PROCESSING: [], COMPLETED: ['COMPLETED'], REJECTED: ['REJECTED'], CANCELLED: ['REJECTED'] },
  COMPLETED: { PENDING: null, PROCESSING: null, COMPLETED: [], REJECTED: null, CANCELLED: null },
  FAILED: { PENDING: null, PROCESSING: null, COMPLETED: null, REJECTED: [], CANCELLED: [] },
  CANCELLED: { PENDING: null, PROCESSING: null, COMPLETED: null, REJECTED: [], CANCELLED: [] },
};

export function withdrawalCatchUp(from: WithdrawalStatus, payout: PayoutState): readonly WithdrawalEvent[] | null {
  return WITHDRAWAL_CATCH_UP[from][payout];
}

/** The status the withdrawal webhook announces (spec 6.2): FAILED is REJECTED there. */
export function announcedWithdrawalStatus(status: WithdrawalStatus): string {
  return status === 'FAILED' ? 'REJECTED' : status;
}
