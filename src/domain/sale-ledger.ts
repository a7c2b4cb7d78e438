import { Cents, cents } from './money';
import { SaleEvent } from './sale-status';

/** What a sale's move does to the seller's balance (platform.md §4, spec 3.1). */
export type SaleLedgerKind =
  | 'SALE_PAID'
  | 'RESERVE_RELEASED'
  | 'MED_OPENED'
  | 'MED_WON'
  | 'MED_LOST'
  | 'CHARGEBACK_OPENED'
  | 'CHARGEBACK_CONFIRMED'
  | 'REFUND';

export interface BalanceMovement {
  account: 'AVAILABLE' | 'BLOCKED';
  /** Signed: credit positive, debit negative. */
  amountCents: Cents;
}

export interface SaleLedgerEffect {
  kind: SaleLedgerKind;
  movements: BalanceMovement[];
}

export interface SaleFunds {
  /** Credited to the seller when paid (amount − systemFee). */
  netAmountCents: Cents;
  /** The part of the net amount still held in blocked (a card reserve not yet released). */
  reserveHeldCents: Cents;
  /** The seller's pre-chargeback fine. */
  chargebackFineCents: Cents;
}

const available = (amount: number): BalanceMovement => ({ account: 'AVAILABLE', amountCents: cents(amount) });
const blocked = (amount: number): BalanceMovement => ({ account: 'BLOCKED', amountCents: cents(amount) });

/**
 * The balance effect of applying `event` to a sale (the transition table has already allowed it), or
 * null when the move touches no money. Every reversal (refund, confirmed chargeback, lost MED) debits exactly the netAmount that was
 * credited, never twice; fees are not returned.
 */
export function saleLedgerEffect(event: SaleEvent, funds: SaleFunds): SaleLedgerEffect | null {
  const net = funds.netAmountCents;
  const held = funds.reserveHeldCents;
  switch (event) {
    case 'PAYMENT_CONFIRMED':
    case 'ACQUIRER_APPROVED':
      // First payment (PENDENTE, EM_PROCESSAMENTO, or the FALHA retry): net credited, the reserve held.
      return { kind: 'SALE_PAID', movements: [available(net - held), blocked(held)] };
    case 'MED_OPENED':
      // The disputed net amount moves from available to the reserve (it may take available below zero).
      return { kind: 'MED_OPENED', movements: [available(-net), blocked(net)] };
    case 'MED_WON':
      return { kind: 'MED_WON', movements: [blocked(-net), available(net)] };
    case 'MED_LOST':
      // Deducted from the reserve, not again from available.
      return { kind: 'MED_LOST', movements: [blocked(-net)] };
    case 'CHARGEBACK_OPENED':
      return { kind: 'CHARGEBACK_OPENED', movements: [available(-funds.chargebackFineCents)] };
    case 'CHARGEBACK_CONFIRMED':
      return { kind: 'CHARGEBACK_CONFIRMED', movements: [available(-(net - held)), blocked(-held)] };
    case 'REFUNDED':
      return { kind: 'REFUND', movements: [available(-(net - held)), blocked(-held)] };
    default:
      // CHARGEBACK_REVERSED keeps the credit the sale already had (the fine is not returned);
      // expiry, cancellation, failures, refusals and the move to the acquirer touch no money.
      return null;
  }
}

/** Releasing a card reserve: blocked back to available. */
export function reserveReleaseEffect(reserveCents: Cents): SaleLedgerEffect {
  return { kind: 'RESERVE_RELEASED', movements: [blocked(-reserveCents), available(reserveCents)] };
}
