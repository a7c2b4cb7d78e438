import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 37: the provider is a fact of each record, set when it is made and never rewritten, so that a
 * rail's provider can change without relabelling history or asking a new provider about an old one's
 * references.
 * - sales.pix_provider becomes sales.provider, filled for every sale from the data (below).
 * - sale_refunds.provider and the ledger's provider entries of each sale: the sale's own provider (they
 *   recorded the configured one before, the sandbox for a Pix Automático charge the PSP held).
 * - withdrawals.provider (the payout provider: the sandbox until now), pix_receipts.provider (the PSP that
 *   reported the Pix: only the API Pix reports them) and subscriptions.provider (who holds its stored card
 *   or its Pix Automático recurrence; null for a plain PIX subscription, each of whose sales has its own).
 */
export class RecordEachRecordsProvider1795590000000 implements MigrationInterface {
  name = 'RecordEachRecordsProvider1795590000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // A provider's name is up to 32 characters wherever it is written (its length grows in place).
    await queryRunner.query(`ALTER TABLE sale_refunds ALTER COLUMN provider TYPE varchar(32)`);
    await queryRunner.query(`ALTER TABLE ledger_entries ALTER COLUMN provider TYPE varchar(32)`);

    // Subscriptions first: who holds the stored card (only the sandbox acquirer existed) or the Pix
    // Automático recurrence (the sandbox when it has the recurrence, else the PSP); a plain PIX
    // subscription holds nothing (each of its sales has its own provider).
    await queryRunner.query(`ALTER TABLE subscriptions ADD COLUMN provider varchar(32)`);
    await queryRunner.query(`
      UPDATE subscriptions u SET provider = CASE
          WHEN u.payment_method <> 'PIX' THEN 'sandbox'
          WHEN EXISTS (SELECT 1 FROM sandbox_recurrences r WHERE r.id = u.automatic_pix_recurrence_id) THEN 'sandbox'
          ELSE 'api-pix' END
        WHERE u.payment_method <> 'PIX' OR u.automatic_pix_recurrence_id IS NOT NULL`);

    // Sales: a PIX sale's provider is the one that issued its charge (pix_provider); a Pix Automático
    // charge (no pix_provider) is its subscription's recurrence holder's; cards, boleto and transfers were
    // only ever the sandbox's. Only a PIX sale with neither (none is expected) takes PIX_PROVIDER.
    await queryRunner.query(`ALTER TABLE sales RENAME COLUMN pix_provider TO provider`);
    await queryRunner.query(`
      UPDATE sales s SET provider = CASE
          WHEN s.payment_method <> 'PIX' THEN 'sandbox'
          ELSE COALESCE((SELECT u.provider FROM subscriptions u WHERE u.id = s.subscription_id AND u.automatic_pix_recurrence_id IS NOT NULL), $1) END
        WHERE s.provider IS NULL`,
      [process.env.PIX_PROVIDER === 'api-pix' ? 'api-pix' : 'sandbox'],
    );
    await queryRunner.query(`ALTER TABLE sales ALTER COLUMN provider SET NOT NULL, ALTER COLUMN provider TYPE varchar(32)`);
    await queryRunner.query(`DROP INDEX IF EXISTS sales_pix_txid_idx`);
    await queryRunner.query(`CREATE INDEX sales_pix_txid_idx ON sales (external_transaction_id) WHERE payment_method = 'PIX'`);
    await queryRunner.query(`DROP INDEX IF EXISTS sales_pix_charges_to_close_idx`);
    await queryRunner.query(
      `CREATE INDEX sales_pix_charges_to_close_idx ON sales (provider, updated_at) WHERE status = 'CANCELADO' AND payment_method = 'PIX' AND pix_charge_closed_at IS NULL`,
    );

    // Before, a posting whose record named no provider (a Pix Automático charge's) booked its provider
    // accounts under the card provider configured (the sandbox) although the PSP held the money: the
    // entries of each sale's postings are put under the sale's own provider, and its refunds too.
    await queryRunner.query(`ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only`);
    await queryRunner.query(`
      UPDATE ledger_entries e SET provider = s.provider
        FROM ledger_postings p JOIN sales s ON s.id = p.reference_id
       WHERE e.posting_id = p.id AND p.reference_type = 'SALE' AND e.provider IS NOT NULL AND e.provider <> s.provider`);
    await queryRunner.query(`ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only`);
    await queryRunner.query(`UPDATE sale_refunds r SET provider = s.provider FROM sales s WHERE s.id = r.sale_id AND r.provider <> s.provider`);

    await queryRunner.query(`ALTER TABLE withdrawals ADD COLUMN provider varchar(32)`);
    await queryRunner.query(`UPDATE withdrawals SET provider = 'sandbox'`);
    await queryRunner.query(`ALTER TABLE withdrawals ALTER COLUMN provider SET NOT NULL`);

    await queryRunner.query(`ALTER TABLE pix_receipts ADD COLUMN provider varchar(32)`);
    await queryRunner.query(`UPDATE pix_receipts SET provider = 'api-pix'`);
    await queryRunner.query(`ALTER TABLE pix_receipts ALTER COLUMN provider SET NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE subscriptions DROP COLUMN provider`);
    await queryRunner.query(`ALTER TABLE pix_receipts DROP COLUMN provider`);
    await queryRunner.query(`ALTER TABLE withdrawals DROP COLUMN provider`);
    await queryRunner.query(`DROP INDEX IF EXISTS sales_pix_charges_to_close_idx`);
    await queryRunner.query(`DROP INDEX IF EXISTS sales_pix_txid_idx`);
    await queryRunner.query(`ALTER TABLE sales ALTER COLUMN provider DROP NOT NULL`);
    await queryRunner.query(`UPDATE sales SET provider = NULL WHERE payment_method <> 'PIX' OR automatic_pix_sent_at IS NOT NULL OR automatic_pix_due_date IS NOT NULL OR pix_code IS NULL`);
    await queryRunner.query(`ALTER TABLE sales RENAME COLUMN provider TO pix_provider`);
    await queryRunner.query(`CREATE INDEX sales_pix_txid_idx ON sales (external_transaction_id) WHERE pix_provider IS NOT NULL`);
    await queryRunner.query(
      `CREATE INDEX sales_pix_charges_to_close_idx ON sales (updated_at) WHERE status = 'CANCELADO' AND pix_provider = 'api-pix' AND pix_charge_closed_at IS NULL`,
    );
  }
}
