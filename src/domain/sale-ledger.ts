import { assertBalanced, availableMovement as available, blockedMovement as blocked, LedgerAccount, LedgerEffect, movement } from './ledger';
import { Cents, cents } from './money';
import { SaleEvent, SalePaymentMethod } from './sale-status';

export interface SaleFunds {
  /** The gross amount the customer paid. */
  amountCents: Cents;
  /** The platform's fee on the sale (amountCents = netAmountCents + systemFeeCents). */
  systemFeeCents: Cents;
  /** Credited to the seller when paid (amount − systemFee). */
  netAmountCents: Cents;
  /** The part of the net amount still held in blocked (a card reserve not yet released). */
  reserveHeldCents: Cents;
  /** The seller's pre-chargeback fine. */
  chargebackFineCents: Cents;
  /** Where the customer's money is: what the acquirer owes for a card sale, what the PSP holds for the rest. */
  receivable: 'ACQUIRER_RECEIVABLE' | 'PSP_HOLDINGS';
}

/** The provider account a sale's money sits in until it is settled. */
export function receivableOf(method: SalePaymentMethod): SaleFunds['receivable'] {
  return method === 'CREDIT_CARD' || method === 'DEBIT_CARD' ? 'ACQUIRER_RECEIVABLE' : 'PSP_HOLDINGS';
}

const none = (): null => null;
const on = (account: LedgerAccount, amount: number) => movement(account, cents(amount));

/** Paid: the customer's money is at the provider; the seller is owed the net (the reserve held), the platform earned its fee. */
const paid = ({ amountCents, systemFeeCents, netAmountCents: net, reserveHeldCents: held, receivable }: SaleFunds): LedgerEffect => ({
  kind: 'SALE_PAID',
  movements: [available(cents(net - held)), blocked(held), on('FEE_REVENUE', systemFeeCents), on(receivable, -amountCents)],
});

/**
 * The customer gets the whole amount back through the provider; the seller loses exactly the net it was
 * credited (from blocked for what is still held), and the platform bears its fee (platform.md §7).
 */
const reversal =
  (kind: 'REFUND' | 'CHARGEBACK_CONFIRMED') =>
  ({ amountCents, systemFeeCents, netAmountCents: net, reserveHeldCents: held, receivable }: SaleFunds): LedgerEffect => ({
    kind,
    movements: [available(cents(-(net - held))), blocked(cents(-held)), on('REVERSAL_COST', -systemFeeCents), on(receivable, amountCents)],
  });

/**
 * What each event on a sale does to the accounts (platform.md §4, spec 3.1), once the transition table
 * has allowed it; null when the move touches no money. Keyed by every event, so a new event is a compile
 * error until its money effect is written here. Every effect balances (saleLedgerEffect checks it).
 * Every reversal (refund, confirmed chargeback, lost MED) debits the seller exactly the netAmount that
 * was credited, never twice; fees are not returned.
 */
export const SALE_LEDGER_EFFECTS: Record<SaleEvent, (funds: SaleFunds) => LedgerEffect | null> = {
  // First payment (PENDENTE, EM_PROCESSAMENTO, or the FALHA retry): net credited, the reserve held.
  PAYMENT_CONFIRMED: paid,
  ACQUIRER_APPROVED: paid,
  // The disputed net amount moves from available to the reserve (it may take available below zero).
  MED_OPENED: ({ netAmountCents: net }) => ({ kind: 'MED_OPENED', movements: [available(cents(-net)), blocked(net)] }),
  MED_WON: ({ netAmountCents: net }) => ({ kind: 'MED_WON', movements: [blocked(cents(-net)), available(net)] }),
  // Deducted from the reserve, not again from available; the PSP returns the whole amount to the payer.
  MED_LOST: ({ amountCents, systemFeeCents, netAmountCents: net, receivable }) => ({
    kind: 'MED_LOST',
    movements: [blocked(cents(-net)), on('REVERSAL_COST', -systemFeeCents), on(receivable, amountCents)],
  }),
  CHARGEBACK_OPENED: ({ chargebackFineCents: fine }) => ({ kind: 'CHARGEBACK_OPENED', movements: [available(cents(-fine)), on('FINE_REVENUE', fine)] }),
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

/** The balanced effect of applying `event` to a sale, or null when the move touches no money. */
export function saleLedgerEffect(event: SaleEvent, funds: SaleFunds): LedgerEffect | null {
  const effect = SALE_LEDGER_EFFECTS[event](funds);
  return effect && assertBalanced(effect);
}

/** Releasing a card reserve: blocked back to available. */
export function reserveReleaseEffect(reserveCents: Cents): LedgerEffect {
  return { kind: 'RESERVE_RELEASED', movements: [blocked(cents(-reserveCents)), available(reserveCents)] };
}
