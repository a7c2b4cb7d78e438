import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The notifications outbox (platform.md §5): each status change writes its postbacks and webhooks here
 * in its own transaction; a relay hands due rows to the Bull queue; every try is kept.
 */
export class CreateOutbox1795360000003 implements MigrationInterface {
  name = 'CreateOutbox1795360000003';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE outbox_events (
        id               bigserial PRIMARY KEY,
        event_id         uuid NOT NULL CONSTRAINT outbox_events_event_id_unique UNIQUE,
        seller_id        integer NOT NULL CONSTRAINT outbox_events_seller_fk REFERENCES sellers (id),
        channel          varchar(30) NOT NULL,
        aggregate_key    varchar(80) NOT NULL,
        url              varchar(2048) NOT NULL,
        signed           boolean NOT NULL,
        payload          jsonb NOT NULL,
        status           varchar(10) NOT NULL DEFAULT 'PENDING',
        attempts         integer NOT NULL DEFAULT 0,
        next_attempt_at  timestamptz NOT NULL DEFAULT now(),
        retry_base_at    timestamptz NOT NULL DEFAULT now(),
        enqueued_at      timestamptz,
        last_error       text,
        created_at       timestamptz NOT NULL DEFAULT now(),
        delivered_at     timestamptz,
        CONSTRAINT outbox_events_channel_check CHECK (channel IN ('SALE_POSTBACK', 'SUBSCRIPTION_POSTBACK', 'WITHDRAWAL_WEBHOOK')),
        CONSTRAINT outbox_events_status_check CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED')),
        CONSTRAINT outbox_events_attempts_check CHECK (attempts >= 0)
      )`);
    await queryRunner.query(`CREATE INDEX outbox_events_due_idx ON outbox_events (next_attempt_at) WHERE status = 'PENDING'`);
    await queryRunner.query(`CREATE INDEX outbox_events_pending_aggregate_idx ON outbox_events (aggregate_key, id) WHERE status = 'PENDING'`);
    await queryRunner.query(`CREATE INDEX outbox_events_seller_idx ON outbox_events (seller_id, id)`);

    await queryRunner.query(`
      CREATE TABLE delivery_attempts (
        id               bigserial PRIMARY KEY,
        outbox_id        bigint NOT NULL CONSTRAINT delivery_attempts_outbox_fk REFERENCES outbox_events (id),
        attempted_at     timestamptz NOT NULL DEFAULT now(),
        response_status  smallint,
        error            text,
        duration_ms      integer NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX delivery_attempts_outbox_idx ON delivery_attempts (outbox_id, id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE delivery_attempts`);
    await queryRunner.query(`DROP TABLE outbox_events`);
  }
}
