import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { ExclusiveJob } from '../common/jobs/exclusive-job';
import { CashoutService, PayoutRecoverySummary } from './cashout.service';

/**
 * Every minute: open withdrawals with no news from their payout provider for a while are asked about
 * (CashoutService.recoverPayouts): what the provider says is applied, a payout it never received is sent
 * again under the same reference. Each is leased with FOR UPDATE SKIP LOCKED first, and the provider pays
 * a reference at most once, so several instances never ask at once nor pay twice.
 */
@Injectable()
export class CashoutScheduler {
  private readonly job = new ExclusiveJob<PayoutRecoverySummary>(new Logger(CashoutScheduler.name), 'Payout recovery', (r) => r.sent + r.recovered > 0);

  constructor(private readonly cashouts: CashoutService) {}

  @Cron(CronExpression.EVERY_MINUTE, { name: 'payout-recovery' })
  recoverPayouts(): Promise<void> {
    return this.job.run(() => this.cashouts.recoverPayouts(null));
  }
}
