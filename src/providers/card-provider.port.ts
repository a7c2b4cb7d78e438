import { Cents } from '../domain/money';
import { ProviderRefusedError } from './provider-operation';

/**
 * The card acquirer (CardProvider) and the boleto issuer (BoletoProvider) as the modules see them; each
 * provider implements the ports it offers and is found by name in the ProviderRegistry. PIX has its own
 * port (pix-provider.port.ts).
 */

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

export interface CardRefundRequest {
  reference: string;
  /** Ours, unique per refund. */
  refundId: string;
  amountCents: Cents;
}

/** The acquirer made the refund (COMPLETED), or took it and will say later (PENDING: asked again under the same id). */
export type CardRefundAnswer = { status: 'COMPLETED'; externalId: string } | { status: 'PENDING' };

/** The acquirer will not make a refund (nothing approved under the reference, or more than what is left). */
export class CardRefundRefusedError extends ProviderRefusedError {}

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
export interface CardProvider {
  tokenizeCard(card: CardDetails): Promise<CardToken>;
  /** Idempotent by reference: the same reference again answers the first charge's result and charges nothing more. */
  chargeCard(request: ChargeRequest): Promise<ChargeResult>;
  /**
   * Several charges in one call (a billing batch's cards): each answered as chargeCard would answer it
   * alone, in the order asked; idempotent per reference. A call that fails leaves every one of its
   * references to the recovery job (findCharge, voidCharge), as a single charge that fails would.
   */
  chargeCards(requests: ChargeRequest[]): Promise<ChargeResult[]>;
  /** The charge made for this reference, or null when the provider never received one (the recovery job asks). */
  findCharge(reference: string): Promise<ChargeResult | null>;
  /**
   * Closes a reference the provider has no charge for, so that a charge still on its way is refused
   * (answered FAILED) instead of made. Answers null when the reference is now void, or the charge the
   * provider made first. Idempotent.
   */
  voidCharge(reference: string): Promise<ChargeResult | null>;
  /**
   * Gives the customer back `amountCents` of the charge made for this reference (a seller's refund, or
   * a card charge approved after its subscription was stopped). Idempotent by `refundId`: the same id
   * again answers the first refund. Throws CardRefundRefusedError when the acquirer will not (no
   * approved charge, or more than what is left of it).
   */
  refundCharge(request: CardRefundRequest): Promise<CardRefundAnswer>;
  /** A token for the seller's checkout page to authenticate a cardholder by 3-D Secure 2.2 (debit); where the acquirer offers it. */
  threeDSecureToken?(): Promise<ThreeDSecureToken>;
}

/** An access token for the 3-D Secure script (Cielo's BP.Mpi) on the seller's checkout page (POST /api/cards/3ds-token). */
export interface ThreeDSecureToken {
  accessToken: string;
  expiresAt: Date;
  /** bpmpi_config's Environment (SDB, PRD), or SANDBOX where no script runs. */
  environment: 'SDB' | 'PRD' | 'SANDBOX';
  scriptUrl: string | null;
}

/** Issues boletos (and takes transfers) for the sales of its rail. */
export interface BoletoProvider {
  createBoleto(request: BoletoRequest): Promise<Boleto>;
}

/** The provider reference of a sale's card charge. */
export const chargeReference = (saleId: number): string => String(saleId);
