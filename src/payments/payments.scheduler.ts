import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { ExclusiveJob } from '../common/jobs/exclusive-job';
import { BillingService, BillingSummary } from './billing.service';
import { ChargesService, SaleDueWorkSummary } from './charges.service';

/**
 * The money wing's jobs, every minute, in every instance: each claims its work (FOR UPDATE SKIP LOCKED,
 * and the lease of src/database/leases.ts where the work outlives a transaction), so instances share
 * it and never do a piece twice.
 * - Sales: PIX and boletos past their expiry cancelled, card reserves past their holding period
 *   released (what is left pending at a provider is the janitor's: src/janitor).
 * - Billing: renewals, card retries on the dunning schedule, PAST_DUE grace handling, PIX renewals
 *   overdue and cancellations at period end; each (subscription, period, attempt) is one sale by a
 *   unique index, so a period is never charged twice.
 * Pix Automático has no job of its own: writing a renewal when it is due is billing's (above); all that its
 * pass did after that was a PSP operation to settle (send, ask about, close), so it is a kind of the janitor.
 */
@Injectable()
export class PaymentsScheduler {
  private readonly salesJob = new ExclusiveJob<SaleDueWorkSummary>(new Logger('SalesScheduler'), 'Sales due work', (s) => s.expiredSales + s.releasedReserves > 0);
  private readonly billingJob = new ExclusiveJob<BillingSummary>(new Logger('SubscriptionsScheduler'), 'Subscription billing', (s) => Object.values(s).some((count) => count > 0));

  constructor(
    private readonly charges: ChargesService,
    private readonly billing: BillingService,
  ) {}

  @Cron(CronExpression.EVERY_MINUTE, { name: 'sales-due-work' })
  runDueWork(): Promise<void> {
    return this.salesJob.run(() => this.charges.runDueWork(new Date(), null));
  }

  @Cron(CronExpression.EVERY_MINUTE, { name: 'subscription-billing' })
  runBilling(): Promise<void> {
    return this.billingJob.run(() => this.billing.runBilling(new Date(), null));
  }
}
