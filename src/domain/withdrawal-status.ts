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

/** The status the withdrawal webhook announces (spec 6.2): FAILED is REJECTED there. */
export function announcedWithdrawalStatus(status: WithdrawalStatus): string {
  return status === 'FAILED' ? 'REJECTED' : status;
}
