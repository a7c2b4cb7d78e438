import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { ExclusiveJob } from '../common/jobs/exclusive-job';
import { SubscriptionsRepository } from './subscriptions.repository';

/** Every minute: each seller's rows of subscription_counts folded to one per status, so that a total reads a few rows. */
@Injectable()
export class SubscriptionsScheduler {
  private readonly job = new ExclusiveJob<{ folded: number }>(new Logger(SubscriptionsScheduler.name), 'Subscription counts compaction', () => false);

  constructor(private readonly subscriptions: SubscriptionsRepository) {}

  @Cron(CronExpression.EVERY_MINUTE, { name: 'subscription-counts' })
  compactCounts(): Promise<void> {
    return this.job.run(async () => ({ folded: await this.subscriptions.compactCounts() }));
  }
}
