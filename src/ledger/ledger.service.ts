import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Cents } from '../domain/money';
import { BalanceMismatch, BalanceRow, LedgerRepository } from './ledger.repository';

export type LedgerAccount = 'AVAILABLE' | 'BLOCKED';
export type LedgerEntryKind =
  | 'SALE_PAID'
  | 'RESERVE_RELEASED'
  | 'MED_OPENED'
  | 'MED_WON'
  | 'MED_LOST'
  | 'CHARGEBACK_OPENED'
  | 'CHARGEBACK_REVERSED'
  | 'CHARGEBACK_CONFIRMED'
  | 'REFUND'
  | 'CASHOUT_REQUESTED'
  | 'CASHOUT_COMPLETED'
  | 'CASHOUT_RETURNED';

export interface LedgerMovement {
  account: LedgerAccount;
  /** Signed cents; zero movements are skipped. */
  amountCents: Cents;
}

export interface LedgerPosting {
  sellerId: number;
  kind: LedgerEntryKind;
  referenceType: 'SALE' | 'WITHDRAWAL';
  referenceId: number;
  movements: LedgerMovement[];
}

export type BalanceAfter = BalanceRow;

/**
 * The only writer of balances: every movement is an append-only entry, and the cached balances row
 * moves by the same amounts in the same transaction, under a row lock.
 */
@Injectable()
export class LedgerService {
  constructor(private readonly ledger: LedgerRepository) {}

  /** Inside the caller's transaction: locks the seller's balance, appends the entries, moves the balance. */
  async post(manager: EntityManager, posting: LedgerPosting): Promise<BalanceAfter> {
    const current = await this.ledger.lockBalance(posting.sellerId, manager);
    const movements = posting.movements.filter((movement) => movement.amountCents !== 0);
    if (movements.length === 0) return current;
    await this.ledger.append(
      movements.map((movement) => ({
        sellerId: posting.sellerId,
        account: movement.account,
        amountCents: movement.amountCents,
        kind: posting.kind,
        referenceType: posting.referenceType,
        referenceId: String(posting.referenceId),
      })),
      manager,
    );
    const sum = (account: LedgerAccount) => movements.filter((m) => m.account === account).reduce((total, m) => total + m.amountCents, 0);
    return this.ledger.addToBalance(posting.sellerId, sum('AVAILABLE'), sum('BLOCKED'), manager);
  }

  /** The seller's balance, locked until the caller's transaction ends (for checks before a debit). */
  lockBalance(manager: EntityManager, sellerId: number): Promise<BalanceAfter> {
    return this.ledger.lockBalance(sellerId, manager);
  }

  /** Every seller whose cached balance differs from the sum of its entries; empty when all agree. */
  verify(): Promise<BalanceMismatch[]> {
    return this.ledger.mismatches();
  }

  countBalances(): Promise<number> {
    return this.ledger.countBalances();
  }
}
