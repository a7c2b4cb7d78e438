import { Cents } from './money';

/**
 * The ledger's vocabulary, defined once (platform.md §4, style.md "Money"). Double entry: every event
 * that moves money is one posting, a set of movements on named accounts whose amounts sum to zero.
 *
 * Signs: an amount is credit-positive. What the platform owes or earned grows with positive amounts
 * (a seller's AVAILABLE and BLOCKED, FEE_REVENUE, FINE_REVENUE); what it owns or spent grows with
 * negative amounts (ACQUIRER_RECEIVABLE, PSP_HOLDINGS, PAYOUT_IN_TRANSIT, REVERSAL_COST). So a seller's
 * balance is the plain sum of its entries, and the whole ledger sums to zero.
 */
export const SELLER_ACCOUNTS = ['AVAILABLE', 'BLOCKED'] as const;
export const PLATFORM_ACCOUNTS = [
  /** Sale and withdrawal fees earned. */
  'FEE_REVENUE',
  /** Pre-chargeback fines charged to sellers. */
  'FINE_REVENUE',
  /** What refunds and lost disputes cost the platform: the fee it had earned on the sale, which it does not get back from the seller. */
  'REVERSAL_COST',
  /** Pix received that belong to no sale (none, cancelled, another amount, paid twice), and boletos paid after their sale was cancelled: owed back to their payers until returned. */
  'PAYER_RETURNS_DUE',
] as const;
export const PROVIDER_ACCOUNTS = [
  /** What the card acquirer owes the platform for captured card sales, not yet settled. */
  'ACQUIRER_RECEIVABLE',
  /** What the PSP holds for the platform: PIX, boleto and transfer payments received, less what was paid out. */
  'PSP_HOLDINGS',
  /** Sent to a seller's PIX key through the payout provider, not yet confirmed. */
  'PAYOUT_IN_TRANSIT',
  /** Refunds asked of the provider and not yet confirmed: owed to the payers, still held by the provider. */
  'REFUNDS_IN_TRANSIT',
] as const;
export const LEDGER_ACCOUNTS = [...SELLER_ACCOUNTS, ...PLATFORM_ACCOUNTS, ...PROVIDER_ACCOUNTS] as const;
export type SellerAccount = (typeof SELLER_ACCOUNTS)[number];
export type LedgerAccount = (typeof LEDGER_ACCOUNTS)[number];

export function isSellerAccount(account: LedgerAccount): account is SellerAccount {
  return account === 'AVAILABLE' || account === 'BLOCKED';
}

export function isProviderAccount(account: LedgerAccount): boolean {
  return (PROVIDER_ACCOUNTS as readonly string[]).includes(account);
}

export const LEDGER_ENTRY_KINDS = [
  'SALE_PAID',
  'RESERVE_RELEASED',
  'MED_OPENED',
  'MED_WON',
  'MED_LOST',
  'CHARGEBACK_OPENED',
  'CHARGEBACK_CONFIRMED',
  'REFUND',
  'REFUND_REQUESTED',
  'REFUND_SETTLED',
  'REFUND_FAILED',
  'PIX_RETURN_DUE',
  'PIX_RETURNED',
  'BOLETO_RETURN_DUE',
  'BOLETO_RETURNED',
  'PSP_RETURN',
  'WITHDRAWAL_REQUESTED',
  'WITHDRAWAL_SENT',
  'WITHDRAWAL_COMPLETED',
  'WITHDRAWAL_RETURNED',
] as const;
export type LedgerEntryKind = (typeof LEDGER_ENTRY_KINDS)[number];

/** What a ledger posting points at: its cause. */
export type LedgerReferenceType = 'SALE' | 'WITHDRAWAL' | 'PIX_RECEIPT';

export interface BalanceMovement {
  account: LedgerAccount;
  /** Signed, credit positive (see above); zero movements are not written. */
  amountCents: Cents;
}

/** What one event does to the accounts: its kind and its movements, which sum to zero. */
export interface LedgerEffect {
  kind: LedgerEntryKind;
  movements: BalanceMovement[];
}

export const movement = (account: LedgerAccount, amountCents: Cents): BalanceMovement => ({ account, amountCents });
export const availableMovement = (amountCents: Cents): BalanceMovement => movement('AVAILABLE', amountCents);
export const blockedMovement = (amountCents: Cents): BalanceMovement => movement('BLOCKED', amountCents);

/** The sum of an effect's movements: zero for every effect the domain writes. */
export function imbalanceOf(effect: LedgerEffect): number {
  return effect.movements.reduce((sum, m) => sum + m.amountCents, 0);
}

/** Throws unless the effect's movements sum to zero: the invariant every posting keeps. */
export function assertBalanced(effect: LedgerEffect): LedgerEffect {
  const imbalance = imbalanceOf(effect);
  if (imbalance !== 0) throw new Error(`Ledger posting ${effect.kind} does not balance: its movements sum to ${imbalance} cents`);
  return effect;
}
