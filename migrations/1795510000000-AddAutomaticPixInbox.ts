import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The PSP's Pix Automático notifications (POST <webhook>/rec and <webhook>/cobr), kept before they are
 * answered 200, as the /pix ones are in pix_inbox: the recurrence id or recurring-charge txid each names,
 * once while it waits, checked with the PSP by the inbox worker under a lease (claimed_at). Unlike a Pix,
 * a recurrence or charge changes: a notification arriving while its row is being checked bumps
 * `notifications`, and the row is dropped only if the count is still the one the check started from.
 * A process that dies after the 200 loses nothing.
 */
export class AddAutomaticPixInbox1795510000000 implements MigrationInterface {
  name = 'AddAutomaticPixInbox1795510000000';

  async up(queryRunner: QueryRunner): Promise<void> {
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
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE automatic_pix_inbox`);
  }
}
