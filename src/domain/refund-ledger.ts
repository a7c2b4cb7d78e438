import { availableMovement as available, LedgerEffect, movement } from './ledger';
import { Cents, cents } from './money';
import { SaleFunds } from './sale-ledger';

/** The seller's and the platform's parts of one refund (they add up to the refund's amount). */
export interface RefundSplit {
  /** Taken from the seller: its share of the net amount the sale credited. */
  sellerDebitCents: Cents;
  /** Borne by the platform: the share of its fee, which it does not get back (platform.md §7). */
  platformCostCents: Cents;
}

/** The part of `whole` that `refunded` of `amount` carries, rounded down, and exactly `whole` once all is refunded. */
function shareOf(whole: number, refunded: number, amount: number): number {
  if (refunded >= amount) return whole;
  return Number((BigInt(whole) * BigInt(refunded)) / BigInt(amount));
}

/**
 * How a refund of `amountCents` splits, after `refundedBeforeCents` of the same sale were refunded:
 * proportional to the net amount on the running total (never on the single refund), so that the
 * partials' debits always sum to what one full refund debits (the net amount), with no rounding drift.
 * `debitedBeforeCents`, when given, is what the refunds not failed really debited so far: the new debit
 * then brings their sum to the running total's share, so that a refund failing between others (whose
 * debit was taken on a total that counted it) leaves no drift either. Never below 0 nor above the refund.
 */
export function refundSplit(sale: { amountCents: Cents; netAmountCents: Cents }, refundedBeforeCents: number, amountCents: number, debitedBeforeCents?: number): RefundSplit {
  const before = debitedBeforeCents ?? shareOf(sale.netAmountCents, refundedBeforeCents, sale.amountCents);
  const debit = Math.min(amountCents, Math.max(0, shareOf(sale.netAmountCents, refundedBeforeCents + amountCents, sale.amountCents) - before));
  return { sellerDebitCents: cents(debit), platformCostCents: cents(amountCents - debit) };
}

/**
 * What is left of a paid sale's funds once `refundedCents` of it were refunded: the reversals that can
 * still come (a full refund, a lost MED, a confirmed chargeback) move only what the refunds left. The
 * reserve still held is not touched by refunds (they debit available), so it stays as it is.
 */
export function fundsAfterRefunds(funds: SaleFunds, refundedCents: number): SaleFunds {
  if (refundedCents <= 0) return funds;
  const net = funds.netAmountCents - shareOf(funds.netAmountCents, refundedCents, funds.amountCents);
  const amount = Math.max(0, funds.amountCents - refundedCents);
  return { ...funds, amountCents: cents(amount), netAmountCents: cents(net), systemFeeCents: cents(amount - net) };
}

/** Asked of the provider: the seller's part leaves available at once (it cannot be withdrawn meanwhile), the payer is owed the whole. */
export function refundRequestedEffect(split: RefundSplit): LedgerEffect {
  const amount = split.sellerDebitCents + split.platformCostCents;
  return {
    kind: 'REFUND_REQUESTED',
    movements: [available(cents(-split.sellerDebitCents)), movement('REVERSAL_COST', cents(-split.platformCostCents)), movement('REFUNDS_IN_TRANSIT', cents(amount))],
  };
}

/** Confirmed by the provider: the money left what it held (or owed) for the platform. */
export function refundSettledEffect(amountCents: Cents, receivable: SaleFunds['receivable']): LedgerEffect {
  return { kind: 'REFUND_SETTLED', movements: [movement('REFUNDS_IN_TRANSIT', cents(-amountCents)), movement(receivable, amountCents)] };
}

/** Rejected by the provider: exactly what the request took goes back. */
export function refundFailedEffect(split: RefundSplit): LedgerEffect {
  const amount = split.sellerDebitCents + split.platformCostCents;
  return {
    kind: 'REFUND_FAILED',
    movements: [movement('REFUNDS_IN_TRANSIT', cents(-amount)), available(split.sellerDebitCents), movement('REVERSAL_COST', split.platformCostCents)],
  };
}

/** A Pix received that belongs to no sale: the PSP holds it, and the platform owes it back to its payer. */
export function pixReturnDueEffect(amountCents: Cents): LedgerEffect {
  return { kind: 'PIX_RETURN_DUE', movements: [movement('PSP_HOLDINGS', cents(-amountCents)), movement('PAYER_RETURNS_DUE', amountCents)] };
}

/** Its return confirmed by the PSP: the money is back with the payer. */
export function pixReturnedEffect(amountCents: Cents): LedgerEffect {
  return { kind: 'PIX_RETURNED', movements: [movement('PAYER_RETURNS_DUE', cents(-amountCents)), movement('PSP_HOLDINGS', amountCents)] };
}

/** A boleto paid after its sale was cancelled (or of another amount): its issuer holds the money, and the platform owes it back to its payer. */
export function boletoReturnDueEffect(amountCents: Cents): LedgerEffect {
  return { kind: 'BOLETO_RETURN_DUE', movements: [movement('PSP_HOLDINGS', cents(-amountCents)), movement('PAYER_RETURNS_DUE', amountCents)] };
}

/** The operator returned it to the payer (a bank transfer from the issuer's account): nothing is owed any more. */
export function boletoReturnedEffect(amountCents: Cents): LedgerEffect {
  return { kind: 'BOLETO_RETURNED', movements: [movement('PAYER_RETURNS_DUE', cents(-amountCents)), movement('PSP_HOLDINGS', amountCents)] };
}

/**
 * A return the PSP made on its own (a devolução the gateway did not ask for: a MED's, natureza
 * MED_OPERACIONAL or MED_FRAUDE) of part of a paid Pix: booked like a lost dispute for that part
 * (platform.md §4): the seller loses its share of the net it was credited, the platform bears its share
 * of the fee, and the money has left what the PSP holds. `split` is refundSplit's for that part.
 */
export function pspReturnEffect(split: RefundSplit): LedgerEffect {
  const amount = split.sellerDebitCents + split.platformCostCents;
  return {
    kind: 'PSP_RETURN',
    movements: [available(cents(-split.sellerDebitCents)), movement('REVERSAL_COST', cents(-split.platformCostCents)), movement('PSP_HOLDINGS', cents(amount))],
  };
}
