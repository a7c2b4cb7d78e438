import { Injectable, Logger } from '@nestjs/common';
import { Cents } from '../domain/money';
import { pixTxid } from '../providers/pix-provider.port';
import { ProviderRegistry } from '../providers/provider-registry';
import { SaleEntity } from '../sales/entities/sale.entity';
import { SalesProfile } from '../seller/seller.service';

/** What the PIX provider gave a sale before it is written. */
export type PixDocument = Pick<SaleEntity, 'pixCode' | 'pixReceiverKey' | 'externalTransactionId' | 'expiresAt'>;

/**
 * What "no expiry" becomes at a PSP, whose immediate charges expire (24 h unless asked otherwise): 30
 * days, and the sale expires with its charge so that the two never disagree (README, Going live).
 */
export const PSP_DEFAULT_EXPIRY_SECONDS = 30 * 24 * 3600;

export interface PixChargeOrder {
  /** The provider that holds the sale (its `provider`): the one its charge is issued by. */
  provider: string;
  amountCents: Cents;
  /** When the sale stops being payable; null: the sandbox keeps it open, a PSP gives it PSP_DEFAULT_EXPIRY_SECONDS. */
  expiresAt: Date | null;
  receiverKey: string | null;
  profile: SalesProfile;
  payer: { name: string; documentType: string | null; documentNumber: string | null } | null;
  description: string | null;
}

/** Issues the PIX charge of a sale (the API's and the billing job's), outside any transaction, under the sale's future id. */
@Injectable()
export class PixChargesService {
  private readonly logger = new Logger(PixChargesService.name);

  constructor(private readonly registry: ProviderRegistry) {}

  /**
   * Removes at the PSP a charge issued for a sale that was never written (its recurrence refused, its
   * transaction failed, or a replay answered instead), so that no payer can pay a charge with no sale.
   * Best effort, outside any transaction: a charge left behind is returned by reconciliation if paid.
   */
  async withdraw(provider: string, document: Pick<PixDocument, 'externalTransactionId'>): Promise<void> {
    if (!document.externalTransactionId) return;
    try {
      await this.registry.pix(provider).removeCharge(document.externalTransactionId);
    } catch (error) {
      this.logger.warn({ err: error, txid: document.externalTransactionId }, 'A charge of an unwritten sale could not be removed at the PSP; reconciliation returns it if paid');
    }
  }

  async issue(saleId: number, order: PixChargeOrder, now: Date): Promise<PixDocument> {
    const provider = this.registry.pix(order.provider, `Sale ${saleId}`);
    const expiresAt = order.expiresAt ?? (provider.keepsChargesOpen ? null : new Date(now.getTime() + PSP_DEFAULT_EXPIRY_SECONDS * 1000));
    const documentType = order.payer?.documentType?.toUpperCase();
    const charge = await provider.createCharge({
      txid: pixTxid(saleId),
      amountCents: order.amountCents,
      expiresInSeconds: expiresAt ? Math.max(60, Math.ceil((expiresAt.getTime() - now.getTime()) / 1000)) : PSP_DEFAULT_EXPIRY_SECONDS,
      receiverKey: order.receiverKey,
      merchantName: order.profile.merchantName,
      merchantCity: order.profile.merchantCity,
      payer: order.payer ? { name: order.payer.name, documentType: documentType === 'CPF' || documentType === 'CNPJ' ? documentType : null, documentNumber: order.payer.documentNumber } : null,
      description: order.description,
    });
    return { pixCode: charge.code, pixReceiverKey: charge.receiverKey, externalTransactionId: charge.externalId, expiresAt };
  }
}
