import { Cents } from '../domain/money';
import { PixKeyType } from '../domain/pix-key';

/** The payout provider that sends cashouts to PIX keys; `sandbox` is the only adapter so far. */
export const PAYOUT_PROVIDER = Symbol('PAYOUT_PROVIDER');

export interface PayoutRequest {
  withdrawalId: number;
  /** What reaches the key: the amount less the fees. */
  netAmountCents: Cents;
  pixKey: string;
  pixKeyType: PixKeyType;
}

export interface PayoutProvider {
  /** Registers the payout; its outcome comes back later as the provider's callback. */
  requestPayout(request: PayoutRequest): Promise<{ externalId: string }>;
}
