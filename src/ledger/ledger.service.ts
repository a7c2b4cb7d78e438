import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { assertBalanced, isProviderAccount, LedgerAccount, LedgerEffect, LedgerReferenceType } from '../domain/ledger';
import { CteStatement } from '../database/cte-statement';
import { LedgerSummaryResponse } from './dto/ledger-summary.dto';
import { addCents, Cents, cents } from '../domain/money';
import { BalanceMismatch, BalanceRow, DoubleEntryReport, LedgerRepository, NewPosting, StatementRange, StatementRow } from './ledger.repository';

export type { StatementCursor, StatementRow } from './ledger.repository';

export interface LedgerPosting {
  /** The seller whose balance it moves; null for the platform's own postings (a Pix that belongs to no sale). */
  sellerId: number | null;
  referenceType: LedgerReferenceType;
  referenceId: number;
  effect: LedgerEffect;
  /** The provider its provider accounts are with: the provider of the record it books (a sale's, a withdrawal's, a Pix's). */
  provider: string;
}

/** Postings added to a one-statement unit of work (LedgerService.add). */
export interface PostingsInStatement {
  /** No posting moves money: nothing to write. */
  empty: boolean;
  /** SQL condition: every seller of the postings has its balances row. */
  ready: string;
  /** The sellers whose balances the postings move. */
  sellers: number[];
  /** Adds the postings, written only while `gate` (and `ready`) hold. */
  write: (gate: string) => void;
}

export type BalanceAfter = Omit<BalanceRow, 'updatedAt'>;

export interface BalanceView {
  availableCents: Cents;
  blockedCents: Cents;
  totalCents: Cents;
  updatedAt: Date;
}

/** The seller's moves in a posting: the sums of its AVAILABLE and BLOCKED movements. */
function sellerDeltas(effect: LedgerEffect): { available: number; blocked: number } {
  let available = 0;
  let blocked = 0;
  for (const m of effect.movements) {
    if (m.account === 'AVAILABLE') available += m.amountCents;
    else if (m.account === 'BLOCKED') blocked += m.amountCents;
  }
  return { available, blocked };
}

/**
 * The owner of the ledger and of the balances table. Double entry (domain/ledger.ts): every posting is
 * a row of ledger_postings with its entries, which sum to zero (domain check, then a trigger), on the
 * seller's, the platform's and the providers' accounts; the seller's cached balances row moves by the
 * posting's seller movements in the same transaction, under its row lock, and the posting records the
 * balance after it (the seller's statement).
 */
@Injectable()
export class LedgerService {
  constructor(private readonly ledger: LedgerRepository) {}

  /**
   * The one way postings are written: added to `statement`, a unit of work of one SQL statement
   * (src/database/cte-statement.ts), each checked to sum to zero, with their entries, each seller's
   * balances row moved once by the sum of its postings (the UPDATE takes the row lock, held until the
   * commit) and the balance after each posting recorded (the seller's statement). Answers `ready`, the
   * condition that every seller of the postings has its balances row (a missing row cannot be created in
   * the statement that moves it: the unit's other writes are gated on it, and its runner opens the rows
   * and runs it again, see `openBalances`), and `write(gate)`, which adds the postings, written only
   * while `gate` holds. Several sellers' rows must be locked first, in seller order, so that two units
   * never wait on each other in a cycle: in a transaction (`openBalances` did it) `ready` holds for them;
   * a unit without a transaction posting for several sellers is never ready, and its caller writes it in
   * one. A debit that must not overdraw reads `lockedAvailable` in the same statement (withdrawals).
   */
  add(statement: CteStatement, postings: LedgerPosting[], sellersLocked = false): PostingsInStatement {
    const rows = postings.filter((posting) => assertBalanced(posting.effect).movements.some((m) => m.amountCents !== 0)).map((posting) => this.newPosting(posting));
    const sellers = [...new Set(rows.flatMap((row) => (row.sellerId === null ? [] : [row.sellerId])))];
    if (rows.length === 0) return { empty: true, ready: 'true', sellers, write: () => undefined };
    const present = this.ledger.balancesPresent(statement, rows);
    const ready = sellers.length > 1 && !sellersLocked ? 'false' : present;
    return { empty: false, ready, sellers, write: (gate) => this.ledger.addPostings(statement, rows, `${ready} AND ${gate}`) };
  }

  /**
   * Before a transaction's unit of work posts for these sellers: with several, their balances rows
   * locked in seller order (created at zero where missing); with one, its row created if `missing` (the
   * unit found it so and is run again).
   */
  async openBalances(manager: EntityManager, sellers: number[], missing = false): Promise<void> {
    if (sellers.length > 1) await this.ledger.lockBalances(sellers, manager);
    else if (missing && sellers.length === 1) await this.ledger.createBalances(sellers, manager);
  }

  /** Postings alone as a unit of work in the caller's transaction (`add`, run at once). */
  async post(manager: EntityManager, postings: LedgerPosting[]): Promise<void> {
    const statement = new CteStatement();
    const posting = this.add(statement, postings, true);
    if (posting.empty) return;
    await this.openBalances(manager, posting.sellers);
    posting.write('true');
    const run = async () => (await statement.run<{ ready: boolean }>(manager, `SELECT ${posting.ready} AS ready`))[0].ready;
    if (await run()) return;
    await this.openBalances(manager, posting.sellers, true);
    if (!(await run())) throw new Error('A seller of these postings has no balances row');
  }

  private newPosting(posting: LedgerPosting): NewPosting {
    const deltas = sellerDeltas(posting.effect);
    if (posting.sellerId === null && (deltas.available !== 0 || deltas.blocked !== 0)) throw new Error(`A ${posting.effect.kind} posting without a seller moves a seller's account`);
    return {
      sellerId: posting.sellerId,
      kind: posting.effect.kind,
      referenceType: posting.referenceType,
      referenceId: posting.referenceId,
      availableDeltaCents: deltas.available,
      blockedDeltaCents: deltas.blocked,
      entries: posting.effect.movements
        .filter((m) => m.amountCents !== 0)
        .map((m) => ({ account: m.account, provider: isProviderAccount(m.account) ? posting.provider : null, amountCents: m.amountCents })),
    };
  }

  /**
   * In `statement`: the seller's available balance under its row's lock, as a SQL expression (NULL when
   * the seller has no balances row), for a write that must not overdraw it (LedgerRepository.addLockedBalance).
   */
  lockedAvailable(statement: CteStatement, sellerId: number): string {
    return `(SELECT available_cents FROM ${this.ledger.addLockedBalance(statement, sellerId)})`;
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

  /** A page of the seller's statement (its postings that moved its balance, newest first). */
  statementPage(sellerId: number, range: StatementRange): Promise<StatementRow[]> {
    return this.ledger.statementPage(sellerId, range);
  }

  /**
   * The platform's figures for [from, before): revenue and costs as the platform reads them (positive),
   * what each provider came to owe or hold (positive), the sellers' money, and the sum of it all (zero).
   */
  async summary(from: Date, before: Date): Promise<LedgerSummaryResponse> {
    const sums = await this.ledger.accountSums(from, before);
    const total = (account: LedgerAccount, provider?: string) =>
      sums.filter((row) => row.account === account && (provider === undefined || row.provider === provider)).reduce((sum, row) => sum + row.sumCents, 0);
    const providers = [...new Set(sums.filter((row) => row.provider !== null).map((row) => row.provider as string))].sort();
    return {
      from: from.toISOString(),
      to: before.toISOString(),
      feeRevenue: total('FEE_REVENUE'),
      fineRevenue: total('FINE_REVENUE'),
      reversalCost: 0 - total('REVERSAL_COST'),
      providers: providers.map((provider) => ({
        provider,
        acquirerReceivable: 0 - total('ACQUIRER_RECEIVABLE', provider),
        pspHoldings: 0 - total('PSP_HOLDINGS', provider),
        payoutInTransit: 0 - total('PAYOUT_IN_TRANSIT', provider),
      })),
      sellers: { available: total('AVAILABLE'), blocked: total('BLOCKED') },
      balance: sums.reduce((sum, row) => sum + row.sumCents, 0),
    };
  }

  /** The double-entry invariants, as figures (ledger:verify). */
  doubleEntryReport(): Promise<DoubleEntryReport> {
    return this.ledger.doubleEntryReport();
  }

  countBalances(): Promise<number> {
    return this.ledger.countBalances();
  }
}
