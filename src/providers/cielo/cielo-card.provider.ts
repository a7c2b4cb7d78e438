import { Logger } from '@nestjs/common';
import { detectCardBrand } from '../../domain/card';
import { cents } from '../../domain/money';
import {
  AcquirerReturn,
  CardDetails,
  CardPayment,
  CardProvider,
  CardRefundAnswer,
  CardRefundRefusedError,
  CardRefundRequest,
  CardSaleShape,
  ChargeRequest,
  ChargeResult,
  PreparedCard,
  ThreeDSecureNotOfferedError,
  ThreeDSecureResult,
  ThreeDSecureToken,
} from '../card-provider.port';
import { CieloClient, CieloUnavailableError } from './cielo.client';
import { CieloMpiClient } from './cielo-mpi.client';
import { cieloOrderId, firstCieloError, isCieloPaymentId, referenceOfCieloOrder, salesUnderOrder } from './cielo-orders';

/** The provider name written on the card sales Cielo holds. */
export const CIELO = 'cielo';

/** Cielo's settings besides its connection (CIELO_* variables). */
export interface CieloSettings {
  /** Letters before the sale's id in each MerchantOrderId. */
  orderIdPrefix: string;
  /** How long after a sale was sent a look-up finding no payment means none will come. */
  notFoundAfterSeconds: number;
  /** Least wait between two voids of one sale (ref §4.2: 5 s); a refund due sooner waits its turn. */
  voidPauseSeconds?: number;
  /** Longest wait for one answer (CIELO_TIMEOUT_MS): a void sent is not looked up as lost before it. */
  timeoutMs?: number;
}

/** Ref §4.2: 5 seconds between voids of one sale. */
const VOID_PAUSE_SECONDS = 5;

/**
 * Our brand names (domain/card.ts, from the credit-card-type library) in Cielo's spelling (ref §2.3: the
 * nine documented `Brand` values; Aura is not told apart by the library, and `Hiper` is unconfirmed, so a
 * Hiper card is refused before its sale is written rather than sent under a guessed name).
 */
const CIELO_BRANDS: Readonly<Record<string, string>> = {
  VISA: 'Visa',
  MASTERCARD: 'Master',
  AMEX: 'Amex',
  ELO: 'Elo',
  JCB: 'JCB',
  DINERS: 'Diners',
  DISCOVER: 'Discover',
  HIPERCARD: 'Hipercard',
};

/** The brands Cielo takes debit cards of (ref §2.3, D-BRANDS). */
const DEBIT_BRANDS: ReadonlySet<string> = new Set(['VISA', 'MASTERCARD', 'ELO']);

/** Cielo's limits (ref §2.1–2.3): the statement text, the holder's name, the customer's name. */
const SOFT_DESCRIPTOR_MAX = 13;
const HOLDER_MAX = 25;
const CUSTOMER_NAME_MAX = 255;

/** A payment as Cielo's sale answer and look-up give it (ref §2.5; the fields read here, leniently). */
interface CieloPayment {
  PaymentId?: string;
  Status?: number | string;
  ReturnCode?: string | number;
  ReturnMessage?: string;
  Amount?: number;
  CapturedAmount?: number;
  /** The card node echoed: `CardToken` when the sale saved the card (`SaveCard` true, ref §6.2). */
  CreditCard?: { CardToken?: string; SaveCard?: boolean | string };
  /** The issuer's replacement for the card charged (Renova Fácil / ABU, ref §6.5). */
  NewCard?: { CardNumber?: string; ExpirationDate?: string; Brand?: string };
  VoidedAmount?: number;
  Type?: string;
}

/** The answer of a void (ref §4.2): the sale's Status after it, and the codes that say what came of it. */
interface CieloVoidAnswer {
  Status?: number | string;
  ReturnCode?: string | number;
  ReturnMessage?: string;
  ReasonCode?: number | string;
  ReasonMessage?: string;
}

interface CieloSale {
  MerchantOrderId?: string;
  Customer?: { Name?: string };
  Payment?: CieloPayment;
}

/**
 * Credit card sales through Cielo's API E-commerce 3.0 (../shared/reference/cielo-ecommerce-3.0.md). A
 * sale is `POST /1/sales/` on the transactional host, with the card in it (Cielo keeps no card for us
 * before a charge: prepareCard gives no token), `MerchantOrderId` our reference (CIELO_ORDER_ID_PREFIX and
 * the sale's id: at most 20 letters and digits, so Cielo sends it to the authorizer unchanged, ref §2.1),
 * `Capture` true (authorized and captured in one step), `Interest` ByMerchant (parcelado lojista: the
 * seller bears the instalments; a seller cannot choose ByIssuer here), and the seller's invoice
 * descriptor as `SoftDescriptor`. `Status` 2 is approved, 3 refused (ReturnCode and ReturnMessage kept), 12
 * pending, 0 and 13 failed (ref §3.1). A debit sale (Visa, Master, Elo) is `Type` DebitCard, one
 * instalment, with `Authenticate` true and the cardholder's 3-D Secure 2.2 result as
 * `ExternalAuthentication` (ref §8.4; the ECI was checked before the sale was written); a credit sale with
 * one sends it the same way. threeDSecureToken gives the checkout page its MPI token (CIELO_3DS_*).
 *
 * **No idempotency** (ref §5): a POST is sent once, ever. One without an answer (a timeout, a 5xx, a reset,
 * the process killed) is left to the janitor, which asks `GET /1/sales?merchantOrderId=` on the query host
 * (findCharge: each payment found fetched by PaymentId) and, when none is found, answers "none will come"
 * only once the sale was sent CIELO_NOT_FOUND_AFTER_SECONDS ago (voidCharge): Cielo has nothing that
 * cancels a POST on its way.
 *
 * **Stored cards** (ref §6): the first charge of a card subscription saves the card (`SaveCard`, `CardOnFile`
 * First/Recurring) and answers its `CardToken`; renewals and retries are charged with that token, without
 * CVV, `Recurrent` and `CardOnFile` Used/Recurring (a merchant-initiated recurring charge, ref §6.3), and a
 * Mastercard carries `InitiatedTransactionIndicator` (C1 then M1, Subscription, ref §6.4). A refusal that
 * carries the issuer's `NewCard` (ref §6.5) has that card tokenized at once (`POST /1/card/`): its token is
 * answered for the subscription to keep, and the next charge uses it. Tokens leave here only in
 * ChargeResult.cardToken, never logged.
 *
 * Refunds are voids (refundCharge), each sent once: the payment is fetched before any void. Cielo's
 * notifications name a PaymentId; findPayment fetches it (cielo.notifications.ts).
 */
export class CieloCardProvider implements CardProvider {
  private readonly logger = new Logger(CieloCardProvider.name);

  constructor(
    private readonly client: CieloClient,
    private readonly settings: CieloSettings,
    /** Cielo's 3-D Secure MPI (CIELO_3DS_*), for the checkout page's token; null when not configured. */
    private readonly mpi: CieloMpiClient | null = null,
  ) {}

  unsupported(sale: CardSaleShape): string | null {
    if (sale.paymentMethod === 'DEBIT_CARD' && (sale.brand === null || !DEBIT_BRANDS.has(sale.brand))) {
      return `Cielo takes debit cards of ${[...DEBIT_BRANDS].join(', ')} only, not ${sale.brand ?? 'this card’s brand'}`;
    }
    if (sale.brand === null || !CIELO_BRANDS[sale.brand]) {
      return `Cielo does not take ${sale.brand ?? 'this card’s'} cards here (it takes ${Object.values(CIELO_BRANDS).join(', ')})`;
    }
    return null;
  }

  async prepareCard(card: CardDetails): Promise<PreparedCard> {
    return { token: null, lastFour: card.number.slice(-4), brand: detectCardBrand(card.number) ?? 'UNKNOWN' };
  }

  /** Our reference as Cielo's MerchantOrderId. */
  orderId(reference: string): string {
    return cieloOrderId(this.settings.orderIdPrefix, reference);
  }

  async chargeCard(request: ChargeRequest): Promise<ChargeResult> {
    const payment = paymentCard(request);
    const document = request.customerDocument;
    const descriptor = softDescriptor(request.statementDescriptor ?? null);
    const debit = request.method === 'DEBIT_CARD';
    if (debit && !request.authentication) throw new Error(`Cielo was asked to charge the debit sale ${request.reference} without its 3-D Secure authentication`);
    const body = {
      MerchantOrderId: this.orderId(request.reference),
      Customer: {
        Name: (request.customerName ?? '').slice(0, CUSTOMER_NAME_MAX) || 'Comprador',
        ...(document ? { Identity: document.number.replace(/\D/g, ''), IdentityType: document.type === 'cnpj' ? 'CNPJ' : 'CPF' } : {}),
      },
      Payment: {
        Type: debit ? 'DebitCard' : 'CreditCard',
        Amount: request.amountCents,
        Currency: 'BRL',
        Country: 'BRA',
        // Debit is paid at once: one instalment, captured with its authorization (ref §2.4, §8).
        Installments: debit ? 1 : request.installments,
        ...(debit ? {} : { Interest: 'ByMerchant' }),
        Capture: true,
        ...(descriptor ? { SoftDescriptor: descriptor } : {}),
        ...(request.authentication ? { Authenticate: true, ExternalAuthentication: externalAuthentication(request.authentication) } : {}),
        ...payment,
      },
    };
    const answer = await this.client.send('POST', '/1/sales/', body);
    if (answer.status === 201 || answer.status === 200) {
      const sale = answer.body as CieloSale;
      return this.withStoredCard(sale, resultOf(sale.Payment ?? {}), request.reference);
    }
    // A request Cielo refused (ref §1.3: 400 validation or business rule, 401 credentials, 403 IP, 404/405
    // route): no payment was made; the sale fails with Cielo's first error as its answer.
    if (answer.status >= 400 && answer.status < 500 && answer.status !== 408 && answer.status !== 429) {
      const error = firstCieloError(answer.body);
      const acquirerReturn = error ? { code: String(error.Code ?? answer.status), message: error.Message ?? '' } : { code: `HTTP ${answer.status}`, message: 'Cielo refused the request' };
      this.logger.warn({ provider: CIELO, reference: request.reference, status: answer.status, code: acquirerReturn.code }, 'Cielo refused a sale’s request: nothing was charged');
      return { outcome: 'FAILED', externalId: '', reason: `Cielo refused the request: ${acquirerReturn.code} ${acquirerReturn.message}`.trim(), acquirerReturn };
    }
    throw new CieloUnavailableError(`Cielo answered ${answer.status} to the sale ${request.reference}: its outcome is unknown`);
  }

  /** A token for the checkout page's BP.Mpi script, from Cielo's MPI (CIELO_3DS_*). */
  async threeDSecureToken(): Promise<ThreeDSecureToken> {
    if (!this.mpi) throw new ThreeDSecureNotOfferedError('3-D Secure is not configured on this gateway (CIELO_3DS_*)');
    return this.mpi.token();
  }

  /** Each sale is its own POST (Cielo takes one sale per call), one after the other. */
  async chargeCards(requests: ChargeRequest[]): Promise<ChargeResult[]> {
    // The janitor takes "none found" as no charge CIELO_NOT_FOUND_AFTER_SECONDS after a sale was written, and
    // a batch's sales are all written before its first POST: a POST is sent only while its sale is young
    // enough for it and its answer's wait to end well before then. The rest are never sent: FAILED, their
    // renewals retried by dunning (a POST sent later could be charged after its sale was failed).
    const sendWithinMs = Math.max(0, this.settings.notFoundAfterSeconds * 1000 - (this.settings.timeoutMs ?? 30_000)) / 2;
    const results: ChargeResult[] = [];
    for (const request of requests) {
      if (request.writtenAt && Date.now() - request.writtenAt.getTime() > sendWithinMs) {
        this.logger.warn({ provider: CIELO, reference: request.reference }, 'A charge of a billing batch that ran too long was not sent to Cielo; its renewal is retried');
        results.push({ outcome: 'FAILED', externalId: '', reason: 'Not sent to Cielo: its billing batch ran too long for it to be sent safely (retried by dunning)' });
        continue;
      }
      results.push(await this.chargeCard(request));
    }
    return results;
  }

  /**
   * The payment Cielo made under our reference: the look-up by MerchantOrderId (query host), then each
   * payment it lists fetched by PaymentId; null when it lists none (404 or an empty list). One reference
   * never has two payments from this gateway (a sale is sent once); if Cielo shows several, the approved
   * one is taken and the others are left to an operator (logged as an error).
   */
  async findCharge(reference: string): Promise<ChargeResult | null> {
    const orderId = this.orderId(reference);
    const { listed, sales } = await salesUnderOrder<CieloSale>(this.client, orderId);
    if (listed === 0) return null;
    const payments: CieloPayment[] = [];
    const customers = new Map<string, CieloSale['Customer']>();
    for (const { paymentId, sale } of sales) {
      if (sale.Payment) payments.push({ PaymentId: paymentId, ...sale.Payment });
      customers.set(paymentId, sale.Customer);
    }
    if (payments.length === 0) throw new CieloUnavailableError(`Cielo lists payments under ${orderId} that its look-up by PaymentId does not show yet`);
    if (payments.length > 1) {
      this.logger.error(
        { provider: CIELO, reference, payments: payments.map((one) => ({ paymentId: one.PaymentId, status: one.Status })) },
        'Cielo holds several payments under one of our references: the approved one is taken; the others are for an operator to void',
      );
    }
    const chosen = payments.find((one) => Number(one.Status) === 2) ?? payments.find((one) => Number(one.Status) === 12) ?? payments[payments.length - 1];
    return this.withStoredCard({ Customer: customers.get(chosen.PaymentId ?? ''), Payment: chosen }, resultOf(chosen), reference);
  }

  /**
   * The card token a sale's answer gives its subscription: the one `SaveCard` made (ref §6.2), or, when the
   * issuer's updater answered a `NewCard` (ref §6.5), that new card tokenized now by `POST /1/card/` (its
   * number held in memory for this one call). A tokenization that fails is logged (without the card) and
   * the subscription keeps its card: the refusal stands either way.
   */
  private async withStoredCard(sale: CieloSale, result: ChargeResult, reference: string): Promise<ChargeResult> {
    const payment = sale.Payment ?? {};
    const saved = payment.CreditCard?.CardToken;
    if (typeof saved === 'string' && truthy(payment.CreditCard?.SaveCard) && result.outcome === 'APPROVED') return { ...result, cardToken: saved };
    const renewed = payment.NewCard;
    if (!renewed?.CardNumber || !renewed.ExpirationDate || !renewed.Brand) return result;
    try {
      const holder = holderName(sale.Customer?.Name ?? '');
      const answer = await this.client.send('POST', '/1/card/', {
        CustomerName: (sale.Customer?.Name ?? '').slice(0, CUSTOMER_NAME_MAX) || holder,
        CardNumber: renewed.CardNumber,
        Holder: holder,
        ExpirationDate: renewed.ExpirationDate,
        Brand: renewed.Brand,
      });
      const token = (answer.body as { CardToken?: unknown } | null)?.CardToken;
      if ((answer.status === 201 || answer.status === 200) && typeof token === 'string') {
        this.logger.log({ provider: CIELO, reference }, 'The issuer replaced a stored card (NewCard): its new card was tokenized for the next charges');
        const brand = detectCardBrand(renewed.CardNumber) ?? Object.keys(CIELO_BRANDS).find((ours) => CIELO_BRANDS[ours] === renewed.Brand) ?? null;
        return { ...result, cardToken: token, ...(brand ? { replacedCard: { lastFour: renewed.CardNumber.slice(-4), brand } } : {}) };
      }
      this.logger.warn({ provider: CIELO, reference, status: answer.status }, 'Cielo did not tokenize the issuer’s new card (NewCard): the subscription keeps its card');
    } catch (error) {
      this.logger.warn({ provider: CIELO, reference, err: (error as Error).message }, 'Cielo did not answer the tokenization of the issuer’s new card (NewCard): the subscription keeps its card');
    }
    return result;
  }

  /**
   * Cielo cannot close a reference (no idempotency, nothing cancels a POST on its way): the payment made is
   * answered if one shows; none is taken as "none will come" only when the sale was never sent, or was sent
   * CIELO_NOT_FOUND_AFTER_SECONDS ago; before that this throws, and the janitor asks again.
   */
  async voidCharge(reference: string, sentAt: Date | null): Promise<ChargeResult | null> {
    const found = await this.findCharge(reference);
    if (found || sentAt === null) return found;
    const waitedMs = Date.now() - sentAt.getTime();
    if (waitedMs >= this.settings.notFoundAfterSeconds * 1000) return null;
    throw new CieloUnavailableError(
      `Cielo has no payment under ${this.orderId(reference)} yet; sent ${Math.round(waitedMs / 1000)} s ago, it is taken as never made after ${this.settings.notFoundAfterSeconds} s`,
    );
  }

  /**
   * A refund by void (ref §4.2): `PUT /1/sales/{PaymentId}/void?amount=` in cents on the transactional
   * host. Cielo has no idempotency on voids, so a void is never sent twice: the payment is fetched first
   * (`GET /1/sales/{PaymentId}`, query host) and its VoidedAmount compared with what this gateway's
   * completed refunds gave back (`refundedBeforeCents`): already that plus this refund means the refund was
   * made and its answer lost (COMPLETED, nothing sent). A refund waits its turn (answered PENDING, sent by
   * the janitor later, never refused) while an older refund of the sale is pending, within Cielo's pause
   * between voids of one sale (5 s), and while a void it sent may still be answered. Cielo's answer: the
   * Status and ReturnCode say whether the void was made (COMPLETED), refused (CardRefundRefusedError with
   * Cielo's code and text: the refund FAILED), not done yet (PENDING: asked again) or unknown (thrown:
   * left pending, fetched again before anything is sent).
   */
  async refundCharge(request: CardRefundRequest): Promise<CardRefundAnswer> {
    const pauseMs = (this.settings.voidPauseSeconds ?? VOID_PAUSE_SECONDS) * 1000;
    const now = Date.now();
    if (request.earlierPending) return { status: 'PENDING' };
    if (request.lastRefundAt && now - request.lastRefundAt.getTime() < pauseMs) return { status: 'PENDING' };
    if (request.sentAt && now - request.sentAt.getTime() < (this.settings.timeoutMs ?? 0) + pauseMs) return { status: 'PENDING' };
    const paymentId = request.externalId || (await this.findCharge(request.reference))?.externalId;
    if (!paymentId) throw new CardRefundRefusedError(`Cielo holds no payment for the sale ${request.reference}: nothing to void`);
    const found = await this.client.query(`/1/sales/${encodeURIComponent(paymentId)}`);
    if (found.status === 404) throw new CardRefundRefusedError(`Cielo does not show payment ${paymentId} (older than three months, or not this store's): nothing to void`);
    const payment = (found.body as CieloSale | null)?.Payment ?? {};
    const status = Number(payment.Status);
    const before = request.refundedBeforeCents ?? 0;
    const voided = voidedCents(payment);
    if (voided >= before + request.amountCents) {
      this.logger.warn({ provider: CIELO, reference: request.reference, refundId: request.refundId, paymentId, voided }, 'Cielo shows a refund’s void made (its answer was lost): completed without a second void');
      return { status: 'COMPLETED', externalId: paymentId };
    }
    if (voided > before) {
      // Neither this refund's void (it would cover it) nor none: a void made elsewhere (the back office)
      // that this gateway has not booked yet. Nothing is sent; the notification's booking comes first.
      throw new CieloUnavailableError(`Cielo shows ${voided} cents voided of payment ${paymentId}, and this gateway's refunds ${before}: refund ${request.refundId} waits until the difference is booked`);
    }
    if (status !== 1 && status !== 2) throw new CardRefundRefusedError(`Cielo cannot void payment ${paymentId} in Status ${String(payment.Status)} (ref §3.1)`);
    const captured = status === 1 ? (payment.Amount ?? 0) : (payment.CapturedAmount ?? payment.Amount ?? 0);
    const full = before + request.amountCents >= captured;
    if (payment.Type === 'DebitCard' && !full && voided > 0) {
      throw new CardRefundRefusedError(`Cielo allows one partial void of a debit sale, and payment ${paymentId} has one: refund what is left in full instead`);
    }
    // An authorized, uncaptured sale is voided whole, without an amount (ref §12.6).
    const query = status === 1 ? '' : `?amount=${request.amountCents}`;
    if (request.onSend && !(await request.onSend())) return { status: 'PENDING' };
    const answer = await this.client.send('PUT', `/1/sales/${encodeURIComponent(paymentId)}/void${query}`);
    if (answer.status === 200 || answer.status === 201) return this.voidOutcome(request, paymentId, (answer.body ?? {}) as CieloVoidAnswer);
    if (answer.status >= 400 && answer.status < 500 && answer.status !== 408 && answer.status !== 429) {
      const error = firstCieloError(answer.body);
      const said = error ? `${String(error.Code ?? answer.status)} ${error.Message ?? ''}`.trim() : `HTTP ${answer.status}`;
      throw new CardRefundRefusedError(`Cielo refused the void: ${said}`);
    }
    throw new CieloUnavailableError(`Cielo answered ${answer.status} to the void of refund ${request.refundId}: its outcome is unknown`);
  }

  /** What a void's answer says (ref §4.2's return codes). */
  private voidOutcome(request: CardRefundRequest, paymentId: string, answer: CieloVoidAnswer): CardRefundAnswer {
    const status = Number(answer.Status);
    const code = answer.ReturnCode === undefined ? '' : String(answer.ReturnCode).trim();
    const said = `${code} ${answer.ReturnMessage ?? answer.ReasonMessage ?? ''}`.trim();
    if (VOID_MADE.has(code) || (code === '' && (status === 10 || status === 11))) return { status: 'COMPLETED', externalId: paymentId };
    if (VOID_NOT_DONE_YET.has(code)) {
      this.logger.warn({ provider: CIELO, refundId: request.refundId, paymentId, code }, 'Cielo did not make a void yet (another is processing, or the pause between voids): asked again later');
      return { status: 'PENDING' };
    }
    if (VOID_UNKNOWN.has(code) || code === '') throw new CieloUnavailableError(`Cielo answered the void of refund ${request.refundId} with ${said || `Status ${String(answer.Status)}`}: its outcome is looked up before anything is sent again`);
    throw new CardRefundRefusedError(`Cielo refused the void: ${said}`);
  }

  /**
   * The payment under Cielo's id (`GET /1/sales/{PaymentId}`, query host): our reference from its
   * MerchantOrderId (null when it is not one of this gateway's), its state as a charge, and what was voided
   * of it. Null when Cielo shows none (404: unknown, another store's, or older than three months).
   */
  async findPayment(externalId: string): Promise<CardPayment | null> {
    if (!isCieloPaymentId(externalId)) return null;
    const found = await this.client.query(`/1/sales/${encodeURIComponent(externalId)}`);
    if (found.status === 404 || !found.body) return null;
    const sale = found.body as CieloSale;
    const reference = referenceOfCieloOrder(this.settings.orderIdPrefix, sale.MerchantOrderId);
    const payment = { ...(sale.Payment ?? {}), PaymentId: sale.Payment?.PaymentId ?? externalId };
    return { reference, charge: resultOf(payment), refundedCents: cents(voidedCents(payment)) };
  }
}

/** Void return codes (ref §4.2): made (0, 9); not done, a void of the sale pending or within the pause (10, 223, 476); unknown, looked up before anything is sent again. */
const VOID_MADE = new Set(['0', '00', '9', '09']);
const VOID_NOT_DONE_YET = new Set(['10', '223', '476']);
const VOID_UNKNOWN = new Set(['5', '57', '99', '97', '98', '504', 'BP900', 'BP903']);

/** What Cielo gave back of a payment: its VoidedAmount (the sum of its voids), or all of it once it is Voided or Refunded without one. */
function voidedCents(payment: CieloPayment): number {
  if (typeof payment.VoidedAmount === 'number') return payment.VoidedAmount;
  const status = Number(payment.Status);
  return status === 10 || status === 11 ? (payment.CapturedAmount ?? payment.Amount ?? 0) : 0;
}

/** What a payment's `Status` means for its sale (ref §3.1, §12.4), with Cielo's ReturnCode and ReturnMessage. */
function resultOf(payment: CieloPayment): ChargeResult {
  const status = Number(payment.Status);
  const externalId = payment.PaymentId ?? '';
  const acquirerReturn: AcquirerReturn | null = payment.ReturnCode !== undefined ? { code: String(payment.ReturnCode), message: payment.ReturnMessage ?? '' } : null;
  const said = acquirerReturn ? `${acquirerReturn.code} ${acquirerReturn.message}`.trim() : `Status ${status}`;
  switch (status) {
    case 2:
      return {
        outcome: 'APPROVED',
        externalId,
        reason: null,
        acquirerReturn,
        capturedCents: typeof payment.CapturedAmount === 'number' ? cents(payment.CapturedAmount) : null,
      };
    case 3:
      return { outcome: 'REFUSED', externalId, reason: `Refused by the issuer: ${said}`, acquirerReturn };
    case 12:
      return { outcome: 'PENDING', externalId, reason: null, acquirerReturn };
    case 0:
    case 13:
      return { outcome: 'FAILED', externalId, reason: `Cielo could not process it (Status ${status}): ${said}`, acquirerReturn };
    // Authorized but not captured although Capture was asked, or voided at Cielo: nothing stays captured.
    case 1:
    case 10:
    case 11:
      return { outcome: 'FAILED', externalId, reason: `Cielo holds it uncaptured or voided (Status ${status}): ${said}`, acquirerReturn };
    default:
      // Never adopted (ref §12.4): the sale stays as it is and is asked about again.
      throw new CieloUnavailableError(`Cielo reported payment ${externalId} in Status ${String(payment.Status)}, which a card sale here cannot be in`);
  }
}

/** The seller's invoice descriptor as Cielo takes it: letters, digits and spaces, at most 13; none when nothing is left. */
/** The script's answer as Cielo's `Payment.ExternalAuthentication` (ref §8.4): Xid only when the script gave one. */
function externalAuthentication(authentication: ThreeDSecureResult): Record<string, string> {
  return {
    Cavv: authentication.cavv,
    ...(authentication.xid ? { Xid: authentication.xid } : {}),
    Eci: authentication.eci,
    Version: authentication.version,
    ReferenceId: authentication.referenceId,
  };
}

export function softDescriptor(descriptor: string | null): string | null {
  if (!descriptor) return null;
  const ascii = descriptor.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^A-Za-z0-9 ]/g, '').replace(/\s+/g, ' ').trim();
  return ascii.slice(0, SOFT_DESCRIPTOR_MAX).trim() || null;
}

/** The holder's name as Cielo takes it: no accents or symbols, at most 25 characters. */
function holderName(name: string): string {
  const plain = name.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^A-Za-z ]/g, '').replace(/\s+/g, ' ').trim();
  return plain.slice(0, HOLDER_MAX).trim() || 'TITULAR';
}

/**
 * The card part of a sale's Payment (ref §2.3, §6): the card itself for a first charge (saved, with
 * CardOnFile First/Recurring, when it opens a subscription), or the subscription's token for a renewal or
 * retry (no CVV: a merchant-initiated recurring charge, `Recurrent` with CardOnFile Used/Recurring).
 * Mastercard with stored credentials also carries who initiated it (ref §6.4).
 */
function paymentCard(request: ChargeRequest): Record<string, unknown> {
  const card = request.card;
  if (card) {
    const brand = CIELO_BRANDS[detectCardBrand(card.number) ?? ''];
    if (!brand) throw new Error(`Cielo was asked to charge ${request.reference} with a card of a brand it does not take`);
    const saving = request.saveCard === true;
    return {
      ...(saving && brand === 'Master' ? { InitiatedTransactionIndicator: { Category: 'C1', Subcategory: 'Subscription' } } : {}),
      // A debit card is its own node (ref §2.3); only a credit card is saved for renewals.
      [request.method === 'DEBIT_CARD' ? 'DebitCard' : 'CreditCard']: {
        CardNumber: card.number,
        Holder: holderName(card.holderName),
        ExpirationDate: `${card.expirationMonth}/${card.expirationYear}`,
        SecurityCode: card.cvv,
        Brand: brand,
        ...(saving ? { SaveCard: true, CardOnFile: { Usage: 'First', Reason: 'Recurring' } } : {}),
      },
    };
  }
  const brand = CIELO_BRANDS[request.brand ?? ''];
  if (!request.token) throw new Error(`Cielo was asked to charge ${request.reference} with neither a card nor a stored card's token`);
  if (!brand) throw new Error(`Cielo was asked to charge ${request.reference} with a stored card of a brand it does not take (${request.brand ?? 'none'})`);
  return {
    Recurrent: true,
    ...(brand === 'Master' ? { InitiatedTransactionIndicator: { Category: 'M1', Subcategory: 'Subscription' } } : {}),
    CreditCard: { CardToken: request.token, Brand: brand, CardOnFile: { Usage: 'Used', Reason: 'Recurring' } },
  };
}

/** Cielo's booleans come as JSON booleans or as strings (ref §2.2). */
function truthy(value: unknown): boolean {
  return value === true || value === 'true' || value === 'True';
}
