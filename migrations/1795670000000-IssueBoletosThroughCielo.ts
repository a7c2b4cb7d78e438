import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 40's registered boletos through Cielo: a boleto keeps its due date apart from when it is cancelled
 * unpaid (its due date plus the banks' clearing days), the bar code and page its issuer gave, and when its
 * issuer was last asked about it (`provider_checked_at`, the poll's lease). A boleto paid after it was
 * cancelled here is one row of `late_boleto_payments`: owed back to its payer, listed for the operator until
 * it is marked returned.
 */
export class IssueBoletosThroughCielo1795670000000 implements MigrationInterface {
  name = 'IssueBoletosThroughCielo1795670000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sales ADD COLUMN boleto_due_date date, ADD COLUMN boleto_barcode char(44), ADD COLUMN boleto_url text`);
    await queryRunner.query(
      `CREATE INDEX sales_issued_boletos_idx ON sales (provider, provider_checked_at NULLS FIRST)
        WHERE payment_method = 'BOLETO' AND provider <> 'sandbox' AND status IN ('PENDENTE', 'CANCELADO')`,
    );
    await queryRunner.query(`
      CREATE TABLE late_boleto_payments (
        id            bigserial PRIMARY KEY,
        sale_id       integer NOT NULL CONSTRAINT late_boleto_payments_sale_fk REFERENCES sales (id) CONSTRAINT late_boleto_payments_sale_key UNIQUE,
        seller_id     integer NOT NULL CONSTRAINT late_boleto_payments_seller_fk REFERENCES sellers (id),
        provider      varchar(32) NOT NULL,
        payment_id    varchar(64) NOT NULL,
        amount_cents  bigint NOT NULL CONSTRAINT late_boleto_payments_amount_check CHECK (amount_cents > 0),
        seen_by       varchar(16) NOT NULL CONSTRAINT late_boleto_payments_seen_by_check CHECK (seen_by IN ('NOTIFICATION', 'POLL')),
        returned_at   timestamptz,
        return_note   text,
        created_at    timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX late_boleto_payments_due_idx ON late_boleto_payments (created_at) WHERE returned_at IS NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE late_boleto_payments`);
    await queryRunner.query(`DROP INDEX sales_issued_boletos_idx`);
    await queryRunner.query(`ALTER TABLE sales DROP COLUMN boleto_due_date, DROP COLUMN boleto_barcode, DROP COLUMN boleto_url`);
  }
}
