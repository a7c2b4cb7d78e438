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

/**
 * What is kept of a card before its first charge: the last four digits, the brand, and the provider's
 * token when the provider stores cards apart from charging them (the sandbox). `token` is null for an
 * acquirer that takes the card in the charge itself (Cielo: `POST /1/sales` carries the card): its first
 * charge is then given the card details in memory (ChargeRequest.card), never persisted.
 */
export interface PreparedCard {
  token: string | null;
  lastFour: string;
  brand: string;
}

export type ChargeKind = 'FIRST' | 'RENEWAL';

/** The acquirer's own code and text for its answer (Cielo's ReturnCode and ReturnMessage), kept on the sale and shown in its lookup. */
export interface AcquirerReturn {
  code: string;
  message: string;
}

export interface ChargeResult {
  /**
   * PENDING: the acquirer took the charge and has not decided (Cielo's Status 12): the sale stays
   * EM_PROCESSAMENTO until the janitor (or a notification) asks again.
   */
  outcome: 'APPROVED' | 'REFUSED' | 'FAILED' | 'PENDING';
  externalId: string;
  reason: string | null;
  acquirerReturn?: AcquirerReturn | null;
  /** What the acquirer reports captured for the charge (ledger:verify's evidence), when it says. */
  capturedCents?: Cents | null;
  /**
   * A stored card's token the acquirer gave with this answer, for the charge's subscription to keep: the
   * card saved by its first charge (ChargeRequest.saveCard), or the new card the issuer's updater gave on
   * a renewal (Cielo's NewCard). In memory only: sealed before it is written, never logged.
   */
  cardToken?: string | null;
  /**
   * The stored card's last four digits and brand (our name) when the token is of another card than the one
   * the subscription shows (the issuer's NewCard): the subscription is shown, and charged, as that card.
   */
  replacedCard?: { lastFour: string; brand: string } | null;
}

/** What a charge is made with, besides its amount: the buyer's name and the seller's statement descriptor, when known. */
export interface ChargeContext {
  customerName?: string;
  customerDocument?: { type: 'cpf' | 'cnpj'; number: string } | null;
  /** The seller's invoice descriptor (upper-case letters, digits, spaces), cut to the acquirer's limit by its adapter. */
  statementDescriptor?: string | null;
}

/** A postal address as a boleto's payer has it (the sale's customer.address, or its shipping address). */
export interface PayerAddress {
  street: string;
  streetNumber: string;
  complement?: string | null;
  zipCode: string;
  neighborhood: string;
  city: string;
  state: string;
}

export interface BoletoRequest {
  amountCents: Cents;
  /** YYYY-MM-DD. */
  dueDate: string;
  /** Our reference (the sale id), written in the boleto's free field. */
  reference: number;
  /** The payer, as the banks register a boleto to (a real issuer needs name, CPF/CNPJ and address). */
  payer?: { name: string; document: { type: 'cpf' | 'cnpj'; number: string } | null; address: PayerAddress | null };
}

export interface Boleto {
  /** The 47-digit typeable line. */
  code: string;
  externalId: string;
  /** The 44-digit bar code, when the issuer gives it. */
  barcode?: string | null;
  /** The boleto's printable page at the issuer, when it has one. */
  url?: string | null;
}

/** A field of the sale a boleto cannot be issued without, or with as given (answered 400 naming it). */
export interface BoletoFieldProblem {
  field: string;
  message: string;
}

/** A boleto as its issuer's look-up shows it (what its notifications name). */
export interface IssuedBoleto {
  /** Our reference the boleto was issued under (the sale's id), or null when it is none of this gateway's. */
  reference: string | null;
  /** OPEN: not paid yet; PAID: paid (`paidCents`); CANCELLED: cancelled or refused at the issuer, never to be paid. */
  state: 'OPEN' | 'PAID' | 'CANCELLED';
  /** What the payer paid, as the issuer reports it. */
  paidCents: Cents | null;
}

/** The issuer refused to issue a boleto (its own reason): nothing was issued, answered 422 PSP_REFUSED. */
export class BoletoRefusedError extends ProviderRefusedError {}

export interface CardRefundRequest {
  reference: string;
  /** Ours, unique per refund. */
  refundId: string;
  amountCents: Cents;
  /**
   * What an acquirer without idempotency on its refunds (Cielo's void) needs to make each refund at most
   * once; an idempotent one (the sandbox) ignores them. `externalId`: the acquirer's id of the charge (the
   * sale's externalTransactionId). `refundedBeforeCents`: what the refunds of the charge completed here
   * before this one gave back (the acquirer showing that plus this amount given back means this refund was
   * made, its answer lost). `earlierPending`: an older refund of the charge is still pending (this one waits
   * its turn). `lastRefundAt`: when a refund of the charge was last sent or finished (and `sentAt`, when this
   * one was last sent): the acquirer's pause between refunds of one charge is kept from them.
   */
  externalId?: string | null;
  refundedBeforeCents?: Cents;
  earlierPending?: boolean;
  lastRefundAt?: Date | null;
  sentAt?: Date | null;
  /**
   * Called just before the refund is sent to the acquirer (not when it only waits its turn): the service
   * records when (`sentAt` next time), if no one else sent it since it was read. False: another pass (another
   * instance) is sending it, and nothing is sent.
   */
  onSend?: () => Promise<boolean>;
}

/** A payment as the acquirer's look-up by its own id shows it (the id a notification names). */
export interface CardPayment {
  /** Our reference the payment was made under (the sale's id), or null when it is none of this gateway's. */
  reference: string | null;
  charge: ChargeResult;
  /** What the acquirer gave back of it so far (voids and refunds, in all, whoever asked for them). */
  refundedCents: Cents;
}

/** The acquirer made the refund (COMPLETED), or took it and will say later (PENDING: asked again under the same id). */
export type CardRefundAnswer = { status: 'COMPLETED'; externalId: string } | { status: 'PENDING' };

/** The acquirer will not make a refund (nothing approved under the reference, or more than what is left). */
export class CardRefundRefusedError extends ProviderRefusedError {}

export interface ChargeRequest extends ChargeContext {
  /** Our reference: the sale's id. The provider makes at most one charge per reference (see chargeCard). */
  reference: string;
  /** The stored card (prepareCard's token, or a subscription's); null when the card itself is given in `card`. */
  token: string | null;
  /**
   * The card itself, for the first charge at an acquirer that takes it in the charge (prepareCard gave no
   * token): held in memory for this one call, never persisted, logged nor sent again.
   */
  card?: CardDetails;
  amountCents: Cents;
  installments: number;
  kind: ChargeKind;
  /**
   * When the charge's sale was written EM_PROCESSAMENTO (the `sentAt` the recovery job gives voidCharge): an
   * acquirer that cannot close a reference sends no charge so long after it that "none found" could come first.
   */
  writtenAt?: Date;
  /** The sale's method: a debit card is charged as one (always authenticated, one instalment); credit when omitted. */
  method?: 'CREDIT_CARD' | 'DEBIT_CARD';
  /** The cardholder's 3-D Secure authentication (required for debit, checked before the sale is written), for the first charge only: in memory, never persisted. */
  authentication?: ThreeDSecureResult;
  /** The first charge of a card subscription: the acquirer is to keep the card for its renewals (its token answered in ChargeResult.cardToken). */
  saveCard?: boolean;
  /** The stored card's brand (our name, domain/card.ts), for an acquirer that needs it beside the token (Cielo). */
  brand?: string | null;
}

/** What Cielo's 3-D Secure script (BP.Mpi) answered on the checkout page (a sale's card.threeDSecure). */
export interface ThreeDSecureResult {
  cavv: string;
  xid?: string;
  eci: string;
  version: string;
  referenceId: string;
}

/** What a provider cannot take (checked before a sale is written): its reason, or null. */
export interface CardSaleShape {
  paymentMethod: 'CREDIT_CARD' | 'DEBIT_CARD';
  /** The sale opens a subscription (its renewals are charged with a stored card). */
  subscription: boolean;
  /** Our brand name (domain/card.ts), or null when the number's brand is unknown. */
  brand: string | null;
}

/**
 * Every call is made outside any database transaction (style.md): the record it acts for is committed
 * first with its id as the reference, and the outcome is applied in a second transaction.
 */
export interface CardProvider {
  /** Why this provider cannot take such a sale (answered 422 NOT_SUPPORTED before anything is written), or null. */
  unsupported?(sale: CardSaleShape): string | null;
  /** The card as the sale keeps it (last four, brand, and the provider's token when it stores cards apart from charging them). */
  prepareCard(card: CardDetails): Promise<PreparedCard>;
  /**
   * One charge. The sandbox is idempotent by reference (the same reference again answers the first
   * charge's result). An acquirer without idempotency (Cielo) is sent each reference once only: the
   * caller never sends a charge again, and the janitor settles one without an answer by findCharge and
   * voidCharge, never by charging again.
   */
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
   * Makes sure no charge can be made any more under a reference the provider has no charge for, so that
   * its sale may fail: answers null when none can come, or the charge the provider made first.
   * Idempotent. `sentAt`: when the charge was sent (the sale written EM_PROCESSAMENTO just before), or
   * null when it was never sent. A provider that can close a reference (the sandbox) closes it at once:
   * a charge still on its way is then refused (answered FAILED) instead of made. One that cannot (Cielo:
   * no idempotency, nothing to cancel a POST on its way with) answers null only when it has none and the
   * charge was never sent or was sent long enough ago that it would show (CIELO_NOT_FOUND_AFTER_SECONDS);
   * before that it throws, and the janitor asks again later.
   */
  voidCharge(reference: string, sentAt: Date | null): Promise<ChargeResult | null>;
  /**
   * Gives the customer back `amountCents` of the charge made for this reference (a seller's refund, or
   * a card charge approved after its subscription was stopped). Idempotent by `refundId`: the same id
   * again answers the first refund. Throws CardRefundRefusedError when the acquirer will not (no
   * approved charge, or more than what is left of it).
   */
  refundCharge(request: CardRefundRequest): Promise<CardRefundAnswer>;
  /** The payment the acquirer holds under its own id (what its notifications name), or null when it has none of ours under it. */
  findPayment?(externalId: string): Promise<CardPayment | null>;
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

/** The acquirer offers 3-D Secure but it is not configured here (answered 422 NOT_SUPPORTED). */
export class ThreeDSecureNotOfferedError extends Error {}

/** Issues boletos (and takes transfers) for the sales of its rail. */
export interface BoletoProvider {
  /** Why a sale's boleto cannot be issued as asked (a payer's field missing or unusable for the bank), or null; checked before anything is written or sent. */
  boletoProblem?(request: BoletoRequest): BoletoFieldProblem | null;
  /** Issues a boleto (outside any transaction; the sale is written with it afterwards). Throws BoletoRefusedError on a refusal. */
  createBoleto(request: BoletoRequest): Promise<Boleto>;
  /**
   * A real issuer (Cielo): its boletos are paid and cancelled only on its word (findBoleto), learned by
   * notification or by the poll of open boletos, and cancelled unpaid `clearingDays` after their due date.
   * Absent (the sandbox): payment is the sandbox's events route, expiry the due date.
   */
  findBoleto?(externalId: string): Promise<IssuedBoleto | null>;
  /** Days after its due date an unpaid boleto of this issuer is still waited for before it is cancelled (the banks' clearing); 0 when absent. */
  readonly clearingDays?: number;
  /** The latest due date (days from now, `boleto.expiresInDays`) this issuer can follow to its end; any when absent (400 beyond it). */
  readonly maxDueDays?: number;
  /** False: this provider takes no transfers (TRANSFER sales are answered 422 NOT_SUPPORTED while it holds the rail). */
  readonly takesTransfers?: boolean;
}

/** The provider reference of a sale's card charge. */
export const chargeReference = (saleId: number): string => String(saleId);
