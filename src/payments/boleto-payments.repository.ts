import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Cents, cents } from '../domain/money';

/** A boleto paid after its sale was cancelled (or of another amount than the sale's): owed back to its payer. */
export interface LateBoletoPayment {
  id: number;
  saleId: number;
  sellerId: number;
  provider: string;
  paymentId: string;
  amountCents: Cents;
  seenBy: 'NOTIFICATION' | 'POLL';
  returnedAt: Date | null;
  returnNote: string | null;
  createdAt: Date;
}

const COLUMNS = `id::int AS id, sale_id AS "saleId", seller_id AS "sellerId", provider, payment_id AS "paymentId", amount_cents AS "amountCents",
  seen_by AS "seenBy", returned_at AS "returnedAt", return_note AS "returnNote", created_at AS "createdAt"`;

const hydrate = (row: Record<string, unknown>): LateBoletoPayment => ({ ...(row as unknown as LateBoletoPayment), amountCents: cents(Number(row.amountCents)) });

@Injectable()
export class BoletoPaymentsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Books a late payment once per sale: its id, or null when one was booked already. */
  async insertLate(row: Omit<LateBoletoPayment, 'id' | 'returnedAt' | 'returnNote' | 'createdAt'>, manager: EntityManager): Promise<number | null> {
    const rows: Array<{ id: string }> = await manager.query(
      `INSERT INTO late_boleto_payments (sale_id, seller_id, provider, payment_id, amount_cents, seen_by) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (sale_id) DO NOTHING RETURNING id`,
      [row.saleId, row.sellerId, row.provider, row.paymentId, row.amountCents, row.seenBy],
    );
    return rows.length > 0 ? Number(rows[0].id) : null;
  }

  /** The late payments, oldest first: those still owed (returned false), those returned (true), or all. */
  async listLate(returned: boolean | null, limit: number): Promise<LateBoletoPayment[]> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM late_boleto_payments WHERE $1::boolean IS NULL OR (returned_at IS NOT NULL) = $1 ORDER BY id LIMIT $2`,
      [returned, limit],
    );
    return rows.map(hydrate);
  }

  async findLateForUpdate(id: number, manager: EntityManager): Promise<LateBoletoPayment | null> {
    const rows: Array<Record<string, unknown>> = await manager.query(`SELECT ${COLUMNS} FROM late_boleto_payments WHERE id = $1 FOR UPDATE`, [id]);
    return rows.length > 0 ? hydrate(rows[0]) : null;
  }

  async markReturned(id: number, note: string, manager: EntityManager): Promise<LateBoletoPayment> {
    // An UPDATE … RETURNING through TypeORM answers [rows, count].
    const [rows] = (await manager.query(`UPDATE late_boleto_payments SET returned_at = now(), return_note = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [id, note])) as [
      Array<Record<string, unknown>>,
      number,
    ];
    return hydrate(rows[0]);
  }
}
