import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { ExclusiveJob } from '../common/jobs/exclusive-job';
import { NotificationsService } from './notifications.service';

/** Every hour: delivered postbacks and webhooks past OUTBOX_RETENTION_DAYS are deleted with their attempts (under an advisory lock). */
@Injectable()
export class NotificationsScheduler {
  private readonly job = new ExclusiveJob<{ purged: number }>(new Logger(NotificationsScheduler.name), 'Outbox retention', (r) => r.purged > 0);

  constructor(private readonly notifications: NotificationsService) {}

  @Cron(CronExpression.EVERY_HOUR, { name: 'outbox-retention' })
  purge(): Promise<void> {
    return this.job.run(async () => ({ purged: await this.notifications.purgeDelivered(new Date()) }));
  }
}
