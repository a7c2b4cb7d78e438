import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AutomaticPixStatus } from '../domain/automatic-pix';


/** A renewal collected by Pix Automático, as the jobs read it. */
export interface AutomaticCharge {
  saleId: number;
  /** The provider that holds the sale (and its subscription's recurrence). */
  provider: string;
  sellerId: number;
  subscriptionId: number;
  dueDate: string;
  sentAt: Date | null;
  retries: number;
  status: string;
  recurrenceId: string | null;
  authorization: AutomaticPixStatus | null;
}

const CHARGE_COLUMNS = `s.id AS "saleId", s.provider, s.seller_id AS "sellerId", s.subscription_id AS "subscriptionId", s.automatic_pix_due_date AS "dueDate",
  s.automatic_pix_sent_at AS "sentAt", s.automatic_pix_retries AS "retries", s.status, sub.automatic_pix_recurrence_id AS "recurrenceId",
  sub.automatic_pix_status AS "authorization"`;

/**
 * The reads of Pix Automático (recurring charges on sales, authorizations on subscriptions). Its writes on
 * sales and subscriptions are their repositories'; its notifications enter through the intake (src/intake).
 */
@Injectable()
export class AutomaticPixRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The seller's sales whose recurring charge is at `provider` and still open. */
  async openChargeIds(sellerId: number, provider: string): Promise<number[]> {
    const rows: Array<{ id: number }> = await this.dataSource.query(
      `SELECT id FROM sales WHERE automatic_pix_due_date IS NOT NULL AND status = 'PENDENTE' AND automatic_pix_sent_at IS NOT NULL AND seller_id = $1 AND provider = $2 ORDER BY id`,
      [sellerId, provider],
    );
    return rows.map((row) => row.id);
  }

  async charges(saleIds: number[]): Promise<AutomaticCharge[]> {
    if (saleIds.length === 0) return [];
    return this.dataSource.query(`SELECT ${CHARGE_COLUMNS} FROM sales s JOIN subscriptions sub ON sub.id = s.subscription_id WHERE s.id = ANY($1::int[]) ORDER BY s.id`, [saleIds]);
  }

  /** Sent recurring charges whose sale was cancelled here (the subscription stopped): still to cancel at the PSP. */
  async chargesToCancel(sellerId: number | null, limit: number, providers: readonly string[]): Promise<AutomaticCharge[]> {
    return this.dataSource.query(
      `SELECT ${CHARGE_COLUMNS} FROM sales s JOIN subscriptions sub ON sub.id = s.subscription_id
        WHERE s.automatic_pix_sent_at IS NOT NULL AND s.status = 'CANCELADO' AND s.pix_charge_closed_at IS NULL AND ($1::int IS NULL OR s.seller_id = $1)
          AND s.provider = ANY($3::varchar[])
        ORDER BY s.id LIMIT $2`,
      [sellerId, limit, providers],
    );
  }

  /** The opening sale of a subscription (period 0). */
  async openingSale(subscriptionId: number, manager: EntityManager): Promise<number | null> {
    const [row]: Array<{ id: number }> = await manager.query(`SELECT id FROM sales WHERE subscription_id = $1 AND billing_period = 0 ORDER BY id LIMIT 1`, [subscriptionId]);
    return row?.id ?? null;
  }

  /** The seller's subscriptions whose authorization is among `recurrenceIds` (the webhook's). */
  async subscriptionsOfRecurrences(recurrenceIds: string[]): Promise<Array<{ id: number; provider: string | null }>> {
    return this.dataSource.query(`SELECT id, provider FROM subscriptions WHERE automatic_pix_recurrence_id = ANY($1::varchar[])`, [recurrenceIds]);
  }
}
