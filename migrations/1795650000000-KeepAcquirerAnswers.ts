import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 39: a card sale keeps its acquirer's own answer (Cielo's ReturnCode and ReturnMessage: why a card
 * was refused, shown in the sale's lookup as `acquirerReturn`) and what the acquirer reported captured for
 * its payment (Cielo's CapturedAmount, read from the sale's answer or its look-up): the evidence
 * ledger:verify compares with the amount the ledger booked as paid.
 */
export class KeepAcquirerAnswers1795650000000 implements MigrationInterface {
  name = 'KeepAcquirerAnswers1795650000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sales ADD COLUMN acquirer_return_code varchar(32), ADD COLUMN acquirer_return_message varchar(512), ADD COLUMN provider_amount_cents bigint`);
    await queryRunner.query(`ALTER TABLE sales ADD CONSTRAINT sales_provider_amount_check CHECK (provider_amount_cents IS NULL OR provider_amount_cents >= 0)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sales DROP COLUMN provider_amount_cents, DROP COLUMN acquirer_return_message, DROP COLUMN acquirer_return_code`);
  }
}
