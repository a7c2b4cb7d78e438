import { sandboxHoldsRefund } from './sandbox-refund-hold';
import { Injectable } from '@nestjs/common';
import { buildPixBrCode } from '../../domain/pix-br-code';
import { Cents } from '../../domain/money';
import { PixCharge, PixChargeRequest, PixProvider, PixReturn, ReceivedPix, saleIdOfTxid } from '../pix-provider.port';

/** The gateway's own PIX key in the sandbox (a random EVP key), used when the seller names none. */
export const SANDBOX_PIX_KEY = '7f6d9a3e-2c41-4b8e-9d0a-5e3f1c2b4a69';

/**
 * The sandbox PIX provider: no PSP is called. The charge is a static-style BR Code written here, its
 * payment is played with the sandbox route (PAYMENT_CONFIRMED), nothing is ever received from outside,
 * and a refund is returned to the payer at once.
 */
@Injectable()
export class SandboxPixProvider implements PixProvider {
  readonly name = 'sandbox' as const;
  readonly keepsChargesOpen = true;
  readonly reconciled = false;

  async createCharge(request: PixChargeRequest): Promise<PixCharge> {
    const receiverKey = request.receiverKey ?? SANDBOX_PIX_KEY;
    // A static code's txid field holds 25 characters at most: the sale's short reference.
    const reference = `SALE${saleIdOfTxid(request.txid)}`;
    const code = buildPixBrCode({ key: receiverKey, amountCents: request.amountCents, merchantName: request.merchantName, merchantCity: request.merchantCity, txid: reference });
    return { code, receiverKey, externalId: `sbx_pix_${reference}` };
  }

  async removeCharge(): Promise<void> {}

  async findPix(): Promise<ReceivedPix | null> {
    return null;
  }

  async listReceived(): Promise<ReceivedPix[]> {
    return [];
  }

  async requestReturn(_endToEndId: string, refundId: string, amountCents: Cents): Promise<PixReturn> {
    if (sandboxHoldsRefund(refundId, amountCents)) return { id: refundId, returnId: null, amountCents, status: 'EM_PROCESSAMENTO', reason: null, nature: 'ORIGINAL' };
    return { id: refundId, returnId: `sbx_rtr_${refundId}`, amountCents, status: 'DEVOLVIDO', reason: null, nature: 'ORIGINAL' };
  }

  async findReturn(): Promise<PixReturn | null> {
    return null;
  }
}
