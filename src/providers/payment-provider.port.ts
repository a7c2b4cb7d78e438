import { Cents } from '../domain/money';

/**
 * The payment provider (acquirer / PSP) as the modules see it. `sandbox` is the only adapter; a real
 * acquirer is a second adapter behind this same interface (see providers.module.ts).
 */
export const PAYMENT_PROVIDER = Symbol('PAYMENT_PROVIDER');

export interface CardDetails {
  number: string;
  holderName: string;
  expirationMonth: string;
  expirationYear: string;
  cvv: string;
}

/** What is kept of a card: the provider's token, the last four digits and the brand. */
export interface CardToken {
  token: string;
  lastFour: string;
  brand: string;
}

export type ChargeKind = 'FIRST' | 'RENEWAL';

export interface ChargeResult {
  outcome: 'APPROVED' | 'REFUSED' | 'FAILED';
  externalId: string;
  reason: string | null;
}

export interface PixChargeRequest {
  amountCents: Cents;
  /** Our reference written in the code (25 alphanumerics at most). */
  txid: string;
  /** The receiver's PIX key asked by the seller; the provider's own key when absent. */
  receiverKey: string | null;
  merchantName: string;
  merchantCity: string;
}

export interface PixCharge {
  /** The copy-and-paste BR Code. */
  code: string;
  receiverKey: string;
  externalId: string;
}

export interface BoletoRequest {
  amountCents: Cents;
  /** YYYY-MM-DD. */
  dueDate: string;
  /** Our reference (the sale id), written in the boleto's free field. */
  reference: number;
}

export interface Boleto {
  /** The 47-digit typeable line. */
  code: string;
  externalId: string;
}

export interface ChargeRequest {
  /** Our idempotency reference: the sale's id. The provider makes at most one charge per reference. */
  reference: string;
  token: string;
  amountCents: Cents;
  installments: number;
  kind: ChargeKind;
}

/**
 * Every call is made outside any database transaction (style.md): the record it acts for is committed
 * first with its id as the reference, and the outcome is applied in a second transaction.
 */
export interface PaymentProvider {
  tokenizeCard(card: CardDetails): Promise<CardToken>;
  /** Idempotent by reference: the same reference again answers the first charge's result and charges nothing more. */
  chargeCard(request: ChargeRequest): Promise<ChargeResult>;
  /** The charge made for this reference, or null when the provider never received one (the recovery job asks). */
  findCharge(reference: string): Promise<ChargeResult | null>;
  /**
   * Closes a reference the provider has no charge for, so that a charge still on its way is refused
   * (answered FAILED) instead of made. Answers null when the reference is now void, or the charge the
   * provider made first. Idempotent.
   */
  voidCharge(reference: string): Promise<ChargeResult | null>;
  /**
   * Gives the customer back the whole of the charge made for this reference (a card charge approved
   * after its subscription was stopped). Idempotent: a reference is refunded at most once. Throws when
   * the provider made no approved charge for it.
   */
  refundCharge(reference: string): Promise<{ externalId: string }>;
  createPixCharge(request: PixChargeRequest): Promise<PixCharge>;
  createBoleto(request: BoletoRequest): Promise<Boleto>;
}

/** The provider reference of a sale's card charge. */
export const chargeReference = (saleId: number): string => String(saleId);
