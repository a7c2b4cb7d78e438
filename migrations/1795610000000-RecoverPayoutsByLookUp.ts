import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Payouts recovered by asking the provider (PayoutProvider.findPayout):
 * - sandbox_payouts keeps what the sandbox payout provider did with each payout (on its way, paid,
 *   rejected, cancelled) and why, so that its look-up answers after a restart as a provider's would;
 * - withdrawals count the recovery job's look-ups of their payout and say when the next is due (its
 *   backoff); the job's claim takes every open withdrawal (PENDING or PROCESSING) with no news for a
 *   while, by `updated_at`, instead of the PENDING ones never recorded as sent only.
 */
export class RecoverPayoutsByLookUp1795610000000 implements MigrationInterface {
  name = 'RecoverPayoutsByLookUp1795610000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sandbox_payouts DROP CONSTRAINT sandbox_payouts_status_check`);
    await queryRunner.query(`
      ALTER TABLE sandbox_payouts
        ADD CONSTRAINT sandbox_payouts_status_check CHECK (status IN ('ACCEPTED', 'PROCESSING', 'COMPLETED', 'REJECTED', 'CANCELLED')),
        ADD COLUMN reason varchar(200)`);
    await queryRunner.query(`
      ALTER TABLE withdrawals
        ADD COLUMN payout_checks integer NOT NULL DEFAULT 0 CONSTRAINT withdrawals_payout_checks_check CHECK (payout_checks >= 0),
        ADD COLUMN payout_check_at timestamptz`);
    await queryRunner.query(`DROP INDEX withdrawals_payout_unsent_idx`);
    await queryRunner.query(`CREATE INDEX withdrawals_payout_open_idx ON withdrawals (updated_at) WHERE status IN ('PENDING', 'PROCESSING')`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX withdrawals_payout_open_idx`);
    await queryRunner.query(`CREATE INDEX withdrawals_payout_unsent_idx ON withdrawals (created_at) WHERE status = 'PENDING' AND external_id IS NULL`);
    await queryRunner.query(`ALTER TABLE withdrawals DROP COLUMN payout_check_at, DROP COLUMN payout_checks`);
    // The earlier record knew a payout taken (paid or not) or cancelled only.
    await queryRunner.query(`UPDATE sandbox_payouts SET status = 'ACCEPTED' WHERE status IN ('PROCESSING', 'COMPLETED')`);
    await queryRunner.query(`UPDATE sandbox_payouts SET status = 'CANCELLED' WHERE status = 'REJECTED'`);
    await queryRunner.query(`ALTER TABLE sandbox_payouts DROP CONSTRAINT sandbox_payouts_status_check, DROP COLUMN reason`);
    await queryRunner.query(`ALTER TABLE sandbox_payouts ADD CONSTRAINT sandbox_payouts_status_check CHECK (status IN ('ACCEPTED', 'CANCELLED'))`);
  }
}
