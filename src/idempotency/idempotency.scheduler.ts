import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { IdempotencyService } from './idempotency.service';

/**
 * Every ten minutes: idempotency records older than their 24 h window are deleted. The DELETE takes
 * each row once, so several instances running it together do no harm.
 */
@Injectable()
export class IdempotencyScheduler {
  private readonly logger = new Logger(IdempotencyScheduler.name);

  constructor(private readonly idempotency: IdempotencyService) {}

  @Cron(CronExpression.EVERY_10_MINUTES, { name: 'idempotency-purge' })
  async purge(): Promise<void> {
    try {
      const purged = await this.idempotency.purgeExpired(new Date());
      if (purged > 0) this.logger.log({ purged }, 'Expired idempotency records purged');
    } catch (error) {
      this.logger.error({ err: error }, 'Idempotency purge failed');
    }
  }
}
