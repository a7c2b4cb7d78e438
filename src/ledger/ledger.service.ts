import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { LedgerAccount, LedgerEffect, LedgerReferenceType } from '../domain/ledger';
import { addCents, Cents, cents } from '../domain/money';
import { BalanceMismatch, BalanceRow, LedgerRepository } from './ledger.repository';

export interface LedgerPosting {
  sellerId: number;
  referenceType: LedgerReferenceType;
  referenceId: number;
  effect: LedgerEffect;
}

export type BalanceAfter = Omit<BalanceRow, 'updatedAt'>;

export interface BalanceView {
  availableCents: Cents;
  blockedCents: Cents;
  totalCents: Cents;
  updatedAt: Date;
}

/**
 * The owner of the ledger and of the balances table: every movement is an append-only entry, and the
 * cached balances row moves by the same amounts in the same transaction, under a row lock.
 */
@Injectable()
export class LedgerService {
  constructor(private readonly ledger: LedgerRepository) {}

  /** Inside the caller's transaction: locks the seller's balance, appends the entries, moves the balance. */
  async post(manager: EntityManager, posting: LedgerPosting): Promise<BalanceAfter> {
    const current = await this.ledger.lockBalance(posting.sellerId, manager);
    const movements = posting.effect.movements.filter((movement) => movement.amountCents !== 0);
    if (movements.length === 0) return current;
    await this.ledger.append(
      movements.map((movement) => ({
        sellerId: posting.sellerId,
        account: movement.account,
        amountCents: movement.amountCents,
        kind: posting.effect.kind,
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

  /**
   * The seller's balance (spec 2.8): one SELECT, never a write. A seller without a balances row (none is
   * missing since sellers open theirs when created) has a zero balance; the row appears with its first entry.
   */
  async balanceOf(sellerId: number, manager?: EntityManager): Promise<BalanceView> {
    const row = (await this.ledger.findBalance(sellerId, manager)) ?? { availableCents: cents(0), blockedCents: cents(0), updatedAt: new Date(0) };
    return { ...row, totalCents: addCents(row.availableCents, row.blockedCents) };
  }

  /** Creates the zero balance of a new seller inside the seller's creation transaction. */
  async openBalance(sellerId: number, manager: EntityManager): Promise<void> {
    await this.ledger.createBalance(sellerId, manager);
  }

  /** Every seller whose cached balance differs from the sum of its entries; empty when all agree. */
  verify(): Promise<BalanceMismatch[]> {
    return this.ledger.mismatches();
  }

  countBalances(): Promise<number> {
    return this.ledger.countBalances();
  }
}
