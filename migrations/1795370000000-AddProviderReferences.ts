import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two commits around every provider call (issue 8): what the sandbox provider accepted, by our
 * reference, in its own tables; the recovery job's lease on sales and withdrawals left between the two
 * commits; idempotency records that point at the resource they created and keep only a keyed
 * fingerprint of the request; the ledger's withdrawal entries named like the rest of the code.
 */
export class AddProviderReferences1795370000000 implements MigrationInterface {
  name = 'AddProviderReferences1795370000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE sandbox_card_charges (
        reference     varchar(64) PRIMARY KEY,
        kind          varchar(10),
        outcome       varchar(10) NOT NULL,
        amount_cents  bigint,
        installments  smallint,
        external_id   varchar(64) NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT sandbox_card_charges_outcome_check CHECK (outcome IN ('APPROVED', 'REFUSED', 'FAILED', 'VOIDED')),
        CONSTRAINT sandbox_card_charges_charge_check CHECK (
          outcome = 'VOIDED' OR (kind IN ('FIRST', 'RENEWAL') AND amount_cents > 0 AND installments BETWEEN 1 AND 12))
      )`);
    await queryRunner.query(`
      CREATE TABLE sandbox_payouts (
        reference         varchar(64) PRIMARY KEY,
        status            varchar(10) NOT NULL,
        net_amount_cents  bigint,
        pix_key_type      varchar(6),
        external_id       varchar(64) NOT NULL,
        created_at        timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT sandbox_payouts_status_check CHECK (status IN ('ACCEPTED', 'CANCELLED')),
        CONSTRAINT sandbox_payouts_amount_check CHECK (net_amount_cents >= 0)
      )`);

    await queryRunner.query(`ALTER TABLE sales ADD COLUMN provider_checked_at timestamptz`);
    await queryRunner.query(`CREATE INDEX sales_in_processing_idx ON sales (updated_at) WHERE status = 'EM_PROCESSAMENTO'`);
    await queryRunner.query(`ALTER TABLE withdrawals ADD COLUMN provider_checked_at timestamptz`);
    await queryRunner.query(
      `CREATE INDEX withdrawals_payout_unsent_idx ON withdrawals (created_at) WHERE status = 'PENDING' AND external_id IS NULL`,
    );

    // A request hash without a server key can be guessed back (a CVV has 1,000 values): the old ones are
    // dropped. A key whose fingerprint is gone replays its stored answer for any body until it expires.
    await queryRunner.query(`ALTER TABLE idempotency_keys ALTER COLUMN request_hash DROP NOT NULL`);
    await queryRunner.query(`UPDATE idempotency_keys SET request_hash = NULL`);
    await queryRunner.query(`ALTER TABLE idempotency_keys ADD COLUMN resource_id bigint`);

    await queryRunner.query(`ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only`);
    await queryRunner.query(`UPDATE ledger_entries SET kind = replace(kind, 'CASHOUT_', 'WITHDRAWAL_') WHERE kind LIKE 'CASHOUT\\_%'`);
    await queryRunner.query(`ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only`);
    await queryRunner.query(`UPDATE ledger_entries SET kind = replace(kind, 'WITHDRAWAL_', 'CASHOUT_') WHERE kind LIKE 'WITHDRAWAL\\_%'`);
    await queryRunner.query(`ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only`);
    await queryRunner.query(`ALTER TABLE idempotency_keys DROP COLUMN resource_id`);
    await queryRunner.query(`DELETE FROM idempotency_keys WHERE request_hash IS NULL`);
    await queryRunner.query(`ALTER TABLE idempotency_keys ALTER COLUMN request_hash SET NOT NULL`);
    await queryRunner.query(`DROP INDEX withdrawals_payout_unsent_idx`);
    await queryRunner.query(`ALTER TABLE withdrawals DROP COLUMN provider_checked_at`);
    await queryRunner.query(`DROP INDEX sales_in_processing_idx`);
    await queryRunner.query(`ALTER TABLE sales DROP COLUMN provider_checked_at`);
    await queryRunner.query(`DROP TABLE sandbox_payouts`);
    await queryRunner.query(`DROP TABLE sandbox_card_charges`);
  }
}
