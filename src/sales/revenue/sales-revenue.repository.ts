import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { cents } from '../../domain/money';

/** Revenue of spec 2.9; amounts in cents. */
export interface RevenueCounters {
  totalAmount: number;
  totalCount: number;
  cardAmount: number;
  cardCount: number;
  pixAmount: number;
  pixCount: number;
  boletoAmount: number;
  boletoCount: number;
  chargebackAmount: number;
  chargebackCount: number;
  refundAmount: number;
  refundCount: number;
}

/** The revenue query over the sales table, which the sales module owns. */
@Injectable()
export class SalesRevenueRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Revenue counters (platform.md §7): gross amounts and counts of the sales that are PAGO now, by
   * method; confirmed chargebacks and refunds by their reversal reason. Each sale counts once.
   */
  async revenueOf(sellerId: number): Promise<RevenueCounters> {
    const [row]: Array<Record<keyof RevenueCounters, string>> = await this.dataSource.query(
      `SELECT
         COALESCE(SUM(amount_cents) FILTER (WHERE status = 'PAGO'), 0)                                              AS "totalAmount",
         COUNT(*) FILTER (WHERE status = 'PAGO')                                                                    AS "totalCount",
         COALESCE(SUM(amount_cents) FILTER (WHERE status = 'PAGO' AND payment_method IN ('CREDIT_CARD', 'DEBIT_CARD')), 0) AS "cardAmount",
         COUNT(*) FILTER (WHERE status = 'PAGO' AND payment_method IN ('CREDIT_CARD', 'DEBIT_CARD'))                AS "cardCount",
         COALESCE(SUM(amount_cents) FILTER (WHERE status = 'PAGO' AND payment_method = 'PIX'), 0)                   AS "pixAmount",
         COUNT(*) FILTER (WHERE status = 'PAGO' AND payment_method = 'PIX')                                         AS "pixCount",
         COALESCE(SUM(amount_cents) FILTER (WHERE status = 'PAGO' AND payment_method = 'BOLETO'), 0)                AS "boletoAmount",
         COUNT(*) FILTER (WHERE status = 'PAGO' AND payment_method = 'BOLETO')                                      AS "boletoCount",
         COALESCE(SUM(amount_cents) FILTER (WHERE reversal_reason = 'CHARGEBACK_CONFIRMED'), 0)                      AS "chargebackAmount",
         COUNT(*) FILTER (WHERE reversal_reason = 'CHARGEBACK_CONFIRMED')                                           AS "chargebackCount",
         COALESCE(SUM(amount_cents) FILTER (WHERE reversal_reason = 'REFUNDED'), 0)                                  AS "refundAmount",
         COUNT(*) FILTER (WHERE reversal_reason = 'REFUNDED')                                                       AS "refundCount"
       FROM sales WHERE seller_id = $1`,
      [sellerId],
    );
    return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, cents(Number(value))])) as unknown as RevenueCounters;
  }
}
