import { MigrationInterface, QueryRunner } from 'typeorm';

/** Idempotency keys of POST /api/sales and POST /api/public/cashout (platform.md §6). */
export class CreateIdempotencyKeys1795360000001 implements MigrationInterface {
  name = 'CreateIdempotencyKeys1795360000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE idempotency_keys (
        id               bigserial PRIMARY KEY,
        seller_id        integer NOT NULL CONSTRAINT idempotency_keys_seller_fk REFERENCES sellers (id),
        scope            varchar(60) NOT NULL,
        key              varchar(255) NOT NULL,
        request_hash     char(64) NOT NULL,
        response_status  smallint,
        response_body    jsonb,
        created_at       timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT idempotency_keys_unique UNIQUE (seller_id, scope, key)
      )`);
    await queryRunner.query(`CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE idempotency_keys`);
  }
}
