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
 * Open disputes are backfilled from the refunds not failed when they opened (by their opening posting's
 * time; the current refunds when no posting was written, a fine of zero): the gross they cover, and the
 * net (a MED's from the BLOCKED move of its MED_OPENED posting, what it really blocked).
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
    // Open disputes: the refunds not failed when the dispute opened (asked before its opening posting, and
    // not failed, or failed after it) fix what it covers; a MED's net is what its posting really blocked.
    await queryRunner.query(`
      WITH open AS (
        SELECT s.id, s.amount_cents, COALESCE(s.net_amount_cents, 0) AS net, s.refunded_cents, p.created_at AS opened_at, p.blocked_delta_cents, s.status
          FROM sales s
          LEFT JOIN LATERAL (
            SELECT created_at, blocked_delta_cents FROM ledger_postings
             WHERE reference_type = 'SALE' AND reference_id = s.id AND kind = CASE s.status WHEN 'MED' THEN 'MED_OPENED' ELSE 'CHARGEBACK_OPENED' END
             ORDER BY id DESC LIMIT 1) p ON true
         WHERE s.status IN ('MED', 'CHARGEBACK')),
      covered AS (
        SELECT open.*, LEAST(open.amount_cents, CASE WHEN open.opened_at IS NULL THEN open.refunded_cents ELSE COALESCE(
                 (SELECT sum(r.amount_cents) FROM sale_refunds r
                   WHERE r.sale_id = open.id AND r.created_at < open.opened_at
                     AND (r.status <> 'FAILED' OR r.completed_at > open.opened_at)), 0) END) AS refunded_then
          FROM open),
      amounts AS (
        SELECT id, amount_cents - refunded_then AS amount_left,
               CASE WHEN status = 'MED' AND blocked_delta_cents IS NOT NULL THEN blocked_delta_cents
                    ELSE net - net * refunded_then / amount_cents END AS net_left
          FROM covered)
      UPDATE sales s SET dispute_amount_cents = GREATEST(amounts.amount_left, amounts.net_left), dispute_net_cents = amounts.net_left
        FROM amounts WHERE amounts.id = s.id`);
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
