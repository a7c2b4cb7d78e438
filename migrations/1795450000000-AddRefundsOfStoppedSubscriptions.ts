import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A card charge the acquirer approves after its subscription was cancelled or paused is given back
 * (issue 19): the transaction that applies the approval marks the sale `refund_due_at`; the refund is
 * asked of the acquirer outside it and the sale then moves PAGO → ESTORNADO. The partial index is what
 * the recovery job reads to finish refunds a crash left between the two. The subscription counts these
 * charges in refunded_billings; the sandbox acquirer records its refunds in refunded_at.
 */
export class AddRefundsOfStoppedSubscriptions1795450000000 implements MigrationInterface {
  name = 'AddRefundsOfStoppedSubscriptions1795450000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sales ADD COLUMN refund_due_at timestamptz`);
    await queryRunner.query(`CREATE INDEX sales_refund_due_idx ON sales (refund_due_at) WHERE refund_due_at IS NOT NULL AND status = 'PAGO'`);
    await queryRunner.query(`ALTER TABLE subscriptions ADD COLUMN refunded_billings integer NOT NULL DEFAULT 0`);
    await queryRunner.query(`ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_counters_check`);
    await queryRunner.query(`
      ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_counters_check CHECK (
        successful_billings >= 0 AND failed_billings >= 0 AND refunded_billings >= 0
        AND successful_billings + failed_billings + refunded_billings <= total_billings)`);
    await queryRunner.query(`ALTER TABLE sandbox_card_charges ADD COLUMN refunded_at timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sandbox_card_charges DROP COLUMN refunded_at`);
    await queryRunner.query(`ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_counters_check`);
    await queryRunner.query(`
      ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_counters_check CHECK (
        successful_billings >= 0 AND failed_billings >= 0 AND successful_billings + failed_billings <= total_billings)`);
    await queryRunner.query(`ALTER TABLE subscriptions DROP COLUMN refunded_billings`);
    await queryRunner.query(`DROP INDEX sales_refund_due_idx`);
    await queryRunner.query(`ALTER TABLE sales DROP COLUMN refund_due_at`);
  }
}
