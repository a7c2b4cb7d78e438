import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A sale's status line says who recorded a move made on someone's word rather than by the gateway itself:
 * `recorded_by` OPERATOR for a dispute event the operator recorded (POST /admin/sales/{id}/events: a
 * chargeback the acquirer reported in its back office or by file, a MED the PSP notified), with the
 * operator's `reason`, both or neither. Every other line (a provider's evidence, a job, the seller's own
 * API calls, the sandbox) keeps both null.
 */
export class AddSaleStatusChangeAudit1795600000000 implements MigrationInterface {
  name = 'AddSaleStatusChangeAudit1795600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE sale_status_changes
        ADD COLUMN recorded_by varchar(8) CONSTRAINT sale_status_changes_recorded_by_check CHECK (recorded_by IN ('OPERATOR')),
        ADD COLUMN reason varchar(500),
        ADD CONSTRAINT sale_status_changes_reason_check CHECK ((recorded_by IS NULL) = (reason IS NULL) AND (reason IS NULL OR btrim(reason) <> ''))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sale_status_changes DROP CONSTRAINT sale_status_changes_reason_check, DROP COLUMN reason, DROP COLUMN recorded_by`);
  }
}
