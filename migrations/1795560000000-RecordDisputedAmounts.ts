import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Disputes computed from what they covered (issue 35, M2 and L1).
 *
 * - sales.dispute_amount_cents and dispute_net_cents: while a MED or a chargeback is open, the gross it
 *   covers and the seller's net it covers (what a MED's opening moved to blocked), fixed by its opening,
 *   so that its close moves exactly that whatever refunds do meanwhile (domain/sale-move.ts DISPUTE_STEPS).
 *   Set exactly while the sale is MED or CHARGEBACK.
 * - sales.refund_completed_cents: what its completed refunds add up to, so that a dispute closed in the
 *   seller's favour on a sale its refunds already returned in full ends it ESTORNADO, not PAGO.
 *
 * Open disputes are backfilled: a MED's net from the BLOCKED move of its latest MED_OPENED posting (what
 * it really blocked), a chargeback's from what refunds (asked for and not failed) leave of the sale now,
 * the gross from the same, never below the net.
 */
export class RecordDisputedAmounts1795560000000 implements MigrationInterface {
  name = 'RecordDisputedAmounts1795560000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE sales
        ADD COLUMN refund_completed_cents bigint NOT NULL DEFAULT 0,
        ADD COLUMN dispute_amount_cents bigint,
        ADD COLUMN dispute_net_cents bigint`);
    await queryRunner.query(`
      UPDATE sales s SET refund_completed_cents = r.completed
        FROM (SELECT sale_id, sum(amount_cents) AS completed FROM sale_refunds WHERE status = 'COMPLETED' GROUP BY sale_id) r
       WHERE r.sale_id = s.id`);
    await queryRunner.query(`
      WITH open AS (
        SELECT s.id,
               GREATEST(s.amount_cents - s.refunded_cents, 0) AS amount_left,
               CASE WHEN s.refunded_cents >= s.amount_cents THEN 0
                    ELSE COALESCE(s.net_amount_cents, 0) - COALESCE(s.net_amount_cents, 0) * s.refunded_cents / s.amount_cents END AS net_left,
               (SELECT p.blocked_delta_cents FROM ledger_postings p
                 WHERE p.reference_type = 'SALE' AND p.reference_id = s.id AND p.kind = 'MED_OPENED' ORDER BY p.id DESC LIMIT 1) AS med_blocked
          FROM sales s WHERE s.status IN ('MED', 'CHARGEBACK'))
      UPDATE sales s SET dispute_net_cents = COALESCE(open.med_blocked, open.net_left),
                         dispute_amount_cents = GREATEST(open.amount_left, COALESCE(open.med_blocked, open.net_left))
        FROM open WHERE open.id = s.id`);
    await queryRunner.query(`
      ALTER TABLE sales
        ADD CONSTRAINT sales_refund_completed_check CHECK (refund_completed_cents >= 0 AND refund_completed_cents <= amount_cents),
        ADD CONSTRAINT sales_dispute_check CHECK (
          (status IN ('MED', 'CHARGEBACK')) = (dispute_amount_cents IS NOT NULL)
          AND (dispute_amount_cents IS NULL) = (dispute_net_cents IS NULL)
          AND (dispute_net_cents IS NULL OR (dispute_net_cents >= 0 AND dispute_net_cents <= dispute_amount_cents)))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sales DROP CONSTRAINT sales_dispute_check, DROP CONSTRAINT sales_refund_completed_check`);
    await queryRunner.query(`ALTER TABLE sales DROP COLUMN dispute_net_cents, DROP COLUMN dispute_amount_cents, DROP COLUMN refund_completed_cents`);
  }
}
