import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 38: a withdrawal keeps why its payout failed, in the provider's own words (Efí's `nome` and
 * `mensagem`, or the SPI's reason code of a NAO_REALIZADO), and what its provider reported sending
 * (the send's `valor` as the look-up answered it): the evidence ledger:verify compares with what the
 * ledger took out of the provider's holdings. A notification's id in provider_inbox may carry the
 * provider's own words about it (`note`: Efí's reason for a send NAO_REALIZADO, which its look-up does not
 * repeat): text kept with the failure once a look-up has confirmed it, never what moves anything.
 */
export class KeepPayoutEvidence1795630000000 implements MigrationInterface {
  name = 'KeepPayoutEvidence1795630000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE withdrawals ADD COLUMN failure_reason varchar(500), ADD COLUMN provider_amount_cents bigint`);
    await queryRunner.query(`ALTER TABLE withdrawals ADD CONSTRAINT withdrawals_provider_amount_check CHECK (provider_amount_cents IS NULL OR provider_amount_cents >= 0)`);
    await queryRunner.query(`ALTER TABLE provider_inbox ADD COLUMN note varchar(500)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE provider_inbox DROP COLUMN note`);
    await queryRunner.query(`ALTER TABLE withdrawals DROP COLUMN provider_amount_cents, DROP COLUMN failure_reason`);
  }
}
