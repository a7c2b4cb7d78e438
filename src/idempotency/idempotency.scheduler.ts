import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { ExclusiveJob } from '../common/jobs/exclusive-job';
import { IdempotencyService } from './idempotency.service';

/**
 * Every ten minutes: idempotency records older than their 24 h window are deleted. The DELETE takes
 * each row once, so several instances running it together do no harm.
 */
@Injectable()
export class IdempotencyScheduler {
  private readonly job = new ExclusiveJob<{ purged: number }>(new Logger(IdempotencyScheduler.name), 'Idempotency purge', (r) => r.purged > 0);

  constructor(private readonly idempotency: IdempotencyService) {}

  @Cron(CronExpression.EVERY_10_MINUTES, { name: 'idempotency-purge' })
  purge(): Promise<void> {
    return this.job.run(async () => ({ purged: await this.idempotency.purgeExpired(new Date()) }));
  }
}
