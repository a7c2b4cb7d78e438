import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Spec 2.6 types a subscription's `product.id` as an integer, never null. Each seller gets a catalog of
 * the products its subscriptions are for: the productIds it sends (assigned_by_gateway false) and, for a
 * sale item without one, a product the gateway keeps, named after the item's title, created on first use
 * and reused after (assigned_by_gateway true, one per title). A gateway id is one above the highest id of
 * the seller's catalog, so it never takes a productId the seller had used. Existing subscriptions without
 * a product are given theirs here, then product_id becomes NOT NULL.
 */
export class CreateSubscriptionProducts1795440000000 implements MigrationInterface {
  name = 'CreateSubscriptionProducts1795440000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE subscription_products (
        seller_id            integer      NOT NULL,
        id                   integer      NOT NULL,
        name                 varchar(255) NOT NULL,
        assigned_by_gateway  boolean      NOT NULL,
        created_at           timestamptz  NOT NULL DEFAULT now(),
        CONSTRAINT subscription_products_pkey PRIMARY KEY (seller_id, id),
        CONSTRAINT subscription_products_seller_fkey FOREIGN KEY (seller_id) REFERENCES sellers (id),
        CONSTRAINT subscription_products_id_positive CHECK (id > 0)
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX subscription_products_gateway_name_key ON subscription_products (seller_id, name) WHERE assigned_by_gateway`,
    );
    await queryRunner.query(`
      INSERT INTO subscription_products (seller_id, id, name, assigned_by_gateway)
      SELECT seller_id, product_id, min(product_name), false FROM subscriptions WHERE product_id IS NOT NULL GROUP BY seller_id, product_id`);
    await queryRunner.query(`
      INSERT INTO subscription_products (seller_id, id, name, assigned_by_gateway)
      SELECT titles.seller_id,
             COALESCE((SELECT max(p.id) FROM subscription_products p WHERE p.seller_id = titles.seller_id), 0)
               + row_number() OVER (PARTITION BY titles.seller_id ORDER BY titles.product_name),
             titles.product_name, true
        FROM (SELECT DISTINCT seller_id, product_name FROM subscriptions WHERE product_id IS NULL) AS titles`);
    await queryRunner.query(`
      UPDATE subscriptions s SET product_id = p.id
        FROM subscription_products p
       WHERE s.product_id IS NULL AND p.seller_id = s.seller_id AND p.assigned_by_gateway AND p.name = s.product_name`);
    await queryRunner.query(`ALTER TABLE subscriptions ALTER COLUMN product_id SET NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE subscriptions ALTER COLUMN product_id DROP NOT NULL`);
    await queryRunner.query(`
      UPDATE subscriptions s SET product_id = NULL
        FROM subscription_products p
       WHERE p.seller_id = s.seller_id AND p.id = s.product_id AND p.assigned_by_gateway`);
    await queryRunner.query(`DROP TABLE subscription_products`);
  }
}
