import { MigrationInterface, QueryRunner } from 'typeorm';

/** Cashouts to a PIX key (spec 2.10, 3.3). Amounts in cents; fees fixed at request time. */
export class CreateWithdrawals1795360000004 implements MigrationInterface {
  name = 'CreateWithdrawals1795360000004';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE withdrawals (
        id                  serial PRIMARY KEY,
        seller_id           integer NOT NULL CONSTRAINT withdrawals_seller_fk REFERENCES sellers (id),
        status              varchar(12) NOT NULL,
        amount_cents        bigint NOT NULL,
        fee_fixed_cents     bigint NOT NULL,
        fee_variable_cents  bigint NOT NULL,
        fee_total_cents     bigint NOT NULL,
        net_amount_cents    bigint NOT NULL,
        pix_key             varchar(77) NOT NULL,
        pix_key_type        varchar(6) NOT NULL,
        external_id         varchar(64),
        processed_at        timestamptz,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT withdrawals_status_check CHECK (status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED')),
        CONSTRAINT withdrawals_pix_key_type_check CHECK (pix_key_type IN ('CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM')),
        CONSTRAINT withdrawals_amount_limits_check CHECK (amount_cents BETWEEN 10000 AND 10000000),
        CONSTRAINT withdrawals_fees_add_up_check CHECK (
          fee_fixed_cents >= 0 AND fee_variable_cents >= 0 AND fee_total_cents = fee_fixed_cents + fee_variable_cents
          AND net_amount_cents >= 0 AND net_amount_cents + fee_total_cents = amount_cents)
      )`);
    await queryRunner.query(`CREATE INDEX withdrawals_seller_idx ON withdrawals (seller_id, id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE withdrawals`);
  }
}
