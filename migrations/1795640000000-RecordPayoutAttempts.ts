import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 38's review: a withdrawal records each attempt to send its payout before the call (how many, and
 * when the last one started) and the provider's own id of the payout, fixed at the first attempt
 * (Efí's idEnvio): every later attempt and every look-up uses that id, whatever the configuration says
 * afterwards (a changed EFI_SEND_ID_PREFIX can no longer send a withdrawal twice). A new attempt is made
 * only once the last one is old enough for whatever it did at the provider to show in a look-up, so a
 * refusal is never mistaken for the fate of an earlier attempt still on its way.
 */
export class RecordPayoutAttempts1795640000000 implements MigrationInterface {
  name = 'RecordPayoutAttempts1795640000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE withdrawals ADD COLUMN payout_attempts integer NOT NULL DEFAULT 0, ADD COLUMN last_payout_attempt_at timestamptz, ADD COLUMN provider_reference varchar(64)`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX withdrawals_provider_reference_key ON withdrawals (provider, provider_reference) WHERE provider_reference IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX withdrawals_provider_reference_key`);
    await queryRunner.query(`ALTER TABLE withdrawals DROP COLUMN provider_reference, DROP COLUMN last_payout_attempt_at, DROP COLUMN payout_attempts`);
  }
}
