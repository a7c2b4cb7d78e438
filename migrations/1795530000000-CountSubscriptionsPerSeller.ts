import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How many subscriptions each seller has in each status, kept by PostgreSQL itself (issue 24): the first
 * page of GET /api/subscriptions answers spec 4.7's `pagination.total` from a few rows of
 * subscription_counts instead of counting the seller's subscriptions (about 10 ms of PostgreSQL at
 * 100,000). Statement-level triggers on subscriptions append one row per (seller, status) a statement
 * changed, with the signed number of subscriptions it added or took away, in the same transaction as the
 * change: rows are only ever inserted, so concurrent writers never wait for one another, nor deadlock,
 * on a shared counter. The seller's total is the sum of its rows, an index-only range of
 * subscription_counts_seller_idx; SubscriptionsRepository.compactCounts folds each seller's rows back to
 * one per status every minute.
 */
export class CountSubscriptionsPerSeller1795530000000 implements MigrationInterface {
  name = 'CountSubscriptionsPerSeller1795530000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE subscription_counts (
        id         bigserial PRIMARY KEY,
        seller_id  integer NOT NULL CONSTRAINT subscription_counts_seller_fk REFERENCES sellers (id),
        status     varchar(10) NOT NULL,
        delta      bigint NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX subscription_counts_seller_idx ON subscription_counts (seller_id, status) INCLUDE (delta)`);
    await queryRunner.query(`
      CREATE FUNCTION subscriptions_counted_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO subscription_counts (seller_id, status, delta)
        SELECT seller_id, status, count(*) FROM added GROUP BY seller_id, status ORDER BY seller_id, status;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE FUNCTION subscriptions_counted_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO subscription_counts (seller_id, status, delta)
        SELECT seller_id, status, sum(delta) FROM (
          SELECT b.seller_id, b.status, -1 AS delta FROM before_rows b JOIN after_rows a ON a.id = b.id
           WHERE (a.seller_id, a.status) IS DISTINCT FROM (b.seller_id, b.status)
          UNION ALL
          SELECT a.seller_id, a.status, 1 FROM before_rows b JOIN after_rows a ON a.id = b.id
           WHERE (a.seller_id, a.status) IS DISTINCT FROM (b.seller_id, b.status)) AS moved
        GROUP BY seller_id, status HAVING sum(delta) <> 0 ORDER BY seller_id, status;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE FUNCTION subscriptions_counted_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO subscription_counts (seller_id, status, delta)
        SELECT seller_id, status, -count(*) FROM removed GROUP BY seller_id, status ORDER BY seller_id, status;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER subscriptions_counted_insert AFTER INSERT ON subscriptions
      REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION subscriptions_counted_insert()`);
    await queryRunner.query(`
      CREATE TRIGGER subscriptions_counted_update AFTER UPDATE ON subscriptions
      REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows FOR EACH STATEMENT EXECUTE FUNCTION subscriptions_counted_update()`);
    await queryRunner.query(`
      CREATE TRIGGER subscriptions_counted_delete AFTER DELETE ON subscriptions
      REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION subscriptions_counted_delete()`);
    // The subscriptions already there, counted in the transaction that created the triggers: CREATE TRIGGER
    // holds off every write to subscriptions until it commits, so each is counted once, here or by a trigger.
    await queryRunner.query(`
      INSERT INTO subscription_counts (seller_id, status, delta)
      SELECT seller_id, status, count(*) FROM subscriptions GROUP BY seller_id, status ORDER BY seller_id, status`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER subscriptions_counted_delete ON subscriptions`);
    await queryRunner.query(`DROP TRIGGER subscriptions_counted_update ON subscriptions`);
    await queryRunner.query(`DROP TRIGGER subscriptions_counted_insert ON subscriptions`);
    await queryRunner.query(`DROP FUNCTION subscriptions_counted_delete()`);
    await queryRunner.query(`DROP FUNCTION subscriptions_counted_update()`);
    await queryRunner.query(`DROP FUNCTION subscriptions_counted_insert()`);
    await queryRunner.query(`DROP TABLE subscription_counts`);
  }
}
