import { availableMovement as available, blockedMovement as blocked, LedgerEffect } from './ledger';
import { Cents, cents } from './money';
import { WithdrawalEvent } from './withdrawal-status';

/** A withdrawal request: its whole amount moves from available to blocked while it is PENDING or PROCESSING (platform.md §4). */
export function withdrawalRequestedEffect(amountCents: Cents): LedgerEffect {
  return { kind: 'WITHDRAWAL_REQUESTED', movements: [available(cents(-amountCents)), blocked(amountCents)] };
}

const returned = (amountCents: Cents): LedgerEffect => ({
  kind: 'WITHDRAWAL_RETURNED',
  movements: [blocked(cents(-amountCents)), available(amountCents)],
});

/**
 * What each payout provider callback does to the seller's balance, beside the sale's effects; null when
 * it touches no money. Keyed by every event: COMPLETED removes the blocked amount (it left the platform);
 * a rejection or a cancellation returns it to available.
 */
export const WITHDRAWAL_LEDGER_EFFECTS: Record<WithdrawalEvent, (amountCents: Cents) => LedgerEffect | null> = {
  PROCESSING: () => null,
  COMPLETED: (amountCents) => ({ kind: 'WITHDRAWAL_COMPLETED', movements: [blocked(cents(-amountCents))] }),
  REJECTED: returned,
  CANCELLED: returned,
};

export function withdrawalLedgerEffect(event: WithdrawalEvent, amountCents: Cents): LedgerEffect | null {
  return WITHDRAWAL_LEDGER_EFFECTS[event](amountCents);
}
