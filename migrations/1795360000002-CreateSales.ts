import { MigrationInterface, QueryRunner } from 'typeorm';

const STATUSES = `'PENDENTE', 'EM_PROCESSAMENTO', 'PAGO', 'RECUSADO', 'FALHA', 'CANCELADO', 'ESTORNADO', 'CHARGEBACK', 'MED'`;
const METHODS = `'CREDIT_CARD', 'DEBIT_CARD', 'BOLETO', 'PIX', 'TRANSFER'`;

/** Sales and their items (spec 2.1-2.3). Money in cents; card data only as a provider token, last four and brand. */
export class CreateSales1795360000002 implements MigrationInterface {
  name = 'CreateSales1795360000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE sales (
        id                        serial PRIMARY KEY,
        seller_id                 integer NOT NULL CONSTRAINT sales_seller_fk REFERENCES sellers (id),
        status                    varchar(20) NOT NULL,
        payment_method            varchar(20) NOT NULL,
        amount_cents              bigint NOT NULL,
        system_fee_cents          bigint,
        net_amount_cents          bigint,
        reserve_amount_cents      bigint,
        reserve_release_due_at    timestamptz,
        reserve_settled_at        timestamptz,
        installments              smallint,
        customer_name             varchar(200) NOT NULL,
        customer_email            varchar(254) NOT NULL,
        customer_document_type    varchar(4),
        customer_document_number  varchar(14),
        customer_phone            varchar(20),
        card_token                varchar(128),
        card_last_four            char(4),
        card_brand                varchar(20),
        pix_code                  text,
        pix_receiver_key          varchar(77),
        boleto_code               char(47),
        expires_at                timestamptz,
        shipping                  jsonb,
        postback_url              varchar(2048),
        tracking                  jsonb NOT NULL DEFAULT '{}'::jsonb,
        metadata                  jsonb,
        external_transaction_id   varchar(64),
        reversal_reason           varchar(30),
        completed_at              timestamptz,
        created_at                timestamptz NOT NULL DEFAULT now(),
        updated_at                timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT sales_status_check CHECK (status IN (${STATUSES})),
        CONSTRAINT sales_payment_method_check CHECK (payment_method IN (${METHODS})),
        CONSTRAINT sales_amount_positive_check CHECK (amount_cents > 0),
        CONSTRAINT sales_fees_add_up_check CHECK (
          (system_fee_cents IS NULL AND net_amount_cents IS NULL)
          OR (system_fee_cents >= 0 AND net_amount_cents >= 0 AND system_fee_cents + net_amount_cents = amount_cents)),
        CONSTRAINT sales_reserve_check CHECK (reserve_amount_cents IS NULL OR (reserve_amount_cents >= 0 AND reserve_amount_cents <= net_amount_cents)),
        CONSTRAINT sales_installments_check CHECK (installments IS NULL OR installments BETWEEN 1 AND 12),
        CONSTRAINT sales_reversal_reason_check CHECK (reversal_reason IN ('REFUNDED', 'CHARGEBACK_CONFIRMED', 'MED_LOST'))
      )`);
    await queryRunner.query(`CREATE INDEX sales_seller_idx ON sales (seller_id, id)`);
    await queryRunner.query(
      `CREATE INDEX sales_expiring_idx ON sales (expires_at) WHERE status = 'PENDENTE' AND expires_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX sales_reserve_due_idx ON sales (reserve_release_due_at) WHERE reserve_settled_at IS NULL AND reserve_release_due_at IS NOT NULL`,
    );

    await queryRunner.query(`
      CREATE TABLE sale_items (
        id                serial PRIMARY KEY,
        sale_id           integer NOT NULL CONSTRAINT sale_items_sale_fk REFERENCES sales (id),
        position          smallint NOT NULL,
        title             varchar(255) NOT NULL,
        unit_price_cents  bigint NOT NULL,
        quantity          integer NOT NULL,
        tangible          boolean NOT NULL,
        product_id        integer,
        plan_id           varchar(100),
        plan_name         varchar(255),
        external_id       varchar(100),
        CONSTRAINT sale_items_unit_price_check CHECK (unit_price_cents >= 0),
        CONSTRAINT sale_items_quantity_check CHECK (quantity > 0),
        CONSTRAINT sale_items_position_unique UNIQUE (sale_id, position)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE sale_items`);
    await queryRunner.query(`DROP TABLE sales`);
  }
}
