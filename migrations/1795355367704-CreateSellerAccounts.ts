import { MigrationInterface, QueryRunner } from 'typeorm';

/** Sellers, their API key pairs, their balance, their withdrawal webhooks and the platform settings. */
export class CreateSellerAccounts1795355367704 implements MigrationInterface {
  name = 'CreateSellerAccounts1795355367704';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE sellers (
        id                                serial PRIMARY KEY,
        name                              varchar(200) NOT NULL,
        email                             varchar(254) NOT NULL,
        phone                             varchar(20),
        legal_name                        varchar(200) NOT NULL,
        commercial_name                   varchar(200),
        invoice_descriptor                varchar(22) NOT NULL,
        blocked                           boolean NOT NULL DEFAULT false,
        uploaded_documents                boolean NOT NULL DEFAULT false,
        is_email_verified                 boolean NOT NULL DEFAULT false,
        is_phone_verified                 boolean NOT NULL DEFAULT false,
        is_admin                          boolean NOT NULL DEFAULT false,
        is_master                         boolean NOT NULL DEFAULT false,
        document_type                     varchar(4),
        document_number                   varchar(14),
        is_credit_card_available          boolean NOT NULL DEFAULT true,
        is_boleto_available               boolean NOT NULL DEFAULT true,
        is_pix_available                  boolean NOT NULL DEFAULT true,
        transfer_enabled                  boolean NOT NULL DEFAULT true,
        anticipation_enabled              boolean NOT NULL DEFAULT false,
        anticipatable_volume_bps          integer NOT NULL DEFAULT 0,
        anticipation_price_bps            integer NOT NULL DEFAULT 0,
        min_anticipatable_days            integer NOT NULL DEFAULT 0,
        fee_overrides                     jsonb NOT NULL DEFAULT '{}'::jsonb,
        details                           jsonb NOT NULL DEFAULT '{}'::jsonb,
        address                           jsonb,
        postback_secret_encrypted         text NOT NULL,
        created_at                        timestamptz NOT NULL DEFAULT now(),
        updated_at                        timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT sellers_document_type_check CHECK (document_type IN ('cpf', 'cnpj')),
        CONSTRAINT sellers_document_complete_check CHECK ((document_type IS NULL) = (document_number IS NULL)),
        CONSTRAINT sellers_anticipatable_volume_check CHECK (anticipatable_volume_bps BETWEEN 0 AND 10000),
        CONSTRAINT sellers_anticipation_price_check CHECK (anticipation_price_bps BETWEEN 0 AND 10000),
        CONSTRAINT sellers_min_anticipatable_days_check CHECK (min_anticipatable_days >= 0)
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX sellers_email_unique ON sellers (lower(email))`);

    await queryRunner.query(`
      CREATE TABLE api_keys (
        id                 serial PRIMARY KEY,
        seller_id          integer NOT NULL CONSTRAINT api_keys_seller_fk REFERENCES sellers (id),
        public_key         varchar(64) NOT NULL CONSTRAINT api_keys_public_key_unique UNIQUE,
        private_key_hash   char(64) NOT NULL,
        created_at         timestamptz NOT NULL DEFAULT now(),
        revoked_at         timestamptz,
        CONSTRAINT api_keys_public_key_format_check CHECK (public_key LIKE 'pk\\_%')
      )`);
    await queryRunner.query(`CREATE INDEX api_keys_seller_idx ON api_keys (seller_id)`);

    await queryRunner.query(`
      CREATE TABLE balances (
        seller_id        integer PRIMARY KEY CONSTRAINT balances_seller_fk REFERENCES sellers (id),
        available_cents  bigint NOT NULL DEFAULT 0,
        blocked_cents    bigint NOT NULL DEFAULT 0,
        updated_at       timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT balances_blocked_non_negative_check CHECK (blocked_cents >= 0)
      )`);

    await queryRunner.query(`
      CREATE TABLE withdrawal_webhooks (
        id          serial PRIMARY KEY,
        seller_id   integer NOT NULL CONSTRAINT withdrawal_webhooks_seller_fk REFERENCES sellers (id),
        url         varchar(2048) NOT NULL,
        type        varchar(20) NOT NULL DEFAULT 'WITHDRAWAL',
        created_at  timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT withdrawal_webhooks_type_check CHECK (type = 'WITHDRAWAL')
      )`);
    await queryRunner.query(`CREATE INDEX withdrawal_webhooks_seller_idx ON withdrawal_webhooks (seller_id)`);

    await queryRunner.query(`
      CREATE TABLE platform_settings (
        id                        smallint PRIMARY KEY DEFAULT 1,
        api_withdrawals_enabled   boolean NOT NULL DEFAULT true,
        updated_at                timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT platform_settings_single_row_check CHECK (id = 1)
      )`);
    await queryRunner.query(`INSERT INTO platform_settings (id) VALUES (1)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE platform_settings`);
    await queryRunner.query(`DROP TABLE withdrawal_webhooks`);
    await queryRunner.query(`DROP TABLE balances`);
    await queryRunner.query(`DROP TABLE api_keys`);
    await queryRunner.query(`DROP TABLE sellers`);
  }
}
