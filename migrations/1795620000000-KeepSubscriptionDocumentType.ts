import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 37: a subscription keeps its customer's document type (cpf or cnpj), as sales do, instead of
 * every renewal and Pix Automático call guessing it from the document's length. Filled for the
 * subscriptions made before from the sale that opened each.
 */
export class KeepSubscriptionDocumentType1795620000000 implements MigrationInterface {
  name = 'KeepSubscriptionDocumentType1795620000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE subscriptions ADD COLUMN customer_document_type varchar(4) CONSTRAINT subscriptions_customer_document_type_check CHECK (customer_document_type IN ('cpf', 'cnpj'))`,
    );
    // What the customer sent on the sale that opened it; by the document's length only without one.
    await queryRunner.query(`
      UPDATE subscriptions u SET customer_document_type = COALESCE(
          (SELECT lower(s.customer_document_type) FROM sales s
            WHERE s.subscription_id = u.id AND s.billing_period = 0 AND lower(s.customer_document_type) IN ('cpf', 'cnpj') ORDER BY s.id LIMIT 1),
          CASE length(u.customer_document) WHEN 11 THEN 'cpf' ELSE 'cnpj' END)
       WHERE u.customer_document IS NOT NULL`);
    await queryRunner.query(
      `ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_customer_document_typed_check CHECK ((customer_document IS NULL) = (customer_document_type IS NULL))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE subscriptions DROP COLUMN customer_document_type`);
  }
}
