import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { poolQuery } from '../database/plain-rows';
import { Cents, cents } from '../domain/money';
import { LedgerEntryEntity } from './entities/ledger-entry.entity';

export interface BalanceRow {
  availableCents: Cents;
  blockedCents: Cents;
}

export interface BalanceWithDate extends BalanceRow {
  updatedAt: Date;
}

export interface BalanceMismatch {
  sellerId: number;
  availableCents: number;
  blockedCents: number;
  ledgerAvailableCents: number;
  ledgerBlockedCents: number;
}

@Injectable()
export class LedgerRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The seller's balances row, created at zero if missing, locked until the transaction ends. */
  async lockBalance(sellerId: number, manager: EntityManager): Promise<BalanceRow> {
    const lock = () =>
      manager.query(`SELECT available_cents, blocked_cents FROM balances WHERE seller_id = $1 FOR UPDATE`, [sellerId]) as Promise<
        Array<{ available_cents: string; blocked_cents: string }>
      >;
    // One round trip when the row exists (every seller opens it when created); created first otherwise.
    let [row] = await lock();
    if (!row) {
      await this.createBalance(sellerId, manager);
      [row] = await lock();
    }
    return { availableCents: cents(Number(row.available_cents)), blockedCents: cents(Number(row.blocked_cents)) };
  }

  /** The seller's balances row, or null when it has none yet (one SELECT, no write). */
  async findBalance(sellerId: number, manager?: EntityManager): Promise<BalanceWithDate | null> {
    const sql = `SELECT available_cents, blocked_cents, updated_at FROM balances WHERE seller_id = $1`;
    type Row = { available_cents: string; blocked_cents: string; updated_at: Date };
    // Outside a transaction (GET /api/public/balance), straight through the pool.
    const [row] = manager ? ((await manager.query(sql, [sellerId])) as Row[]) : await poolQuery<Row>(this.dataSource, sql, [sellerId]);
    return row ? { availableCents: cents(Number(row.available_cents)), blockedCents: cents(Number(row.blocked_cents)), updatedAt: row.updated_at } : null;
  }

  /** Creates the seller's zero balance if it is missing. */
  async createBalance(sellerId: number, manager: EntityManager): Promise<void> {
    await manager.query(`INSERT INTO balances (seller_id) VALUES ($1) ON CONFLICT (seller_id) DO NOTHING`, [sellerId]);
  }

  /**
   * Moves the cached balance by the given amounts (the CHECK keeps blocked from going negative), locking
   * its row until the transaction ends; the row is created first if the seller has none yet.
   */
  async addToBalance(sellerId: number, availableCents: number, blockedCents: number, manager: EntityManager): Promise<BalanceRow> {
    const add = async () => {
      const [rows]: [Array<{ available_cents: string; blocked_cents: string }>] = await manager.query(
        `UPDATE balances SET available_cents = available_cents + $2, blocked_cents = blocked_cents + $3, updated_at = now()
          WHERE seller_id = $1 RETURNING available_cents, blocked_cents`,
        [sellerId, availableCents, blockedCents],
      );
      return rows[0];
    };
    let row = await add();
    if (!row) {
      await this.createBalance(sellerId, manager);
      row = await add();
    }
    return { availableCents: cents(Number(row.available_cents)), blockedCents: cents(Number(row.blocked_cents)) };
  }

  /**
   * The balances rows of these sellers, created at zero where missing, locked until the transaction
   * ends, in seller order (so that two batches never wait on each other's rows in a cycle).
   */
  async lockBalances(sellerIds: number[], manager: EntityManager): Promise<void> {
    if (sellerIds.length === 0) return;
    const sorted = [...new Set(sellerIds)].sort((a, b) => a - b);
    const lock = async () =>
      ((await manager.query(`SELECT seller_id FROM balances WHERE seller_id = ANY($1::int[]) ORDER BY seller_id FOR UPDATE`, [sorted])) as unknown[]).length;
    if ((await lock()) === sorted.length) return;
    await manager.query(`INSERT INTO balances (seller_id) SELECT unnest($1::int[]) ORDER BY 1 ON CONFLICT (seller_id) DO NOTHING`, [sorted]);
    await lock();
  }

  /** Appends many entries in one statement, in the order given. */
  async appendMany(entries: Array<Pick<LedgerEntryEntity, 'sellerId' | 'account' | 'amountCents' | 'kind' | 'referenceType' | 'referenceId'>>, manager: EntityManager): Promise<void> {
    if (entries.length === 0) return;
    await manager.query(
      `INSERT INTO ledger_entries (seller_id, account, amount_cents, kind, reference_type, reference_id)
       SELECT * FROM unnest($1::int[], $2::varchar[], $3::bigint[], $4::varchar[], $5::varchar[], $6::bigint[])`,
      [
        entries.map((e) => e.sellerId),
        entries.map((e) => e.account),
        entries.map((e) => e.amountCents),
        entries.map((e) => e.kind),
        entries.map((e) => e.referenceType),
        entries.map((e) => e.referenceId),
      ],
    );
  }

  /** Moves the cached balances of many sellers by their amounts, in one statement (rows locked by lockBalances first). */
  async addToBalances(moves: Array<{ sellerId: number; availableCents: number; blockedCents: number }>, manager: EntityManager): Promise<void> {
    if (moves.length === 0) return;
    await manager.query(
      `UPDATE balances b SET available_cents = b.available_cents + v.available, blocked_cents = b.blocked_cents + v.blocked, updated_at = now()
         FROM unnest($1::int[], $2::bigint[], $3::bigint[]) AS v(seller_id, available, blocked)
        WHERE b.seller_id = v.seller_id`,
      [moves.map((m) => m.sellerId), moves.map((m) => m.availableCents), moves.map((m) => m.blockedCents)],
    );
  }

  /** Sellers whose cached balance differs from the sum of their entries. */
  mismatches(): Promise<BalanceMismatch[]> {
    return this.dataSource
      .query(
        `SELECT b.seller_id, b.available_cents, b.blocked_cents,
                COALESCE(SUM(e.amount_cents) FILTER (WHERE e.account = 'AVAILABLE'), 0) AS ledger_available,
                COALESCE(SUM(e.amount_cents) FILTER (WHERE e.account = 'BLOCKED'), 0) AS ledger_blocked
           FROM balances b LEFT JOIN ledger_entries e ON e.seller_id = b.seller_id
          GROUP BY b.seller_id, b.available_cents, b.blocked_cents
         HAVING b.available_cents <> COALESCE(SUM(e.amount_cents) FILTER (WHERE e.account = 'AVAILABLE'), 0)
             OR b.blocked_cents <> COALESCE(SUM(e.amount_cents) FILTER (WHERE e.account = 'BLOCKED'), 0)
         UNION ALL
         SELECT e.seller_id, 0, 0,
                COALESCE(SUM(e.amount_cents) FILTER (WHERE e.account = 'AVAILABLE'), 0),
                COALESCE(SUM(e.amount_cents) FILTER (WHERE e.account = 'BLOCKED'), 0)
           FROM ledger_entries e WHERE NOT EXISTS (SELECT 1 FROM balances b WHERE b.seller_id = e.seller_id)
          GROUP BY e.seller_id
         ORDER BY 1`,
      )
      .then((rows: Array<Record<string, string | number>>) =>
        rows.map((row) => ({
          sellerId: Number(row.seller_id),
          availableCents: Number(row.available_cents),
          blockedCents: Number(row.blocked_cents),
          ledgerAvailableCents: Number(row.ledger_available),
          ledgerBlockedCents: Number(row.ledger_blocked),
        })),
      );
  }

  async countBalances(): Promise<number> {
    const [row]: Array<{ count: string }> = await this.dataSource.query(`SELECT count(*) AS count FROM balances`);
    return Number(row.count);
  }
}
