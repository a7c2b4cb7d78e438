import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
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
      await manager.query(`INSERT INTO balances (seller_id) VALUES ($1) ON CONFLICT (seller_id) DO NOTHING`, [sellerId]);
      [row] = await lock();
    }
    return { availableCents: cents(Number(row.available_cents)), blockedCents: cents(Number(row.blocked_cents)) };
  }

  /** The seller's balances row, or null when it has none yet (one SELECT, no write). */
  async findBalance(sellerId: number, manager: EntityManager = this.dataSource.manager): Promise<BalanceWithDate | null> {
    const [row]: Array<{ available_cents: string; blocked_cents: string; updated_at: Date }> = await manager.query(
      `SELECT available_cents, blocked_cents, updated_at FROM balances WHERE seller_id = $1`,
      [sellerId],
    );
    return row ? { availableCents: cents(Number(row.available_cents)), blockedCents: cents(Number(row.blocked_cents)), updatedAt: row.updated_at } : null;
  }

  /** Creates the seller's zero balance if it is missing. */
  async createBalance(sellerId: number, manager: EntityManager): Promise<void> {
    await manager.query(`INSERT INTO balances (seller_id) VALUES ($1) ON CONFLICT (seller_id) DO NOTHING`, [sellerId]);
  }

  async append(entries: Array<Partial<LedgerEntryEntity>>, manager: EntityManager): Promise<void> {
    await manager.getRepository(LedgerEntryEntity).insert(entries);
  }

  /** Moves the cached balance by the given amounts (the CHECK keeps blocked from going negative). */
  async addToBalance(sellerId: number, availableCents: number, blockedCents: number, manager: EntityManager): Promise<BalanceRow> {
    const [rows]: [Array<{ available_cents: string; blocked_cents: string }>] = await manager.query(
      `UPDATE balances SET available_cents = available_cents + $2, blocked_cents = blocked_cents + $3, updated_at = now()
        WHERE seller_id = $1 RETURNING available_cents, blocked_cents`,
      [sellerId, availableCents, blockedCents],
    );
    return { availableCents: cents(Number(rows[0].available_cents)), blockedCents: cents(Number(rows[0].blocked_cents)) };
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
