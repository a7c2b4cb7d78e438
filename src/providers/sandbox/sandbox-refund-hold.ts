import { Cents } from '../../domain/money';

/**
 * The sandbox's control of a refund's outcome (like its test cards): a seller's refund (POST
 * /api/sales/{id}/refunds) of an amount whose cents are 13 — 40.13, 100.13 — is held PENDING by the
 * sandbox acquirer or PSP, as a real PIX return can be for minutes, until POST
 * /api/sandbox/refunds/{id}/events settles it COMPLETED or FAILED. Any other amount is answered at once.
 */
export const HELD_REFUND_CENTS = 13;

export function sandboxHoldsRefund(refundId: string, amountCents: Cents): boolean {
  return refundId.startsWith('GWRF') && amountCents % 100 === HELD_REFUND_CENTS;
}
