import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Subscriptions by Pix Automático (issue 22).
 *
 * - A subscription opted in keeps its authorization: the PSP's recurrence id (idRec), the journey that
 *   asked for it, where it stands (PENDING until the payer decides, AUTHORIZED, or REJECTED, EXPIRED,
 *   CANCELLED with the reason) and when; automatic_pix_checked_at is the polling lease.
 * - A renewal collected by the PSP (a recurring charge, /cobr) records its due date, when the charge
 *   reached the PSP, the retries asked after failed attempts, and the polling lease.
 * - The sandbox plays the payer's bank: its recurrences and recurring charges.
 */
export class AddAutomaticPix1795490000000 implements MigrationInterface {
  name = 'AddAutomaticPix1795490000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE subscriptions
        ADD COLUMN automatic_pix_status varchar(10) CHECK (automatic_pix_status IN ('PENDING', 'AUTHORIZED', 'REJECTED', 'EXPIRED', 'CANCELLED')),
        ADD COLUMN automatic_pix_journey varchar(9) CHECK (automatic_pix_journey IN ('JOURNEY_2', 'JOURNEY_3')),
        ADD COLUMN automatic_pix_recurrence_id varchar(29) UNIQUE,
        ADD COLUMN automatic_pix_authorized_at timestamptz,
        ADD COLUMN automatic_pix_ended_at timestamptz,
        ADD COLUMN automatic_pix_end_reason varchar(200),
        ADD COLUMN automatic_pix_checked_at timestamptz,
        ADD CONSTRAINT subscriptions_automatic_pix_journey CHECK ((automatic_pix_status IS NULL) = (automatic_pix_journey IS NULL))`);
    await queryRunner.query(`CREATE INDEX subscriptions_automatic_pix_pending_idx ON subscriptions (id) WHERE automatic_pix_status = 'PENDING'`);
    await queryRunner.query(`CREATE INDEX subscriptions_automatic_pix_authorized_idx ON subscriptions (id) WHERE automatic_pix_status = 'AUTHORIZED'`);
    await queryRunner.query(
      `CREATE INDEX subscriptions_automatic_pix_renewal_idx ON subscriptions (next_billing_date)
        WHERE automatic_pix_status = 'AUTHORIZED' AND status IN ('ACTIVE', 'TRIALING') AND awaiting_payment_since IS NULL`,
    );
    await queryRunner.query(`
      ALTER TABLE sales
        ADD COLUMN automatic_pix_due_date varchar(10),
        ADD COLUMN automatic_pix_sent_at timestamptz,
        ADD COLUMN automatic_pix_retries smallint NOT NULL DEFAULT 0,
        ADD COLUMN automatic_pix_checked_at timestamptz`);
    await queryRunner.query(`CREATE INDEX sales_automatic_pix_open_idx ON sales (automatic_pix_due_date) WHERE automatic_pix_due_date IS NOT NULL AND status = 'PENDENTE'`);
    await queryRunner.query(`
      CREATE TABLE sandbox_recurrences (
        id varchar(29) PRIMARY KEY,
        contract varchar(35) NOT NULL UNIQUE,
        status varchar(10) NOT NULL,
        journey varchar(9) NOT NULL,
        first_charge_txid varchar(35),
        amount_cents bigint NOT NULL,
        period varchar(10) NOT NULL,
        first_date varchar(10) NOT NULL,
        changed_at timestamptz NOT NULL DEFAULT now(),
        cancelled_by varchar(20),
        code varchar(4),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE sandbox_recurring_charges (
        txid varchar(35) PRIMARY KEY,
        recurrence_id varchar(29) NOT NULL REFERENCES sandbox_recurrences (id),
        status varchar(10) NOT NULL,
        due_date varchar(10) NOT NULL,
        amount_cents bigint NOT NULL,
        attempts jsonb NOT NULL DEFAULT '[]',
        paid_end_to_end_id varchar(32),
        paid_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE sandbox_recurring_charges`);
    await queryRunner.query(`DROP TABLE sandbox_recurrences`);
    await queryRunner.query(`DROP INDEX sales_automatic_pix_open_idx`);
    await queryRunner.query(`ALTER TABLE sales DROP COLUMN automatic_pix_due_date, DROP COLUMN automatic_pix_sent_at, DROP COLUMN automatic_pix_retries, DROP COLUMN automatic_pix_checked_at`);
    await queryRunner.query(`DROP INDEX subscriptions_automatic_pix_renewal_idx`);
    await queryRunner.query(`DROP INDEX subscriptions_automatic_pix_authorized_idx`);
    await queryRunner.query(`DROP INDEX subscriptions_automatic_pix_pending_idx`);
    await queryRunner.query(`
      ALTER TABLE subscriptions
        DROP CONSTRAINT subscriptions_automatic_pix_journey,
        DROP COLUMN automatic_pix_status, DROP COLUMN automatic_pix_journey, DROP COLUMN automatic_pix_recurrence_id,
        DROP COLUMN automatic_pix_authorized_at, DROP COLUMN automatic_pix_ended_at, DROP COLUMN automatic_pix_end_reason,
        DROP COLUMN automatic_pix_checked_at`);
  }
}
