import { MigrationInterface, QueryRunner } from 'typeorm';

/** Written out here as it is in SubscriptionsRepository.claimDue: an applied migration never changes. */
const BILLING_DUE_AT = `LEAST(scheduled_cancellation_date,
  CASE WHEN status = 'PAST_DUE' THEN CASE WHEN payment_method = 'CREDIT_CARD' THEN next_retry_at END
       WHEN awaiting_payment_since IS NULL THEN next_billing_date END)`;

/**
 * The billing job's claim (issue 11) reaches the subscriptions with work due through indexes ordered by
 * when that work falls due, so that each claim of a batch reads that batch and not the rows billed
 * before it. One is on BILLING_DUE_AT, the earliest date the billing sets itself on which an action of
 * domain/subscription-billing.ts's dueBillingAction falls due (a scheduled cancellation; a card retry
 * while PAST_DUE; the next billing date while no PIX renewal awaits payment); one is on each date that
 * the dunning configuration offsets (the grace period of a PAST_DUE subscription, a PIX renewal overdue).
 * The index on next_billing_date alone, which no query used, goes.
 */
export class AddSubscriptionBillingDueIndexes1795425000000 implements MigrationInterface {
  name = 'AddSubscriptionBillingDueIndexes1795425000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX subscriptions_billing_due_idx ON subscriptions ((${BILLING_DUE_AT})) WHERE status IN ('ACTIVE', 'TRIALING', 'PAST_DUE')`);
    await queryRunner.query(`CREATE INDEX subscriptions_past_due_idx ON subscriptions (past_due_since) WHERE status = 'PAST_DUE'`);
    await queryRunner.query(
      `CREATE INDEX subscriptions_awaiting_payment_idx ON subscriptions (awaiting_payment_since)
        WHERE status IN ('ACTIVE', 'TRIALING') AND awaiting_payment_since IS NOT NULL`,
    );
    await queryRunner.query(`DROP INDEX subscriptions_billing_idx`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX subscriptions_billing_idx ON subscriptions (next_billing_date) WHERE status IN ('ACTIVE', 'TRIALING', 'PAST_DUE', 'PAUSED')`,
    );
    await queryRunner.query(`DROP INDEX subscriptions_awaiting_payment_idx`);
    await queryRunner.query(`DROP INDEX subscriptions_past_due_idx`);
    await queryRunner.query(`DROP INDEX subscriptions_billing_due_idx`);
  }
}
