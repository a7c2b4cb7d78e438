import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { InvalidTransitionError } from '../domain/domain-error';
import { RefundsService, toRefundResponse } from '../payments/refunds.service';
import { RefundResponse } from '../payments/dto/refund.dto';
import { CardRefundRefusedError, chargeReference } from '../providers/card-provider.port';
import { SandboxPaymentProvider } from '../providers/sandbox/sandbox-payment.provider';
import { SandboxPaymentsRecord } from '../providers/sandbox/sandbox-payments.record';
import { SandboxPayoutProvider } from '../providers/sandbox/sandbox-payout.provider';
import { WithdrawalEvent } from '../domain/withdrawal-status';
import { DomainError } from '../domain/domain-error';
import { SaleEntity } from '../sales/entities/sale.entity';
import { SalesRepository } from '../sales/sales.repository';
import { assertOwnedSale } from '../sales/sales.service';

/**
 * The sandbox is a provider like the others (style.md): its routes move only the records it holds. A PIX
 * sale is held by the provider written on it when it was made (`provider`, ProviderRegistry). A sale
 * a real PSP holds moves only on that PSP's evidence (its notification checked with it, or reconciliation).
 */
/** How far ahead of the real clock a `now` may be and still count as now (clocks of client and server differ). */
const CLOCK_SKEW_MS = 60_000;

@Injectable()
export class SandboxRecordsService {
  constructor(
    private readonly sales: SalesRepository,
    private readonly config: AppConfig,
    private readonly payments: SandboxPaymentsRecord,
    private readonly refunds: RefundsService,
    private readonly acquirer: SandboxPaymentProvider,
    private readonly payouts: SandboxPayoutProvider,
  ) {}

  /**
   * The sandbox payout provider's record of a payout moved as the callback its events route plays says,
   * before the callback is applied to the withdrawal: 409 when its record cannot move so (a payout it
   * paid at once, its answer lost, is neither processed, rejected nor cancelled afterwards).
   */
  async playPayoutCallback(reference: string, event: WithdrawalEvent): Promise<void> {
    if (await this.payouts.recordCallback(reference, event)) return;
    const payout = await this.payouts.findPayout(reference);
    throw new DomainError('INVALID_TRANSITION', `The sandbox payout provider's payout ${reference} is ${payout?.status ?? 'unknown to it'}: it cannot call back ${event}`);
  }

  /**
   * An event the sandbox plays on the seller's sale, when the sandbox holds it (otherwise 404/403 as any
   * lookup, or 422 naming the provider that holds it); a payment it confirms is written to its own record
   * first, as a provider's record exists before its notification.
   */
  async admitEvent(sellerId: number, saleId: number, event: string): Promise<void> {
    const sale = await this.heldSale(sellerId, saleId);
    if (event === 'PAYMENT_CONFIRMED') await this.payments.record(saleId, sale.amountCents);
  }

  /**
   * The instant the scheduler route runs the jobs at. A `now` ahead of the real clock would expire, bill
   * and cancel early what a real PSP holds (its charges and recurrences) when PIX goes through one: it is
   * refused then (422 naming the provider), unless SANDBOX_CLOCK_MOVES_REAL_RECORDS allows it in a test
   * environment. A `now` not ahead (or none) is the jobs' own behaviour.
   */
  clockAt(requested: string | undefined, realNow = new Date()): Date {
    if (!requested) return realNow;
    const now = new Date(requested);
    const ahead = now.getTime() > realNow.getTime() + CLOCK_SKEW_MS;
    const real = [...new Set(Object.values(this.config.providers))].filter((name) => name !== 'sandbox');
    if (ahead && real.length > 0 && !this.config.sandboxClockMovesRealRecords) {
      throw new DomainError(
        'NOT_SUPPORTED',
        `The sandbox's clock cannot run ahead while the provider ${real.join(', ')} holds records: it would expire, bill and cancel them early. ` +
          'Omit now (the real clock), or set SANDBOX_CLOCK_MOVES_REAL_RECORDS=true in a test environment',
      );
    }
    return now;
  }

  /**
   * A refund the sandbox held (an amount whose cents are 13) settled as the sandbox acquirer or PSP
   * decides: COMPLETED (a card refund is recorded by the acquirer first) or FAILED, through the same
   * code as a real provider's answer. Only a PENDING refund of a sale the sandbox holds.
   */
  async settleRefund(sellerId: number, refundId: number, event: 'COMPLETED' | 'FAILED'): Promise<RefundResponse> {
    const refund = await this.refunds.findOwned(sellerId, refundId);
    const sale = await this.heldSale(sellerId, refund.saleId);
    if (refund.status !== 'PENDING') throw new InvalidTransitionError(refund.status, event);
    const request = { reference: chargeReference(sale.id), refundId: refund.providerRefundId, amountCents: refund.amountCents };
    if (sale.paymentMethod === 'PIX') {
      // The sandbox PSP keeps no record of its returns: the refund's own conditional finish decides once.
      if (event === 'FAILED') await this.refunds.finish(refundId, 'FAILED', null, 'The sandbox refused the refund');
      else await this.refunds.finish(refundId, 'COMPLETED', `sbx_rtr_${refund.providerRefundId}`, null);
    } else if (event === 'FAILED' && (await this.acquirer.refuseHeldRefund(request)) === 'REFUSED') {
      await this.refunds.finish(refundId, 'FAILED', null, 'The sandbox acquirer refused the refund');
    } else {
      // COMPLETED, or FAILED too late: the acquirer's record decides (made, or refused first by another call).
      try {
        const made = await this.acquirer.settleHeldRefund(request);
        await this.refunds.finish(refundId, 'COMPLETED', made.status === 'COMPLETED' ? made.externalId : null, null);
      } catch (error) {
        if (!(error instanceof CardRefundRefusedError)) throw error;
        await this.refunds.finish(refundId, 'FAILED', null, error.message);
      }
    }
    return toRefundResponse(await this.refunds.findOwned(sellerId, refundId));
  }

  /** The seller's sale, when the sandbox holds it; otherwise 404/403 as any lookup, or 422 naming the provider that holds it. */
  private async heldSale(sellerId: number, saleId: number): Promise<SaleEntity> {
    const sale = await this.sales.findById(saleId);
    assertOwnedSale(sale, sellerId, saleId);
    const holder = sale.provider;
    if (holder !== 'sandbox') {
      throw new DomainError(
        'NOT_SUPPORTED',
        `Sale ${saleId} is held by the provider ${holder}, not by the sandbox: the sandbox moves only its own records, and this sale moves only on ${holder}'s evidence`,
      );
    }
    return sale;
  }
}
