import { MigrationInterface, QueryRunner } from 'typeorm';

/** The append-only ledger behind every balance (platform.md §4). */
export class CreateLedger1795360000000 implements MigrationInterface {
  name = 'CreateLedger1795360000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE ledger_entries (
        id              bigserial PRIMARY KEY,
        seller_id       integer NOT NULL CONSTRAINT ledger_entries_seller_fk REFERENCES sellers (id),
        account         varchar(10) NOT NULL,
        amount_cents    bigint NOT NULL,
        kind            varchar(30) NOT NULL,
        reference_type  varchar(12) NOT NULL,
        reference_id    bigint NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ledger_entries_account_check CHECK (account IN ('AVAILABLE', 'BLOCKED')),
        CONSTRAINT ledger_entries_amount_not_zero_check CHECK (amount_cents <> 0),
        CONSTRAINT ledger_entries_reference_type_check CHECK (reference_type IN ('SALE', 'WITHDRAWAL'))
      )`);
    await queryRunner.query(`CREATE INDEX ledger_entries_seller_idx ON ledger_entries (seller_id)`);
    await queryRunner.query(`CREATE INDEX ledger_entries_reference_idx ON ledger_entries (reference_type, reference_id)`);
    await queryRunner.query(`
      CREATE FUNCTION ledger_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'ledger_entries is append-only: % refused', TG_OP;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
      FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE ledger_entries`);
    await queryRunner.query(`DROP FUNCTION ledger_entries_append_only()`);
  }
}
