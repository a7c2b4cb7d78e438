import { Cents } from './money';

/**
 * The ledger's vocabulary, defined once: a seller has two accounts, every movement of money is a signed
 * amount on one of them, and every entry says which kind of event caused it (platform.md §4).
 */
export const LEDGER_ACCOUNTS = ['AVAILABLE', 'BLOCKED'] as const;
export type LedgerAccount = (typeof LEDGER_ACCOUNTS)[number];

export const LEDGER_ENTRY_KINDS = [
  'SALE_PAID',
  'RESERVE_RELEASED',
  'MED_OPENED',
  'MED_WON',
  'MED_LOST',
  'CHARGEBACK_OPENED',
  'CHARGEBACK_CONFIRMED',
  'REFUND',
  'WITHDRAWAL_REQUESTED',
  'WITHDRAWAL_COMPLETED',
  'WITHDRAWAL_RETURNED',
] as const;
export type LedgerEntryKind = (typeof LEDGER_ENTRY_KINDS)[number];

/** What a ledger entry points at. */
export type LedgerReferenceType = 'SALE' | 'WITHDRAWAL';

export interface BalanceMovement {
  account: LedgerAccount;
  /** Signed: credit positive, debit negative; zero movements are not written. */
  amountCents: Cents;
}

/** What one event does to a seller's balance: its kind and its movements. */
export interface LedgerEffect {
  kind: LedgerEntryKind;
  movements: BalanceMovement[];
}

export const availableMovement = (amountCents: Cents): BalanceMovement => ({ account: 'AVAILABLE', amountCents });
export const blockedMovement = (amountCents: Cents): BalanceMovement => ({ account: 'BLOCKED', amountCents });
