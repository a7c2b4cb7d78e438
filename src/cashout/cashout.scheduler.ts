import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { ExclusiveJob } from '../common/jobs/exclusive-job';
import { CashoutService } from './cashout.service';

/**
 * Every minute: withdrawals whose payout request never reached the provider are sent. Each is leased
 * with FOR UPDATE SKIP LOCKED first, and the provider pays a reference at most once, so several
 * instances never pay twice.
 */
@Injectable()
export class CashoutScheduler {
  private readonly job = new ExclusiveJob<{ sent: number }>(new Logger(CashoutScheduler.name), 'Payout recovery', (r) => r.sent > 0);

  constructor(private readonly cashouts: CashoutService) {}

  @Cron(CronExpression.EVERY_MINUTE, { name: 'payout-recovery' })
  recoverPayouts(): Promise<void> {
    return this.job.run(async () => ({ sent: await this.cashouts.recoverPayouts(null) }));
  }
}
