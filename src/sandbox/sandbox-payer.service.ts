import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { DomainError, InvalidTransitionError } from '../domain/domain-error';
import { AutomaticPixRepository } from '../payments/automatic-pix.repository';
import { AutomaticPixService } from '../payments/automatic-pix.service';
import { recurringChargeTxid } from '../providers/automatic-pix.port';
import { pixTxid } from '../providers/pix-provider.port';
import { SandboxAttemptOutcome, SandboxAutomaticPixProvider } from '../providers/sandbox/sandbox-automatic-pix.provider';
import { SubscriptionResponse } from '../subscriptions/dto/subscription.response';
import { SalesService } from '../sales/sales.service';
import { TransactionResponse } from '../sales/dto/sale.response';
import { SalesRepository } from '../sales/sales.repository';
import { assertOwnedSale } from '../sales/sales.service';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';
import { assertOwnedSubscription, SubscriptionsService } from '../subscriptions/subscriptions.service';

export type PayerDecision = 'AUTHORIZE' | 'REJECT' | 'EXPIRE' | 'REVOKE';

/**
 * The payer's bank in the sandbox's Pix Automático (issue 22): what a customer does in their bank app
 * (authorize, reject, let expire, revoke later) and what their account does with a charge's attempt
 * (paid, or refused for insufficient funds), each applied at once through the same code a PSP's
 * notification goes through.
 */
@Injectable()
export class SandboxPayerService {
  constructor(
    private readonly bank: SandboxAutomaticPixProvider,
    private readonly automaticPix: AutomaticPixService,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly subscriptionReads: SubscriptionsService,
    private readonly sales: SalesRepository,
    private readonly saleReads: SalesService,
    private readonly charges: AutomaticPixRepository,
    private readonly config: AppConfig,
  ) {}

  /** The payer's bank is the sandbox's to play only for a record the sandbox holds; a PSP's payer is real. */
  private assertSandboxPlaysThePayer(provider: string | null): void {
    if (provider !== 'sandbox') throw new DomainError('FORBIDDEN', `Pix Automático is played by the PSP (${provider ?? 'none'}), not by the sandbox`);
  }

  async decide(sellerId: number, subscriptionId: number, decision: PayerDecision, now: Date): Promise<SubscriptionResponse> {
    const subscription = assertOwnedSubscription(await this.subscriptions.findById(subscriptionId), sellerId, subscriptionId);
    if (subscription.automaticPixRecurrenceId) this.assertSandboxPlaysThePayer(subscription.provider);
    if (!subscription.automaticPixRecurrenceId) throw new DomainError('INVALID_TRANSITION', `Subscription ${subscriptionId} is not paid by Pix Automático`);
    if (!(await this.bank.payerDecides(subscription.automaticPixRecurrenceId, decision))) {
      throw new InvalidTransitionError(`authorization ${subscription.automaticPixStatus}`, decision);
    }
    await this.automaticPix.syncAuthorization(subscriptionId, now);
    return this.subscriptionReads.get(sellerId, subscriptionId);
  }

  async settleAttempt(sellerId: number, saleId: number, outcome: SandboxAttemptOutcome, now: Date): Promise<TransactionResponse> {
    const sale = await this.sales.findById(saleId);
    assertOwnedSale(sale, sellerId, saleId);
    this.assertSandboxPlaysThePayer(sale.provider);
    if (!sale.automaticPixSentAt) {
      throw new DomainError('INVALID_TRANSITION', `Sale ${saleId} has no Pix Automático charge at the PSP (renewals are sent 4 days before they are due)`);
    }
    if (!(await this.bank.settleAttempt(recurringChargeTxid(saleId), outcome, now))) {
      throw new InvalidTransitionError(`${sale.status} with no attempt scheduled`, outcome);
    }
    await this.automaticPix.syncCharges([saleId], now);
    return this.saleReads.transaction(sellerId, saleId);
  }

  /**
   * A sale's PIX about to be paid in the sandbox: when its QR is a journey-3 composite one, the payer's
   * bank approves the recurrence with the payment, applied before the payment is (the seller's own
   * PENDENTE sale only).
   */
  async payingFirstCharge(sellerId: number, saleId: number, now: Date): Promise<void> {
    const sale = await this.sales.findById(saleId);
    if (!sale?.subscriptionId || sale.provider !== 'sandbox' || sale.sellerId !== sellerId || sale.status !== 'PENDENTE') return;
    const recurrenceId = await this.bank.recurrenceOfFirstCharge(pixTxid(saleId));
    if (!recurrenceId || !(await this.bank.payerDecides(recurrenceId, 'AUTHORIZE'))) return;
    await this.automaticPix.syncAuthorization(sale.subscriptionId, now);
  }

  /** The scheduler route at `now`: every attempt due by then that nothing settled is paid (the payer's account has the money). */
  async collectDue(sellerId: number, now: Date): Promise<void> {
    const open = await this.charges.openChargeIds(sellerId, 'sandbox');
    const paid = await this.bank.collectDue(open.map(recurringChargeTxid), now);
    await this.automaticPix.syncCharges(
      open.filter((saleId) => paid.includes(recurringChargeTxid(saleId))),
      now,
    );
  }
}
