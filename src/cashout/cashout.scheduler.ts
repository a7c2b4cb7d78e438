import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { CashoutService } from './cashout.service';

/**
 * Every minute: withdrawals whose payout request never reached the provider are sent. Each is leased
 * with FOR UPDATE SKIP LOCKED first, and the provider pays a reference at most once, so several
 * instances never pay twice.
 */
@Injectable()
export class CashoutScheduler {
  private readonly logger = new Logger(CashoutScheduler.name);
  private running = false;

  constructor(private readonly cashouts: CashoutService) {}

  @Cron(CronExpression.EVERY_MINUTE, { name: 'payout-recovery' })
  async recoverPayouts(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const sent = await this.cashouts.recoverPayouts(null);
      if (sent > 0) this.logger.log({ sent }, 'Unsent payouts sent');
    } catch (error) {
      this.logger.error({ err: error }, 'Payout recovery failed');
    } finally {
      this.running = false;
    }
  }
}
