import { MigrationInterface, QueryRunner } from 'typeorm';

const STATUSES = `'PENDING', 'ACTIVE', 'TRIALING', 'PAUSED', 'CANCELLED', 'PAST_DUE', 'EXPIRED'`;
const CYCLES = `'WEEKLY', 'BIWEEKLY', 'MONTHLY', 'QUARTERLY', 'SEMIANNUAL', 'YEARLY'`;

/**
 * Subscriptions (spec 2.4-2.7, 3.2). Each charge of a subscription is a sale that points back at it,
 * with its period and attempt: the unique index on (subscription, period, attempt) makes each attempt
 * at charging a period happen once, whichever instance runs the billing.
 */
export class CreateSubscriptions1795380000000 implements MigrationInterface {
  name = 'CreateSubscriptions1795380000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE subscriptions (
        id                           serial PRIMARY KEY,
        seller_id                    integer NOT NULL CONSTRAINT subscriptions_seller_fk REFERENCES sellers (id),
        status                       varchar(10) NOT NULL,
        billing_cycle                varchar(10) NOT NULL,
        amount_cents                 bigint NOT NULL,
        payment_method               varchar(12) NOT NULL,
        card_token                   varchar(128),
        card_last_four               char(4),
        card_brand                   varchar(20),
        customer_name                varchar(200) NOT NULL,
        customer_email               varchar(254) NOT NULL,
        customer_document            varchar(14),
        customer_phone               varchar(20),
        product_id                   integer,
        product_name                 varchar(255) NOT NULL,
        metadata                     jsonb NOT NULL DEFAULT '{}'::jsonb,
        postback_url                 varchar(2048),
        trial_days                   smallint NOT NULL DEFAULT 0,
        trial_ends_at                timestamptz,
        next_billing_date            timestamptz,
        started_at                   timestamptz,
        cancelled_at                 timestamptz,
        cancellation_reason          varchar(500),
        scheduled_cancellation_date  timestamptz,
        paused_at                    timestamptz,
        resumed_at                   timestamptz,
        current_period               integer NOT NULL DEFAULT 0,
        period_due_at                timestamptz,
        period_attempts              integer NOT NULL DEFAULT 0,
        next_retry_at                timestamptz,
        past_due_since               timestamptz,
        awaiting_payment_since       timestamptz,
        last_payment_date            timestamptz,
        last_payment_status          varchar(10),
        total_billings               integer NOT NULL DEFAULT 0,
        successful_billings          integer NOT NULL DEFAULT 0,
        failed_billings              integer NOT NULL DEFAULT 0,
        billing_claimed_at           timestamptz,
        created_at                   timestamptz NOT NULL DEFAULT now(),
        updated_at                   timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT subscriptions_status_check CHECK (status IN (${STATUSES})),
        CONSTRAINT subscriptions_cycle_check CHECK (billing_cycle IN (${CYCLES})),
        CONSTRAINT subscriptions_method_check CHECK (payment_method IN ('PIX', 'CREDIT_CARD')),
        CONSTRAINT subscriptions_amount_check CHECK (amount_cents > 0),
        CONSTRAINT subscriptions_trial_days_check CHECK (trial_days BETWEEN 0 AND 90),
        CONSTRAINT subscriptions_counters_check CHECK (
          successful_billings >= 0 AND failed_billings >= 0 AND successful_billings + failed_billings <= total_billings)
      )`);
    await queryRunner.query(`CREATE INDEX subscriptions_seller_idx ON subscriptions (seller_id, id)`);
    await queryRunner.query(`CREATE INDEX subscriptions_seller_status_idx ON subscriptions (seller_id, status)`);
    await queryRunner.query(
      `CREATE INDEX subscriptions_billing_idx ON subscriptions (next_billing_date) WHERE status IN ('ACTIVE', 'TRIALING', 'PAST_DUE', 'PAUSED')`,
    );

    await queryRunner.query(`ALTER TABLE sales ADD COLUMN subscription_id integer CONSTRAINT sales_subscription_fk REFERENCES subscriptions (id)`);
    await queryRunner.query(`ALTER TABLE sales ADD COLUMN billing_period integer`);
    await queryRunner.query(`ALTER TABLE sales ADD COLUMN billing_attempt integer`);
    await queryRunner.query(`
      ALTER TABLE sales ADD CONSTRAINT sales_subscription_billing_check CHECK (
        (subscription_id IS NULL AND billing_period IS NULL AND billing_attempt IS NULL)
        OR (subscription_id IS NOT NULL AND billing_period >= 0 AND billing_attempt >= 0))`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX sales_subscription_period_attempt_unique ON sales (subscription_id, billing_period, billing_attempt) WHERE subscription_id IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX sales_subscription_period_attempt_unique`);
    await queryRunner.query(`ALTER TABLE sales DROP CONSTRAINT sales_subscription_billing_check`);
    await queryRunner.query(`ALTER TABLE sales DROP COLUMN billing_attempt`);
    await queryRunner.query(`ALTER TABLE sales DROP COLUMN billing_period`);
    await queryRunner.query(`ALTER TABLE sales DROP COLUMN subscription_id`);
    await queryRunner.query(`DROP TABLE subscriptions`);
  }
}
