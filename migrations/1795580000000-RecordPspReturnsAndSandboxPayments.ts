import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 35: money booked only on its provider's evidence.
 * - sale_refunds also records the returns a PSP makes on its own (a devolução of a MED, natureza
 *   MED_OPERACIONAL or MED_FRAUDE, or any id the gateway did not issue): `initiated_by` PSP, the PSP's own
 *   id for it in `psp_return_id` (at most one row per Pix and id) and its `nature`. The seller's refunds
 *   stay `initiated_by` SELLER.
 * - sandbox_payments is the sandbox's own record of each payment it played (its events route confirming a
 *   sale it holds): the evidence ledger:verify asks of a sandbox sale PAGO, as a Pix receipt is for a PSP's;
 *   filled at once for the sales it played paid before.
 */
export class RecordPspReturnsAndSandboxPayments1795580000000 implements MigrationInterface {
  name = 'RecordPspReturnsAndSandboxPayments1795580000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE sale_refunds
        ADD COLUMN initiated_by varchar(6) NOT NULL DEFAULT 'SELLER' CONSTRAINT sale_refunds_initiated_by_check CHECK (initiated_by IN ('SELLER', 'PSP')),
        ADD COLUMN psp_return_id varchar(35),
        ADD COLUMN nature varchar(20),
        ADD CONSTRAINT sale_refunds_psp_return_check CHECK ((initiated_by = 'PSP') = (psp_return_id IS NOT NULL))`);
    await queryRunner.query(`CREATE UNIQUE INDEX sale_refunds_psp_return_key ON sale_refunds (sale_id, psp_return_id) WHERE psp_return_id IS NOT NULL`);
    // The sandbox acquirer records a refund it held and was told to refuse, so that its record decides once.
    await queryRunner.query(`ALTER TABLE sandbox_card_refunds ADD COLUMN refused boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`
      CREATE TABLE sandbox_payments (
        sale_id       integer PRIMARY KEY CONSTRAINT sandbox_payments_sale_fk REFERENCES sales (id),
        amount_cents  bigint NOT NULL CONSTRAINT sandbox_payments_amount_check CHECK (amount_cents > 0),
        created_at    timestamptz NOT NULL DEFAULT now()
      )`);
    // The sales the sandbox already played as paid: before this table its events route was the only way a
    // sale it holds (a PIX sale whose charge it issued, or any card, boleto or transfer sale) became paid
    // without a record of its own (a card charge it approved, a recurring charge it settled).
    await queryRunner.query(`
      INSERT INTO sandbox_payments (sale_id, amount_cents, created_at)
      SELECT id, amount_cents, COALESCE(completed_at, now()) FROM sales
       WHERE status IN ('PAGO', 'ESTORNADO', 'MED', 'CHARGEBACK')
         AND (payment_method <> 'PIX' OR pix_provider IS NULL OR pix_provider = 'sandbox')
         AND automatic_pix_sent_at IS NULL
      ON CONFLICT (sale_id) DO NOTHING`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE sandbox_payments`);
    await queryRunner.query(`ALTER TABLE sandbox_card_refunds DROP COLUMN refused`);
    await queryRunner.query(`DROP INDEX sale_refunds_psp_return_key`);
    await queryRunner.query(`ALTER TABLE sale_refunds DROP CONSTRAINT sale_refunds_psp_return_check, DROP COLUMN nature, DROP COLUMN psp_return_id, DROP COLUMN initiated_by`);
  }
}
