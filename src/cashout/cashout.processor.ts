import { Process, Processor } from '@nestjs/bull';
import { Job } from 'bull';
import { CashoutService, PAYOUTS_QUEUE, REQUEST_PAYOUT_JOB } from './cashout.service';

/** Thin Bull consumer: one job, one payout request (idempotent by the withdrawal's id). */
@Processor(PAYOUTS_QUEUE)
export class CashoutProcessor {
  constructor(private readonly withdrawals: CashoutService) {}

  @Process({ name: REQUEST_PAYOUT_JOB, concurrency: 5 })
  async requestPayout(job: Job<{ withdrawalId: number }>): Promise<void> {
    await this.withdrawals.sendPayout(job.data.withdrawalId);
  }
}
