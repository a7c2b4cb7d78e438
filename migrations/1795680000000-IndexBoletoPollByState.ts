import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The boleto poll (issue 40) in two claims, each with its own index: open boletos by when they were last
 * asked about, and boletos cancelled unpaid by when they were cancelled (`expires_at`), so that the poll of
 * late payments reads only those cancelled within CIELO_BOLETO_LATE_WATCH_DAYS and never again the ones
 * cancelled long ago, which only grow. They replace the one index over both states.
 */
export class IndexBoletoPollByState1795680000000 implements MigrationInterface {
  name = 'IndexBoletoPollByState1795680000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX sales_issued_boletos_idx`);
    await queryRunner.query(
      `CREATE INDEX sales_open_boletos_idx ON sales (provider, provider_checked_at NULLS FIRST)
        WHERE payment_method = 'BOLETO' AND provider <> 'sandbox' AND status = 'PENDENTE'`,
    );
    await queryRunner.query(
      `CREATE INDEX sales_cancelled_boletos_idx ON sales (provider, expires_at)
        WHERE payment_method = 'BOLETO' AND provider <> 'sandbox' AND status = 'CANCELADO'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX sales_cancelled_boletos_idx`);
    await queryRunner.query(`DROP INDEX sales_open_boletos_idx`);
    await queryRunner.query(
      `CREATE INDEX sales_issued_boletos_idx ON sales (provider, provider_checked_at NULLS FIRST)
        WHERE payment_method = 'BOLETO' AND provider <> 'sandbox' AND status IN ('PENDENTE', 'CANCELADO')`,
    );
  }
}
