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

/** The ledger entries of a posting: one per non-zero movement. */
function entriesOf(posting: LedgerPosting) {
  return posting.effect.movements
    .filter((movement) => movement.amountCents !== 0)
    .map((movement) => ({
      sellerId: posting.sellerId,
      account: movement.account,
      amountCents: movement.amountCents,
      kind: posting.effect.kind,
      referenceType: posting.referenceType,
      referenceId: String(posting.referenceId),
    }));
}

/**
 * The owner of the ledger and of the balances table: every movement is an append-only entry, and the
 * cached balances row moves by the same amounts in the same transaction, under a row lock.
 */
@Injectable()
export class LedgerService {
  constructor(private readonly ledger: LedgerRepository) {}

  /**
   * Inside the caller's transaction: appends the entries, then moves the balance by the same amounts.
   * The balance row is locked by that UPDATE, not before the entries are written, so a seller's
   * concurrent sales wait on each other only for what their callers do after it (a sale move then
   * writes its subscription, postback and idempotency rows) rather than for the whole posting.
   * A debit that must not overdraw is checked by its caller under `lockBalance` first (withdrawals).
   */
  async post(manager: EntityManager, posting: LedgerPosting): Promise<BalanceAfter> {
    const entries = entriesOf(posting);
    if (entries.length === 0) return this.ledger.lockBalance(posting.sellerId, manager);
    await this.ledger.appendMany(entries, manager);
    const sum = (account: LedgerAccount) => entries.filter((e) => e.account === account).reduce((total, e) => total + e.amountCents, 0);
    return this.ledger.addToBalance(posting.sellerId, sum('AVAILABLE'), sum('BLOCKED'), manager);
  }

  /**
   * Many postings at once (a billing batch), inside the caller's transaction, with the same result as
   * `post` for each in turn: the sellers' balances locked (in seller order, created at zero if missing),
   * every non-zero movement appended as an entry, and each seller's balance moved once by its sums.
   */
  async postMany(manager: EntityManager, postings: LedgerPosting[]): Promise<void> {
    if (postings.length === 0) return;
    await this.ledger.lockBalances(
      postings.map((posting) => posting.sellerId),
      manager,
    );
    const entries = postings.flatMap(entriesOf);
    await this.ledger.appendMany(entries, manager);
    const sums = new Map<number, { sellerId: number; availableCents: number; blockedCents: number }>();
    for (const entry of entries) {
      const sum = sums.get(entry.sellerId) ?? { sellerId: entry.sellerId, availableCents: 0, blockedCents: 0 };
      if (entry.account === 'AVAILABLE') sum.availableCents += entry.amountCents;
      else sum.blockedCents += entry.amountCents;
      sums.set(entry.sellerId, sum);
    }
    await this.ledger.addToBalances([...sums.values()], manager);
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
