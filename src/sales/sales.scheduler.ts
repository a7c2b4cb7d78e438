import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { ExclusiveJob } from '../common/jobs/exclusive-job';
import { SaleDueWorkSummary, SaleTransitionsService } from './sale-transitions.service';

/**
 * Every minute: PIX and boletos past their expiry are cancelled, card reserves past their holding
 * period are released, card sales left between their two commits are resolved with the provider. Work
 * is claimed with FOR UPDATE SKIP LOCKED (and a lease for the recovery), so several instances never do
 * it twice.
 */
@Injectable()
export class SalesScheduler {
  private readonly job = new ExclusiveJob<SaleDueWorkSummary>(new Logger(SalesScheduler.name), 'Sales due work', (s) => s.expiredSales + s.releasedReserves + s.recoveredCharges + s.refundedCharges > 0);

  constructor(private readonly transitions: SaleTransitionsService) {}

  @Cron(CronExpression.EVERY_MINUTE, { name: 'sales-due-work' })
  runDueWork(): Promise<void> {
    return this.job.run(() => this.transitions.runDueWork(new Date(), null));
  }
}
