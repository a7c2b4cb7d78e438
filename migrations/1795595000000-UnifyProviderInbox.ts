import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 37: one intake for every provider's notifications. provider_inbox keeps what each notification
 * names (the provider, the kind of object, its id at the provider) before the notification is answered,
 * once while it waits; a notification arriving while its row is being checked bumps `notifications`, and
 * the row is dropped only if the count is still the one the check started from. It takes over pix_inbox
 * (the API Pix's /pix) and automatic_pix_inbox (its /rec and /cobr), whose waiting rows move into it.
 */
export class UnifyProviderInbox1795595000000 implements MigrationInterface {
  name = 'UnifyProviderInbox1795595000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE provider_inbox (
        id               serial CONSTRAINT provider_inbox_pkey PRIMARY KEY,
        provider         varchar(32) NOT NULL,
        kind             varchar(20) NOT NULL,
        object_id        varchar(64) NOT NULL,
        received_at      timestamptz NOT NULL DEFAULT now(),
        notifications    integer NOT NULL DEFAULT 1,
        attempts         integer NOT NULL DEFAULT 0,
        next_attempt_at  timestamptz NOT NULL DEFAULT now(),
        claimed_at       timestamptz,
        CONSTRAINT provider_inbox_object_key UNIQUE (provider, kind, object_id)
      )`);
    await queryRunner.query(`CREATE INDEX provider_inbox_due_idx ON provider_inbox (next_attempt_at)`);
    await queryRunner.query(`
      INSERT INTO provider_inbox (provider, kind, object_id, received_at, attempts, next_attempt_at)
      SELECT 'api-pix', 'pix', end_to_end_id, received_at, attempts, next_attempt_at FROM pix_inbox`);
    await queryRunner.query(`
      INSERT INTO provider_inbox (provider, kind, object_id, received_at, notifications, attempts, next_attempt_at)
      SELECT 'api-pix', kind, resource_id, received_at, notifications, attempts, next_attempt_at FROM automatic_pix_inbox`);
    await queryRunner.query(`DROP TABLE pix_inbox`);
    await queryRunner.query(`DROP TABLE automatic_pix_inbox`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE pix_inbox (
        end_to_end_id    varchar(32) PRIMARY KEY,
        received_at      timestamptz NOT NULL DEFAULT now(),
        attempts         integer NOT NULL DEFAULT 0,
        next_attempt_at  timestamptz NOT NULL DEFAULT now(),
        claimed_at       timestamptz
      )`);
    await queryRunner.query(`CREATE INDEX pix_inbox_due_idx ON pix_inbox (next_attempt_at)`);
    await queryRunner.query(`
      CREATE TABLE automatic_pix_inbox (
        id               serial CONSTRAINT automatic_pix_inbox_pkey PRIMARY KEY,
        kind             varchar(4) NOT NULL CONSTRAINT automatic_pix_inbox_kind_check CHECK (kind IN ('rec', 'cobr')),
        resource_id      varchar(35) NOT NULL,
        received_at      timestamptz NOT NULL DEFAULT now(),
        notifications    integer NOT NULL DEFAULT 1,
        attempts         integer NOT NULL DEFAULT 0,
        next_attempt_at  timestamptz NOT NULL DEFAULT now(),
        claimed_at       timestamptz,
        CONSTRAINT automatic_pix_inbox_resource_key UNIQUE (kind, resource_id)
      )`);
    await queryRunner.query(`CREATE INDEX automatic_pix_inbox_due_idx ON automatic_pix_inbox (next_attempt_at)`);
    await queryRunner.query(`INSERT INTO pix_inbox (end_to_end_id, received_at, attempts, next_attempt_at) SELECT object_id, received_at, attempts, next_attempt_at FROM provider_inbox WHERE provider = 'api-pix' AND kind = 'pix'`);
    await queryRunner.query(`
      INSERT INTO automatic_pix_inbox (kind, resource_id, received_at, notifications, attempts, next_attempt_at)
      SELECT kind, object_id, received_at, notifications, attempts, next_attempt_at FROM provider_inbox WHERE provider = 'api-pix' AND kind IN ('rec', 'cobr')`);
    await queryRunner.query(`DROP TABLE provider_inbox`);
  }
}
