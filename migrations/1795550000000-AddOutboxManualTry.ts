import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A seller's redelivery of an event that had no try left (FAILED, or DELIVERED) is one try, not a fresh
 * retry schedule (issue 35, L4): `manual_try` marks that try, and its failure makes the event FAILED
 * again at once. A PENDING event redelivered keeps its own schedule: its next retry is only brought
 * forward to now.
 */
export class AddOutboxManualTry1795550000000 implements MigrationInterface {
  name = 'AddOutboxManualTry1795550000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE outbox_events ADD COLUMN manual_try boolean NOT NULL DEFAULT false`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE outbox_events DROP COLUMN manual_try`);
  }
}
