import { Cents } from '../domain/money';
import { PixKeyType } from '../domain/pix-key';
import { PayoutState } from '../domain/withdrawal-status';
import { ProviderRefusedError } from './provider-operation';

/** Sends withdrawals to PIX keys: a port of the providers that pay out (ProviderRegistry.payout). */
export interface PayoutRequest {
  /** Our idempotency reference: the withdrawal's id (payoutReference), the same on every try. The provider makes at most one payout per reference. */
  reference: string;
  /** What reaches the key: the amount less the fees. */
  netAmountCents: Cents;
  pixKey: string;
  pixKeyType: PixKeyType;
}

export interface PayoutReceipt {
  externalId: string;
}

/** What the provider knows of the payout of a reference (its look-up). */
export interface PayoutResult {
  /** Taken and not on its way yet (PENDING), on its way, paid (COMPLETED), rejected, or cancelled before it was paid. */
  status: PayoutState;
  /** The provider's id of the payout. */
  externalId: string;
  /** Why it was rejected or cancelled, when the provider says; null otherwise. */
  reason: string | null;
}

/** The provider refuses to pay out this reference (it was cancelled or rejected): retrying will not help. */
export class PayoutRefusedError extends ProviderRefusedError {
  constructor(readonly reference: string, reason: string) {
    super(`Payout ${reference} refused: ${reason}`);
    this.name = 'PayoutRefusedError';
  }
}

/** Called outside any database transaction, from the payout job and the recovery job (never from the request). */
export interface PayoutProvider {
  /**
   * Registers the payout, idempotent by reference (asked again, it answers the payout it registered
   * first); its outcome comes back later as the provider's callback, or to a look-up (findPayout).
   * PayoutRefusedError when the reference was cancelled or rejected.
   */
  requestPayout(request: PayoutRequest): Promise<PayoutReceipt>;
  /**
   * Cancels the payout of this reference before it is on its way; a later request for it is refused.
   * Idempotent; a payout already on its way or paid stays as it is (findPayout says which).
   */
  cancelPayout(reference: string): Promise<void>;
  /**
   * What the provider knows of the payout of this reference, or null when it never received one (the
   * recovery job asks when the answer to a request or its callback was lost; null: it sends it again
   * under the same reference).
   */
  findPayout(reference: string): Promise<PayoutResult | null>;
}

/** The provider reference of a withdrawal's payout. */
export const payoutReference = (withdrawalId: number): string => String(withdrawalId);
