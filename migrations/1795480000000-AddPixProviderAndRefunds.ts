import { MigrationInterface, QueryRunner } from 'typeorm';

const ACCOUNTS = `'AVAILABLE', 'BLOCKED', 'FEE_REVENUE', 'FINE_REVENUE', 'REVERSAL_COST', 'ACQUIRER_RECEIVABLE', 'PSP_HOLDINGS', 'PAYOUT_IN_TRANSIT', 'REFUNDS_IN_TRANSIT', 'PAYER_RETURNS_DUE'`;
const PROVIDER_ACCOUNTS = `'ACQUIRER_RECEIVABLE', 'PSP_HOLDINGS', 'PAYOUT_IN_TRANSIT', 'REFUNDS_IN_TRANSIT'`;

/**
 * Real PIX through the BCB's API Pix, and refunds sellers make (issue 21).
 *
 * - A PIX sale records which provider issued its charge and, once paid, the Pix's end-to-end id; a sale
 *   counts what was refunded of it (refunds asked for and not failed).
 * - sale_refunds: each refund of a sale, full or partial, with the seller's and the platform's parts
 *   fixed when it is asked for (so a refund the provider rejects gives back exactly what it took).
 * - pix_receipts: every Pix the PSP reported received, once (by end-to-end id), with what the gateway
 *   did with it: applied to its sale, or returned to the payer (no sale, a sale already cancelled, an
 *   amount that differs, a sale paid twice), and the return's state.
 * - pix_inbox: the PSP's notifications, written by the webhook before it answers and checked with the
 *   PSP afterwards (the body is never trusted).
 * - The ledger books money that belongs to no seller (a Pix with no sale, until it is returned): a
 *   posting's seller is optional, and two accounts join: refunds sent and not yet confirmed, and what
 *   the platform must return to payers.
 */
export class AddPixProviderAndRefunds1795480000000 implements MigrationInterface {
  name = 'AddPixProviderAndRefunds1795480000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE sales
        ADD COLUMN pix_provider varchar(20),
        ADD COLUMN pix_end_to_end_id varchar(32),
        ADD COLUMN pix_charge_closed_at timestamptz,
        ADD COLUMN refunded_cents bigint NOT NULL DEFAULT 0`);
    await queryRunner.query(`CREATE UNIQUE INDEX sales_pix_end_to_end_idx ON sales (pix_end_to_end_id) WHERE pix_end_to_end_id IS NOT NULL`);
    // A Pix names its charge by txid, the sale's external_transaction_id.
    await queryRunner.query(`CREATE INDEX sales_pix_txid_idx ON sales (external_transaction_id) WHERE pix_provider IS NOT NULL`);
    // Charges of cancelled sales still to be removed at the PSP.
    await queryRunner.query(
      `CREATE INDEX sales_pix_charges_to_close_idx ON sales (updated_at) WHERE status = 'CANCELADO' AND pix_provider = 'api-pix' AND pix_charge_closed_at IS NULL`,
    );

    await queryRunner.query(`
      CREATE TABLE sale_refunds (
        id                   bigserial PRIMARY KEY,
        sale_id              integer NOT NULL CONSTRAINT sale_refunds_sale_fk REFERENCES sales (id),
        seller_id            integer NOT NULL CONSTRAINT sale_refunds_seller_fk REFERENCES sellers (id),
        amount_cents         bigint NOT NULL CONSTRAINT sale_refunds_amount_check CHECK (amount_cents > 0),
        seller_debit_cents   bigint NOT NULL,
        platform_cost_cents  bigint NOT NULL,
        status               varchar(12) NOT NULL CONSTRAINT sale_refunds_status_check CHECK (status IN ('PENDING', 'COMPLETED', 'FAILED')),
        provider             varchar(20) NOT NULL,
        provider_refund_id   varchar(35) NOT NULL CONSTRAINT sale_refunds_provider_refund_id_key UNIQUE,
        return_id            varchar(64),
        failure_reason       text,
        requested_at         timestamptz,
        completed_at         timestamptz,
        created_at           timestamptz NOT NULL DEFAULT now(),
        updated_at           timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT sale_refunds_split_check CHECK (seller_debit_cents >= 0 AND platform_cost_cents >= 0 AND seller_debit_cents + platform_cost_cents = amount_cents)
      )`);
    await queryRunner.query(`CREATE INDEX sale_refunds_sale_idx ON sale_refunds (sale_id, id)`);
    await queryRunner.query(`CREATE INDEX sale_refunds_pending_idx ON sale_refunds (updated_at) WHERE status = 'PENDING'`);

    await queryRunner.query(`
      CREATE TABLE pix_receipts (
        id                   bigserial PRIMARY KEY,
        end_to_end_id        varchar(32) NOT NULL CONSTRAINT pix_receipts_end_to_end_id_key UNIQUE,
        txid                 varchar(35),
        amount_cents         bigint NOT NULL,
        paid_at              timestamptz NOT NULL,
        sale_id              integer CONSTRAINT pix_receipts_sale_fk REFERENCES sales (id),
        seller_id            integer CONSTRAINT pix_receipts_seller_fk REFERENCES sellers (id),
        outcome              varchar(20) NOT NULL CONSTRAINT pix_receipts_outcome_check
                               CHECK (outcome IN ('APPLIED', 'UNMATCHED', 'LATE', 'AMOUNT_MISMATCH', 'DUPLICATE')),
        seen_by              varchar(16) NOT NULL CONSTRAINT pix_receipts_seen_by_check CHECK (seen_by IN ('NOTIFICATION', 'RECONCILIATION')),
        return_id            varchar(35) CONSTRAINT pix_receipts_return_id_key UNIQUE,
        return_status        varchar(16) CONSTRAINT pix_receipts_return_status_check CHECK (return_status IN ('PENDING', 'DEVOLVIDO', 'NAO_REALIZADO')),
        return_reason        text,
        return_requested_at  timestamptz,
        created_at           timestamptz NOT NULL DEFAULT now(),
        updated_at           timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pix_receipts_return_check CHECK ((outcome = 'APPLIED') = (return_id IS NULL))
      )`);
    await queryRunner.query(`CREATE INDEX pix_receipts_paid_idx ON pix_receipts (paid_at)`);
    await queryRunner.query(`CREATE INDEX pix_receipts_returns_pending_idx ON pix_receipts (updated_at) WHERE return_status = 'PENDING'`);

    await queryRunner.query(`
      CREATE TABLE pix_inbox (
        end_to_end_id    varchar(32) PRIMARY KEY,
        received_at      timestamptz NOT NULL DEFAULT now(),
        attempts         integer NOT NULL DEFAULT 0,
        next_attempt_at  timestamptz NOT NULL DEFAULT now(),
        claimed_at       timestamptz
      )`);
    await queryRunner.query(`CREATE INDEX pix_inbox_due_idx ON pix_inbox (next_attempt_at)`);

    // How far reconciliation has compared the PSP's received Pix, and its lease (one instance at a time).
    await queryRunner.query(`CREATE TABLE pix_reconciliation_cursor (id smallint PRIMARY KEY CHECK (id = 1), checked_until timestamptz NOT NULL, claimed_at timestamptz)`);

    // The sandbox acquirer's refunds by reference: partial refunds up to the charge.
    await queryRunner.query(`
      CREATE TABLE sandbox_card_refunds (
        refund_id     varchar(35) PRIMARY KEY,
        reference     varchar(64) NOT NULL CONSTRAINT sandbox_card_refunds_reference_fk REFERENCES sandbox_card_charges (reference),
        amount_cents  bigint NOT NULL CHECK (amount_cents > 0),
        created_at    timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX sandbox_card_refunds_reference_idx ON sandbox_card_refunds (reference)`);

    // The ledger: postings without a seller (a Pix with no sale), and the two new accounts.
    await queryRunner.query(`ALTER TABLE ledger_postings ALTER COLUMN seller_id DROP NOT NULL, ALTER COLUMN available_after_cents DROP NOT NULL, ALTER COLUMN blocked_after_cents DROP NOT NULL`);
    await queryRunner.query(`
      ALTER TABLE ledger_postings ADD CONSTRAINT ledger_postings_seller_check CHECK (
        (seller_id IS NOT NULL AND available_after_cents IS NOT NULL AND blocked_after_cents IS NOT NULL)
        OR (seller_id IS NULL AND available_delta_cents = 0 AND blocked_delta_cents = 0 AND available_after_cents IS NULL AND blocked_after_cents IS NULL))`);
    await queryRunner.query(`ALTER TABLE ledger_postings DROP CONSTRAINT ledger_postings_reference_type_check`);
    await queryRunner.query(`ALTER TABLE ledger_postings ADD CONSTRAINT ledger_postings_reference_type_check CHECK (reference_type IN ('SALE', 'WITHDRAWAL', 'PIX_RECEIPT'))`);
    await queryRunner.query(`ALTER TABLE ledger_entries ALTER COLUMN seller_id DROP NOT NULL`);
    await queryRunner.query(`ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_seller_check CHECK (seller_id IS NOT NULL OR account NOT IN ('AVAILABLE', 'BLOCKED'))`);
    await queryRunner.query(`ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_reference_type_check`);
    await queryRunner.query(`ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_reference_type_check CHECK (reference_type IN ('SALE', 'WITHDRAWAL', 'PIX_RECEIPT'))`);
    await queryRunner.query(`ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_account_check, DROP CONSTRAINT ledger_entries_provider_check`);
    await queryRunner.query(`ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_account_check CHECK (account IN (${ACCOUNTS}))`);
    await queryRunner.query(`ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_provider_check CHECK ((provider IS NOT NULL) = (account IN (${PROVIDER_ACCOUNTS})))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE sandbox_card_refunds, pix_reconciliation_cursor, pix_inbox, pix_receipts, sale_refunds`);
    await queryRunner.query(`DROP INDEX sales_pix_charges_to_close_idx, sales_pix_txid_idx, sales_pix_end_to_end_idx`);
    await queryRunner.query(`ALTER TABLE sales DROP COLUMN pix_provider, DROP COLUMN pix_end_to_end_id, DROP COLUMN pix_charge_closed_at, DROP COLUMN refunded_cents`);
  }
}
