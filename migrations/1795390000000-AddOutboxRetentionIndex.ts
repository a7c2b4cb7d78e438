import { MigrationInterface, QueryRunner } from 'typeorm';

/** The retention job finds delivered events by their delivery date. */
export class AddOutboxRetentionIndex1795390000000 implements MigrationInterface {
  name = 'AddOutboxRetentionIndex1795390000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX outbox_events_delivered_idx ON outbox_events (delivered_at) WHERE status = 'DELIVERED'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX outbox_events_delivered_idx`);
  }
}
