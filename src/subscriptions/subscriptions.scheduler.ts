import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { SubscriptionsService } from './subscriptions.service';

/**
 * Every minute: renewals, card retries on the dunning schedule, PAST_DUE grace handling, PIX renewals
 * overdue and cancellations at period end. Work is claimed with FOR UPDATE SKIP LOCKED and a lease,
 * and each (subscription, period, attempt) is one sale by a unique index, so several instances never
 * charge a period twice.
 */
@Injectable()
export class SubscriptionsScheduler {
  private readonly logger = new Logger(SubscriptionsScheduler.name);
  private running = false;

  constructor(private readonly subscriptions: SubscriptionsService) {}

  @Cron(CronExpression.EVERY_MINUTE, { name: 'subscription-billing' })
  async runBilling(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const summary = await this.subscriptions.runBilling(new Date(), null);
      if (Object.values(summary).some((count) => count > 0)) this.logger.log(summary, 'Subscription billing done');
    } catch (error) {
      this.logger.error({ err: error }, 'Subscription billing failed');
    } finally {
      this.running = false;
    }
  }
}
