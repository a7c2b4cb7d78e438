import { assertBalanced, availableMovement as available, blockedMovement as blocked, LedgerEffect, movement } from './ledger';
import { Cents, cents } from './money';
import { WithdrawalEvent, WithdrawalStatus } from './withdrawal-status';

/** What a withdrawal's postings read of it. */
export interface WithdrawalFunds {
  /** Gross: what leaves the seller's balance. */
  amountCents: Cents;
  /** The withdrawal fee the platform earns. */
  feeCents: Cents;
  /** Sent to the seller's PIX key (amount − fee). */
  netAmountCents: Cents;
}

/** A withdrawal request: its whole amount moves from available to blocked while it is PENDING or PROCESSING (platform.md §4). */
export function withdrawalRequestedEffect(amountCents: Cents): LedgerEffect {
  return { kind: 'WITHDRAWAL_REQUESTED', movements: [available(cents(-amountCents)), blocked(amountCents)] };
}

/** Back to available; a payout already handed to the payout provider comes back from transit to the PSP account. */
const returned = ({ amountCents, netAmountCents }: WithdrawalFunds, from: WithdrawalStatus): LedgerEffect => ({
  kind: 'WITHDRAWAL_RETURNED',
  movements: [
    blocked(cents(-amountCents)),
    available(amountCents),
    ...(from === 'PROCESSING' ? [movement('PAYOUT_IN_TRANSIT', netAmountCents), movement('PSP_HOLDINGS', cents(-netAmountCents))] : []),
  ],
});

/**
 * What each payout provider callback does to the accounts; null when it touches no money. Keyed by every
 * event. PROCESSING: the net amount leaves the PSP account for the payout provider (in transit); the
 * seller's balance is unchanged, still blocked. COMPLETED: the seller's blocked amount goes, the transit
 * ends, the platform earns the withdrawal fee. A rejection or a cancellation returns it to available.
 */
export const WITHDRAWAL_LEDGER_EFFECTS: Record<WithdrawalEvent, (funds: WithdrawalFunds, from: WithdrawalStatus) => LedgerEffect | null> = {
  PROCESSING: ({ netAmountCents }) => ({
    kind: 'WITHDRAWAL_SENT',
    movements: [movement('PSP_HOLDINGS', netAmountCents), movement('PAYOUT_IN_TRANSIT', cents(-netAmountCents))],
  }),
  COMPLETED: ({ amountCents, feeCents, netAmountCents }) => ({
    kind: 'WITHDRAWAL_COMPLETED',
    movements: [blocked(cents(-amountCents)), movement('FEE_REVENUE', feeCents), movement('PAYOUT_IN_TRANSIT', netAmountCents)],
  }),
  REJECTED: returned,
  CANCELLED: returned,
};

/** The balanced effect of a payout callback on a withdrawal in status `from`. */
export function withdrawalLedgerEffect(event: WithdrawalEvent, funds: WithdrawalFunds, from: WithdrawalStatus): LedgerEffect | null {
  const effect = WITHDRAWAL_LEDGER_EFFECTS[event](funds, from);
  return effect && assertBalanced(effect);
}
