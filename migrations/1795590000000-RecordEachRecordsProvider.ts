import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 37: the provider is a fact of each record, set when it is made and never rewritten, so that a
 * rail's provider can change without relabelling history or asking a new provider about an old one's
 * references.
 * - sales.pix_provider becomes sales.provider, filled for every sale: a PIX sale's is the provider that
 *   issued its charge (pix_provider), or for a Pix Automático charge the one that holds its recurrence
 *   (the sandbox when it recorded the charge, else the PSP); cards, boleto and transfers were only ever
 *   the sandbox's. A PIX sale whose charge was never issued takes the PIX provider configured now.
 * - sale_refunds.provider: the sale's own provider (it recorded the configured PIX provider before).
 * - withdrawals.provider (the payout provider: the sandbox until now), pix_receipts.provider (the PSP that
 *   reported the Pix: only the API Pix reports them) and subscriptions.provider (who holds its stored card
 *   or its Pix Automático recurrence; null for a plain PIX subscription, each of whose sales has its own).
 */
export class RecordEachRecordsProvider1795590000000 implements MigrationInterface {
  name = 'RecordEachRecordsProvider1795590000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const pixProvider = process.env.PIX_PROVIDER === 'api-pix' ? 'api-pix' : 'sandbox';
    await queryRunner.query(`ALTER TABLE sales RENAME COLUMN pix_provider TO provider`);
    await queryRunner.query(`
      UPDATE sales s SET provider = CASE
          WHEN s.payment_method <> 'PIX' THEN 'sandbox'
          WHEN EXISTS (SELECT 1 FROM sandbox_recurring_charges c WHERE c.txid = 'GWREC' || lpad(s.id::text, 21, '0')) THEN 'sandbox'
          ELSE $1 END
        WHERE s.provider IS NULL`,
      [pixProvider],
    );
    await queryRunner.query(`ALTER TABLE sales ALTER COLUMN provider SET NOT NULL, ALTER COLUMN provider TYPE varchar(32)`);
    await queryRunner.query(`DROP INDEX IF EXISTS sales_pix_txid_idx`);
    await queryRunner.query(`CREATE INDEX sales_pix_txid_idx ON sales (external_transaction_id) WHERE payment_method = 'PIX'`);
    await queryRunner.query(`DROP INDEX IF EXISTS sales_pix_charges_to_close_idx`);
    await queryRunner.query(
      `CREATE INDEX sales_pix_charges_to_close_idx ON sales (provider, updated_at) WHERE status = 'CANCELADO' AND payment_method = 'PIX' AND pix_charge_closed_at IS NULL`,
    );

    // A provider's name is up to 32 characters wherever it is written (its length grows in place).
    await queryRunner.query(`ALTER TABLE sale_refunds ALTER COLUMN provider TYPE varchar(32)`);
    await queryRunner.query(`ALTER TABLE ledger_entries ALTER COLUMN provider TYPE varchar(32)`);
    await queryRunner.query(`UPDATE sale_refunds r SET provider = s.provider FROM sales s WHERE s.id = r.sale_id AND r.provider <> s.provider`);

    await queryRunner.query(`ALTER TABLE withdrawals ADD COLUMN provider varchar(32)`);
    await queryRunner.query(`UPDATE withdrawals SET provider = 'sandbox'`);
    await queryRunner.query(`ALTER TABLE withdrawals ALTER COLUMN provider SET NOT NULL`);

    await queryRunner.query(`ALTER TABLE pix_receipts ADD COLUMN provider varchar(32)`);
    await queryRunner.query(`UPDATE pix_receipts SET provider = 'api-pix'`);
    await queryRunner.query(`ALTER TABLE pix_receipts ALTER COLUMN provider SET NOT NULL`);

    await queryRunner.query(`ALTER TABLE subscriptions ADD COLUMN provider varchar(32)`);
    await queryRunner.query(`
      UPDATE subscriptions u SET provider = CASE
          WHEN u.payment_method <> 'PIX' THEN 'sandbox'
          ELSE (SELECT s.provider FROM sales s WHERE s.subscription_id = u.id ORDER BY s.id LIMIT 1) END
        WHERE u.payment_method <> 'PIX' OR u.automatic_pix_recurrence_id IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE subscriptions DROP COLUMN provider`);
    await queryRunner.query(`ALTER TABLE pix_receipts DROP COLUMN provider`);
    await queryRunner.query(`ALTER TABLE withdrawals DROP COLUMN provider`);
    await queryRunner.query(`DROP INDEX IF EXISTS sales_pix_charges_to_close_idx`);
    await queryRunner.query(`DROP INDEX IF EXISTS sales_pix_txid_idx`);
    await queryRunner.query(`ALTER TABLE sales ALTER COLUMN provider DROP NOT NULL`);
    await queryRunner.query(`UPDATE sales SET provider = NULL WHERE payment_method <> 'PIX' OR automatic_pix_sent_at IS NOT NULL`);
    await queryRunner.query(`ALTER TABLE sales RENAME COLUMN provider TO pix_provider`);
    await queryRunner.query(`CREATE INDEX sales_pix_txid_idx ON sales (external_transaction_id) WHERE pix_provider IS NOT NULL`);
    await queryRunner.query(
      `CREATE INDEX sales_pix_charges_to_close_idx ON sales (updated_at) WHERE status = 'CANCELADO' AND pix_provider = 'api-pix' AND pix_charge_closed_at IS NULL`,
    );
  }
}
