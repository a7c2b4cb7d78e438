import { availableMovement as available, blockedMovement as blocked, LedgerEffect } from './ledger';
import { Cents, cents } from './money';
import { SaleEvent } from './sale-status';

export interface SaleFunds {
  /** Credited to the seller when paid (amount − systemFee). */
  netAmountCents: Cents;
  /** The part of the net amount still held in blocked (a card reserve not yet released). */
  reserveHeldCents: Cents;
  /** The seller's pre-chargeback fine. */
  chargebackFineCents: Cents;
}

const none = (): null => null;
const paid = ({ netAmountCents: net, reserveHeldCents: held }: SaleFunds): LedgerEffect => ({
  kind: 'SALE_PAID',
  movements: [available(cents(net - held)), blocked(held)],
});
const reversal =
  (kind: 'REFUND' | 'CHARGEBACK_CONFIRMED') =>
  ({ netAmountCents: net, reserveHeldCents: held }: SaleFunds): LedgerEffect => ({
    kind,
    movements: [available(cents(-(net - held))), blocked(cents(-held))],
  });

/**
 * What each event on a sale does to the seller's balance (platform.md §4, spec 3.1), once the transition
 * table has allowed it; null when the move touches no money. Keyed by every event, so a new event is a
 * compile error until its money effect is written here. Every reversal (refund, confirmed chargeback,
 * lost MED) debits exactly the netAmount that was credited, never twice; fees are not returned.
 */
export const SALE_LEDGER_EFFECTS: Record<SaleEvent, (funds: SaleFunds) => LedgerEffect | null> = {
  // First payment (PENDENTE, EM_PROCESSAMENTO, or the FALHA retry): net credited, the reserve held.
  PAYMENT_CONFIRMED: paid,
  ACQUIRER_APPROVED: paid,
  // The disputed net amount moves from available to the reserve (it may take available below zero).
  MED_OPENED: ({ netAmountCents: net }) => ({ kind: 'MED_OPENED', movements: [available(cents(-net)), blocked(net)] }),
  MED_WON: ({ netAmountCents: net }) => ({ kind: 'MED_WON', movements: [blocked(cents(-net)), available(net)] }),
  // Deducted from the reserve, not again from available.
  MED_LOST: ({ netAmountCents: net }) => ({ kind: 'MED_LOST', movements: [blocked(cents(-net))] }),
  CHARGEBACK_OPENED: ({ chargebackFineCents: fine }) => ({ kind: 'CHARGEBACK_OPENED', movements: [available(cents(-fine))] }),
  // A reversed chargeback keeps the credit the sale already had; the fine is not returned.
  CHARGEBACK_REVERSED: none,
  CHARGEBACK_CONFIRMED: reversal('CHARGEBACK_CONFIRMED'),
  REFUNDED: reversal('REFUND'),
  SENT_TO_ACQUIRER: none,
  ACQUIRER_REFUSED: none,
  PROCESSING_FAILED: none,
  EXPIRED: none,
  CANCELLED: none,
};

/** The balance effect of applying `event` to a sale, or null when the move touches no money. */
export function saleLedgerEffect(event: SaleEvent, funds: SaleFunds): LedgerEffect | null {
  return SALE_LEDGER_EFFECTS[event](funds);
}

/** Releasing a card reserve: blocked back to available. */
export function reserveReleaseEffect(reserveCents: Cents): LedgerEffect {
  return { kind: 'RESERVE_RELEASED', movements: [blocked(cents(-reserveCents)), available(reserveCents)] };
}
