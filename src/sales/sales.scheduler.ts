import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { SaleTransitionsService } from './sale-transitions.service';

/**
 * Every minute: PIX and boletos past their expiry are cancelled, card reserves past their holding
 * period are released, card sales left between their two commits are resolved with the provider. Work
 * is claimed with FOR UPDATE SKIP LOCKED (and a lease for the recovery), so several instances never do
 * it twice.
 */
@Injectable()
export class SalesScheduler {
  private readonly logger = new Logger(SalesScheduler.name);
  private running = false;

  constructor(private readonly transitions: SaleTransitionsService) {}

  @Cron(CronExpression.EVERY_MINUTE, { name: 'sales-due-work' })
  async runDueWork(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const summary = await this.transitions.runDueWork(new Date(), null);
      if (summary.expiredSales || summary.releasedReserves || summary.recoveredCharges) this.logger.log(summary, 'Sales due work done');
    } catch (error) {
      this.logger.error({ err: error }, 'Sales due work failed');
    } finally {
      this.running = false;
    }
  }
}
