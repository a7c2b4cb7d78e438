import { Cents } from '../domain/money';
import { PixKeyType } from '../domain/pix-key';

/** Sends withdrawals to PIX keys: a port of the providers that pay out (ProviderRegistry.payout). */
export interface PayoutRequest {
  /** Our idempotency reference: the withdrawal's id. The provider makes at most one payout per reference. */
  reference: string;
  /** What reaches the key: the amount less the fees. */
  netAmountCents: Cents;
  pixKey: string;
  pixKeyType: PixKeyType;
}

export interface PayoutReceipt {
  externalId: string;
}

/** The provider refuses to pay out this reference (it was cancelled or rejected): retrying will not help. */
export class PayoutRefusedError extends Error {
  constructor(readonly reference: string, reason: string) {
    super(`Payout ${reference} refused: ${reason}`);
    this.name = 'PayoutRefusedError';
  }
}

/** Called outside any database transaction, from the payout job (never from the request). */
export interface PayoutProvider {
  /**
   * Registers the payout, idempotent by reference (asked again, it answers the payout it registered
   * first); its outcome comes back later as the provider's callback. PayoutRefusedError when the
   * reference was cancelled.
   */
  requestPayout(request: PayoutRequest): Promise<PayoutReceipt>;
  /** Cancels the payout of this reference before it is paid out; a later request for it is refused. Idempotent. */
  cancelPayout(reference: string): Promise<void>;
}

/** The provider reference of a withdrawal's payout. */
export const payoutReference = (withdrawalId: number): string => String(withdrawalId);
