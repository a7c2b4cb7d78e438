import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { SandboxPaymentsRecord } from '../providers/sandbox/sandbox-payments.record';
import { DomainError } from '../domain/domain-error';
import { SaleEntity } from '../sales/entities/sale.entity';
import { SalesRepository } from '../sales/sales.repository';
import { assertOwnedSale } from '../sales/sales.service';

/**
 * The sandbox is a provider like the others (style.md): its routes move only the records it holds. A PIX
 * sale is held by the provider that issued its charge (`pix_provider`; a charge not issued yet, by the PIX
 * provider configured); cards, boleto and transfers by PAYMENT_PROVIDER, today always the sandbox. A sale
 * a real PSP holds moves only on that PSP's evidence (its notification checked with it, or reconciliation).
 */
@Injectable()
export class SandboxRecordsService {
  constructor(
    private readonly sales: SalesRepository,
    private readonly config: AppConfig,
    private readonly payments: SandboxPaymentsRecord,
  ) {}

  /**
   * An event the sandbox plays on the seller's sale, when the sandbox holds it (otherwise 404/403 as any
   * lookup, or 422 naming the provider that holds it); a payment it confirms is written to its own record
   * first, as a provider's record exists before its notification.
   */
  async admitEvent(sellerId: number, saleId: number, event: string): Promise<void> {
    const sale = await this.sales.findById(saleId);
    assertOwnedSale(sale, sellerId, saleId);
    const holder = this.holderOf(sale);
    if (holder !== 'sandbox') {
      throw new DomainError(
        'NOT_SUPPORTED',
        `Sale ${saleId} is held by the provider ${holder}, not by the sandbox: the sandbox moves only its own records, and this sale moves only on ${holder}'s evidence`,
      );
    }
    if (event === 'PAYMENT_CONFIRMED') await this.payments.record(saleId, sale.amountCents);
  }

  private holderOf(sale: Pick<SaleEntity, 'paymentMethod' | 'pixProvider'>): string {
    return sale.paymentMethod === 'PIX' ? (sale.pixProvider ?? this.config.pixProvider) : this.config.paymentProvider;
  }
}
