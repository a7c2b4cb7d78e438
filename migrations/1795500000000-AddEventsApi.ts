import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Events an integrator can rely on (issue 23).
 *
 * - outbox_events names what each event is about (event_type, object_type, object_id) so the events API
 *   filters by index, and carries a `sequence` per object (sale or subscription) that only grows.
 * - event_sequences holds each object's last sequence; an upsert on it orders the events of one object
 *   in commit order, whatever the concurrency.
 * - delivery_attempts keeps the headers each try sent (signatures included, never a secret).
 * - sellers keep the previous postback secret, sealed, until the end of its overlap window.
 * - postback_endpoints: each URL's run of consecutive failures, to mark it failing after a number of days.
 */
export class AddEventsApi1795500000000 implements MigrationInterface {
  name = 'AddEventsApi1795500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE outbox_events
        ADD COLUMN event_type varchar(40),
        ADD COLUMN object_type varchar(20),
        ADD COLUMN object_id bigint,
        ADD COLUMN sequence integer`);
    await queryRunner.query(`
      UPDATE outbox_events SET
        event_type = CASE WHEN channel = 'WITHDRAWAL_WEBHOOK' THEN 'withdrawal.status_changed' ELSE payload->>'type' END,
        object_type = CASE WHEN aggregate_key ~ '^(sale|subscription|withdrawal):[0-9]+' THEN split_part(aggregate_key, ':', 1) END,
        object_id = CASE WHEN aggregate_key ~ '^(sale|subscription|withdrawal):[0-9]+' THEN split_part(aggregate_key, ':', 2)::bigint END`);
    await queryRunner.query(`
      UPDATE outbox_events e SET sequence = n.sequence
        FROM (SELECT id, row_number() OVER (PARTITION BY object_type, object_id ORDER BY id) AS sequence
                FROM outbox_events WHERE signed AND object_type IS NOT NULL) n
       WHERE e.id = n.id`);
    await queryRunner.query(`ALTER TABLE outbox_events ALTER COLUMN event_type SET NOT NULL`);
    await queryRunner.query(`
      CREATE TABLE event_sequences (
        object_type varchar(20) NOT NULL,
        object_id bigint NOT NULL,
        last integer NOT NULL,
        PRIMARY KEY (object_type, object_id)
      )`);
    await queryRunner.query(`
      INSERT INTO event_sequences (object_type, object_id, last)
      SELECT object_type, object_id, max(sequence) FROM outbox_events WHERE sequence IS NOT NULL GROUP BY 1, 2`);
    // The events API's filters, each a range scan in id order within one seller.
    await queryRunner.query(`CREATE INDEX outbox_events_seller_type_idx ON outbox_events (seller_id, event_type, id)`);
    await queryRunner.query(`CREATE INDEX outbox_events_seller_object_idx ON outbox_events (seller_id, object_type, object_id, id)`);
    await queryRunner.query(`CREATE INDEX outbox_events_seller_status_idx ON outbox_events (seller_id, status, id)`);
    await queryRunner.query(`CREATE INDEX outbox_events_seller_created_idx ON outbox_events (seller_id, created_at, id)`);

    await queryRunner.query(`ALTER TABLE delivery_attempts ADD COLUMN request_headers jsonb`);

    await queryRunner.query(`
      ALTER TABLE sellers
        ADD COLUMN previous_postback_secret_encrypted text,
        ADD COLUMN previous_postback_secret_expires_at timestamptz`);

    await queryRunner.query(`
      CREATE TABLE postback_endpoints (
        seller_id integer NOT NULL REFERENCES sellers(id),
        url varchar NOT NULL,
        failures_since timestamptz,
        failing_since timestamptz,
        last_success_at timestamptz,
        last_failure_at timestamptz,
        last_error text,
        PRIMARY KEY (seller_id, url)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE postback_endpoints`);
    await queryRunner.query(`ALTER TABLE sellers DROP COLUMN previous_postback_secret_encrypted, DROP COLUMN previous_postback_secret_expires_at`);
    await queryRunner.query(`ALTER TABLE delivery_attempts DROP COLUMN request_headers`);
    await queryRunner.query(`DROP INDEX outbox_events_seller_created_idx`);
    await queryRunner.query(`DROP INDEX outbox_events_seller_status_idx`);
    await queryRunner.query(`DROP INDEX outbox_events_seller_object_idx`);
    await queryRunner.query(`DROP INDEX outbox_events_seller_type_idx`);
    await queryRunner.query(`DROP TABLE event_sequences`);
    await queryRunner.query(`ALTER TABLE outbox_events DROP COLUMN event_type, DROP COLUMN object_type, DROP COLUMN object_id, DROP COLUMN sequence`);
  }
}
