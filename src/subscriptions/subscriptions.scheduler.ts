import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { ExclusiveJob } from '../common/jobs/exclusive-job';
import { BillingSummary, SubscriptionsService } from './subscriptions.service';

/**
 * Every minute: renewals, card retries on the dunning schedule, PAST_DUE grace handling, PIX renewals
 * overdue and cancellations at period end. Work is claimed with FOR UPDATE SKIP LOCKED and a lease,
 * and each (subscription, period, attempt) is one sale by a unique index, so several instances never
 * charge a period twice.
 */
@Injectable()
export class SubscriptionsScheduler {
  private readonly job = new ExclusiveJob<BillingSummary>(new Logger(SubscriptionsScheduler.name), 'Subscription billing', (s) =>
    Object.values(s).some((count) => count > 0),
  );

  constructor(private readonly subscriptions: SubscriptionsService) {}

  @Cron(CronExpression.EVERY_MINUTE, { name: 'subscription-billing' })
  runBilling(): Promise<void> {
    return this.job.run(() => this.subscriptions.runBilling(new Date(), null));
  }
}
