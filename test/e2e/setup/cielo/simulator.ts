/**
 * Cielo's API E-commerce 3.0 on real HTTPS sockets, for the e2e tests of a `cielo` card adapter. The protocol
 * is ../shared/reference/cielo-ecommerce-3.0.md (cited below as "ref §n"); every request is judged by
 * cielo-ecommerce-3.0.schemas.json, and so is every answer and notification the simulator makes: a request
 * off it is answered 400 with Cielo's error list (`[{Code, Message}]`, ref §1.4) and lands in `violations`,
 * as does an answer of the simulator's own that is off it.
 *
 * Three servers, one test CA (the adapter's `CIELO_CA_FILE`): the transactional host (`apiUrl`: POST
 * /1/sales/, PUT /1/sales/{PaymentId}/capture and /void, PUT /1/sales/OrderId/{MerchantOrderId}/void), the
 * query host (`queryUrl`: GET /1/sales/{PaymentId}, GET /1/sales?merchantOrderId=, GET
 * /1/sales/acquirerTid/{Tid}) and, with the `mpi` option, the 3-D Secure MPI (`mpiUrl`: POST /v2/auth/token
 * and /v3/auth/token, HTTP Basic client credentials, ref §8.2). Every API call carries `MerchantId` and
 * `MerchantKey` (ref §1.2); `RequestId`, optional, must be a GUID. There is **no idempotency** on POST
 * /1/sales (ref §5): two POSTs with one MerchantOrderId make two payments. `saleLatencyMs` (0) makes every
 * POST /1/sales wait that long before it is handled, as a real acquirer takes hundreds of milliseconds to
 * answer (the latency benchmark, bench/acquirer-latency.js).
 *
 * Points the reference leaves **unconfirmed** are options (`CieloSimulatorOptions`), default first:
 *
 * - `orderListKey` 'Payments' (Java SDK; the GitHub manual shows 'Payment') and `orderDateKey`
 *   'ReceivedDate' (portal; the manual spells 'ReceveidDate'): the shape of GET /1/sales?merchantOrderId= (§5).
 * - `emptyOrderQuery` 'not-found': an order with no payment answers 404 (ref §1.3); 'empty-list' answers 200
 *   with an empty list. `orderQueryDelayMs` 0: how long a new sale stays invisible to that query (§5 step 3).
 * - `unauthorized` 'empty': a wrong or missing MerchantId/MerchantKey is a 401 without body (§1.3, stated
 *   for the Braspag gateway); 'error-list' adds `[{Code: 101|114|115|131|132, Message}]`.
 * - `caseInsensitiveEnums` false: `Type`, `Brand`, `Interest`, `CardOnFile` values are case-sensitive (§2.2).
 * - `acceptHiper` false: `Hiper` is not a brand (only `Hipercard`, §2.3).
 * - `digit6` 'denied': a card ending in 6 is `Status` 3 / 99 Time Out (§3.2); 'not-finished' answers 0.
 * - `digit9` 'random': a card ending in 9 is approved or 99 Time Out at random (§3.2); 'approved', 'denied'.
 * - `cvvWithToken` 'optional': a CardToken sale needs no SecurityCode (GitHub table, §6.2);
 *   'merchant-initiated-only' denies (`Status` 3, `ReturnCode` N7) a token sale without CVV unless it is
 *   `Recurrent` or `CardOnFile.Usage` Used (the portal's rule for merchants without the no-CVV permission).
 * - `newCardReturnCode` 'KA' (the manual's example; its text says 57): the denial that carries `NewCard` (§6.5).
 * - `secondFullVoid` 'error-309': voiding a sale already fully voided answers 400 [{Code 309}]; 'void-code-17'
 *   answers 200 with the sale's `Status` and `ReturnCode` 17 (§4.2).
 * - `voidIntervalMs` 5000: a void within 5 s of the previous void of the same sale does nothing and answers
 *   200 with `ReturnCode` 476 (§4.2: codes 10/223/476 "may" be used); 0 turns the rule off.
 * - `authorizedVoidWithAmount` 'accept-total': on an uncaptured sale (`Status` 1) `amount` equal to the total
 *   is a full void; a smaller amount answers `ReturnCode` 41 (§12.6).
 * - `notifyOwnChanges` false: changes the merchant made through the API (capture, void) are not notified;
 *   changes of Cielo's own (a pending sale settled, a back-office void) are (§10, "only selected events").
 * - `changeTypeAsString` false: `ChangeType` is a JSON number (old pages show "2", §10).
 * - `notificationRetryDelaysMs` []: a notification not answered 200 is retried after each delay (the real
 *   schedule, "every 30 minutes, three attempts", is unconfirmed, §10).
 * - `debitWithoutAuthentication` 'denied': `Authenticate` false on a debit (allowed only with the issuer's
 *   permission, §8.1) answers `Status` 3 / `ReturnCode` 57; 'approved'.
 * - `unauthenticatedDebit` 'denied': a debit whose `Eci` is not authenticated for its brand (§8.5) is
 *   `Status` 3 / 57; 'approved' leaves that to the issuer's whim. `DataOnly` true (§8.4) is approved.
 * - `returnPaymentEci` true: the answer carries `Payment.Eci` (§2.5, D-CL-NOV25).
 * - `mpi.expiresIn` 'timestamp': the MPI token's `expires_in` is a local date-time like the manual's example;
 *   'minutes' answers a number of minutes (the manual's table, §8.2). Both `/v2` and `/v3/auth/token` are
 *   served (same credentials, §8.7), answering 200 (the status is not documented); a wrong client is a 401
 *   without body. INIT/ENROLL/VALIDATE of MPI V3 are not played (unconfirmed).
 * - Choices of the simulator where the reference gives no code: an off-schema field with no documented code
 *   answers `[{Code: 0, Message: "<the schema's complaint>"}]`; `Installments` above `maxInstallments` (12) or
 *   an instalment below `minInstallmentCents` (500, D-CL-SEP25) answers Code 186; a PUT on an unknown
 *   PaymentId answers 400 [{Code 307}], a GET 404; `SaveCard` with a number failing Luhn answers 400 [{Code
 *   213}]; a `CardToken` is answered only on an approved sale (`tokenOnDenied` false). With `strictHosts`
 *   (true) a call on the wrong host is 404 and a violation.
 * - Boleto (ref §9): `Provider` one of `boletoBanks` (['Simulado']; another is 129 Affiliation not found),
 *   the payer's CPF/CNPJ and a known ZIP code required (one starting 000 is refused, Code 0: the simulator's
 *   choice), Banco do Brasil's payer rules kept (upper-case, 60-character address, 18-character city; refused
 *   with Code 0 otherwise; its nosso número cut to 9 digits, its answer without DigitableLine). `Status` 1
 *   with Url, Number, BarCodeNumber and DigitableLine; `payBoleto` makes it 2 (notified, ChangeType 1, unless
 *   `delivery` says otherwise). Not voidable.
 * - Queries (ref §5): only sales received in the last three months (by the simulator's clock, calendar
 *   months) are found: GET /1/sales/{PaymentId} and by Tid answer 404 for an older one, and the look-up by
 *   MerchantOrderId leaves it out.
 */
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { IncomingHttpHeaders, IncomingMessage, request as httpRequest, ServerResponse } from 'node:http';
import { createServer, request as httpsRequest, Server } from 'node:https';
import { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { FaultFilter, FaultPlan } from '../api-pix/faults';
import {
  approvedOutcome,
  authenticatedEci,
  CieloBrand,
  CieloOutcome,
  eciAuthenticated,
  failedEci,
  luhnValid,
  maskPan,
  MPI_TEST_CARDS,
  MpiEvent,
  OPERATION_SUCCESSFUL,
  SANDBOX_DENIALS,
  sandboxCard,
} from './cards';
import { boletoNumbers } from './boleto';
import { CieloSchemaName, errorText, SchemaError, schemaErrors, validateCielo } from './schemas';

export interface CieloCertificates {
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
}

export interface CieloMpiOptions {
  clientId: string;
  clientSecret: string;
  /** Lifetime of an access token in minutes; 20 when absent. */
  tokenTtlMinutes?: number;
  expiresIn?: 'timestamp' | 'minutes';
}

export interface CieloSimulatorOptions {
  certs: CieloCertificates;
  merchantId: string;
  merchantKey: string;
  /** Serves the MPI's token endpoint for debit's 3-D Secure (ref §8.2). */
  mpi?: CieloMpiOptions;
  /** The notification URL registered at Cielo (ref §10); set later with setNotificationUrl. */
  notificationUrl?: string;
  /** Up to 3 static headers Cielo sends with each notification (ref §10). */
  notificationHeaders?: Record<string, string>;
  orderListKey?: 'Payments' | 'Payment';
  orderDateKey?: 'ReceivedDate' | 'ReceveidDate';
  emptyOrderQuery?: 'not-found' | 'empty-list';
  orderQueryDelayMs?: number;
  unauthorized?: 'empty' | 'error-list';
  caseInsensitiveEnums?: boolean;
  acceptHiper?: boolean;
  digit6?: 'denied' | 'not-finished';
  digit9?: 'random' | 'approved' | 'denied';
  cvvWithToken?: 'optional' | 'merchant-initiated-only';
  newCardReturnCode?: 'KA' | '57';
  secondFullVoid?: 'error-309' | 'void-code-17';
  voidIntervalMs?: number;
  authorizedVoidWithAmount?: 'accept-total' | 'refuse';
  notifyOwnChanges?: boolean;
  changeTypeAsString?: boolean;
  notificationRetryDelaysMs?: number[];
  debitWithoutAuthentication?: 'denied' | 'approved';
  unauthenticatedDebit?: 'denied' | 'approved';
  returnPaymentEci?: boolean;
  maxInstallments?: number;
  minInstallmentCents?: number;
  tokenOnDenied?: boolean;
  strictHosts?: boolean;
  /** The bank contracts the store is affiliated to for boletos (ref §9); another `Provider` is 129 Affiliation not found. */
  boletoBanks?: string[];
  /**
   * Milliseconds every POST /1/sales waits before it is handled (the issuer thinking): a real acquirer's
   * answer time, on every sale, on top of any fault planned. 0 (the default): handled at once.
   */
  saleLatencyMs?: number;
}

export type CieloHost = 'transactional' | 'query' | 'mpi';

export type CieloOperation = 'sale' | 'capture' | 'void' | 'void-by-order' | 'get-sale' | 'get-by-order' | 'get-by-tid' | 'mpi-token' | 'card-token' | 'other';

/** One request the simulator received, secrets redacted; `status` 0 when the answer was lost. */
export interface CieloRecordedRequest {
  at: string;
  host: CieloHost;
  method: string;
  /** Path and query string, as sent. */
  path: string;
  operation: CieloOperation;
  merchantOrderId?: string;
  paymentId?: string;
  /** MerchantKey and Authorization redacted. */
  headers: Record<string, string>;
  /** The parsed JSON body, card numbers masked, SecurityCode, Cavv and Cryptogram redacted, CardToken cut to its last 4. */
  body: unknown;
  status: number;
}

/** A payment as the simulator holds it (no PAN, no CVV). */
export interface CieloPayment {
  paymentId: string;
  merchantOrderId: string;
  sentOrderId: string;
  type: 'CreditCard' | 'DebitCard' | 'Boleto';
  amount: number;
  status: number;
  returnCode?: string;
  returnMessage?: string;
  receivedAt: Date;
  installments?: number;
  interest?: string;
  capture: boolean;
  recurrent: boolean;
  brand?: string;
  maskedCardNumber?: string;
  cardToken?: string;
  /** The token the sale was charged with (a CardToken sale). */
  chargedWithToken?: string;
  cardOnFile?: { Usage?: string; Reason?: string };
  securityCodeSent: boolean;
  capturedAmount?: number;
  capturedAt?: Date;
  voidedAmount: number;
  voidedAt?: Date;
  voids: number;
  tid: string;
  proofOfSale?: string;
  authorizationCode?: string;
  eci?: string;
  newCard?: { CardNumber: string; ExpirationDate: string; Brand: string; SaveCard: boolean };
  boleto?: { Url: string; Number: string; BarCodeNumber: string; DigitableLine?: string; ExpirationDate: string };
}

/** How a notification reaches the merchant: 'twice' plays a duplicate, 'never' a lost one. */
export type CieloDelivery = 'once' | 'twice' | 'never';

/** One notification POST the simulator made (or lost: `lost` true, never sent). */
export interface CieloNotification {
  url: string;
  body: Record<string, unknown>;
  forged: boolean;
  lost: boolean;
  /** Names of the headers sent (their values are secrets). */
  headerNames: string[];
  status: number;
  error?: string;
}

interface Answer {
  status: number;
  body?: unknown;
}

interface Call {
  host: CieloHost;
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  rawBody: string;
}

interface StoredCard {
  number: string;
  holder: string;
  expirationDate: string;
  brand: string;
}

interface IssuerUpdate {
  CardNumber: string;
  ExpirationDate: string;
  Brand: string;
}

type Json = Record<string, unknown>;

/** The error list answer (ref §1.4), raised by the handlers. */
class CieloRefusal extends Error {
  constructor(readonly answer: Answer) {
    super(`refused ${answer.status}`);
  }
}

const API_PATH = /^\/1\//;
const SAO_PAULO_OFFSET_MS = -3 * 3600_000;
const DAY_MS = 86_400_000;

/**
 * The payer a bank registers a boleto to (ref §9 "Customer data"): CPF/CNPJ, and a ZIP code the bank knows
 * (the simulator's choice: one starting 000 is unknown, Code 0); Banco do Brasil's name and address in
 * upper-case letters (with `-`, `'` and the address's digits), street, number and complement within 60
 * characters together, the city within 18.
 */
function checkBoletoPayer(bank: string, customer: Json): void {
  if (!customer.Identity) throw errors([104, 'Customer Identity is required']);
  const address = (customer.Address ?? {}) as Record<string, string | undefined>;
  if (!/^\d{8}$/.test(address.ZipCode ?? '') || (address.ZipCode ?? '').startsWith('000')) throw errors([0, 'Customer.Address.ZipCode is not a valid CEP']);
  if (!bank.startsWith('BancoDoBrasil')) return;
  if (!/^[A-Z '-]+$/.test(String(customer.Name ?? ''))) throw errors([0, 'Banco do Brasil: Customer.Name must be upper-case letters, - and \' only']);
  for (const field of ['Street', 'Number', 'Complement', 'City', 'District']) {
    if (address[field] !== undefined && !/^[A-Z0-9 '-]*$/.test(address[field] ?? '')) throw errors([0, `Banco do Brasil: Customer.Address.${field} must be upper-case letters, digits, - and ' only`]);
  }
  if ((address.Street ?? '').length + (address.Number ?? '').length + (address.Complement ?? '').length > 60) throw errors([0, 'Banco do Brasil: the address is over 60 characters']);
  if ((address.City ?? '').length > 18) throw errors([0, 'Banco do Brasil: Customer.Address.City is over 18 characters']);
}

function errors(...list: Array<[number, string]>): CieloRefusal {
  return new CieloRefusal({ status: 400, body: list.map(([Code, Message]) => ({ Code, Message })) });
}

/**
 * The simulator. Start it with `CieloSimulator.start(options)`; point the adapter at `apiUrl`, `queryUrl`,
 * `mpiUrl` (see gatewayEnv). Scenario controls choose outcomes, play Cielo's later changes and notifications,
 * and plan faults; `requests`, `payments`, `postsFor` and `violations` tell what the adapter did.
 */
export class CieloSimulator {
  /** `https://127.0.0.1:<port>` of the transactional host. */
  apiUrl = '';
  /** `https://127.0.0.1:<port>` of the query host. */
  queryUrl = '';
  /** `https://127.0.0.1:<port>` of the MPI (empty without the `mpi` option). */
  mpiUrl = '';
  readonly violations: string[] = [];
  readonly requests: CieloRecordedRequest[] = [];
  readonly notifications: CieloNotification[] = [];
  private readonly sales = new Map<string, CieloPayment>();
  private readonly cards = new Map<string, StoredCard>();
  private readonly declines = new Map<string, { returnCode: string; returnMessage: string }>();
  private readonly issuerUpdates = new Map<string, IssuerUpdate>();
  private readonly outcomes: CieloOutcome[] = [];
  private readonly mpiTokens = new Map<string, { expiresAt: number; used: boolean }>();
  private readonly faults = new FaultPlan();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly servers: Server[] = [];
  private lostNotifications = 0;
  private duplicatedNotifications = 0;
  private clockOffsetMs = 0;
  private notificationUrl: string | undefined;
  private ca: Buffer;

  private constructor(private readonly options: CieloSimulatorOptions) {
    this.notificationUrl = options.notificationUrl;
    if (Object.keys(options.notificationHeaders ?? {}).length > 3) throw new Error('Cielo sends at most 3 notification headers (ref §10)');
  }

  static async start(options: CieloSimulatorOptions): Promise<CieloSimulator> {
    const simulator = new CieloSimulator(options);
    const [ca, cert, key] = await Promise.all([options.certs.caFile, options.certs.serverCertFile, options.certs.serverKeyFile].map((file) => readFile(file)));
    simulator.ca = ca;
    simulator.apiUrl = await simulator.listen('transactional', { cert, key });
    simulator.queryUrl = await simulator.listen('query', { cert, key });
    if (options.mpi) simulator.mpiUrl = await simulator.listen('mpi', { cert, key });
    return simulator;
  }

  /** The variables of issue 39 pointing the gateway here; `notificationUrl` is the gateway's intake. */
  gatewayEnv(notificationUrl?: string): Record<string, string> {
    const env: Record<string, string> = {
      CARD_PROVIDER: 'cielo',
      CIELO_MERCHANT_ID: this.options.merchantId,
      CIELO_MERCHANT_KEY: this.options.merchantKey,
      CIELO_API_URL: this.apiUrl,
      CIELO_QUERY_URL: this.queryUrl,
      CIELO_CA_FILE: this.options.certs.caFile,
    };
    if (notificationUrl) env.CIELO_NOTIFICATION_URL = notificationUrl;
    if (this.options.mpi) {
      Object.assign(env, {
        CIELO_3DS_URL: this.mpiUrl,
        CIELO_3DS_CLIENT_ID: this.options.mpi.clientId,
        CIELO_3DS_CLIENT_SECRET: this.options.mpi.clientSecret,
        CIELO_3DS_ESTABLISHMENT_CODE: '1234567890',
        CIELO_3DS_MERCHANT_NAME: 'Loja Exemplo',
        CIELO_3DS_MCC: '5912',
      });
    }
    return env;
  }

  /** The bank contracts the store is affiliated to for boletos from now on (the `boletoBanks` option). */
  setBoletoBanks(banks: string[]): void {
    this.options.boletoBanks = banks;
  }

  setNotificationUrl(url: string | undefined): void {
    this.notificationUrl = url;
  }

  // ---------------------------------------------------------------- outcomes

  /** Every sale on `cardNumber` (by PAN, or a token saved from it) is denied with `returnCode` until approve(). */
  decline(cardNumber: string, returnCode: string, returnMessage = 'Não Autorizada'): void {
    this.declines.set(cardNumber, { returnCode, returnMessage });
  }

  /** Undoes decline(): the card follows the sandbox's last-digit rule again. */
  approve(cardNumber: string): void {
    this.declines.delete(cardNumber);
  }

  /** The next `count` card sales get `outcome`, whatever their card (queued before every other rule). */
  outcomeNext(outcome: CieloOutcome, count = 1): void {
    for (let i = 0; i < count; i += 1) this.outcomes.push({ ...outcome });
  }

  /** The next `count` card sales answer `Status` 12 Pending (the institution has not answered); see settle(). */
  pendingNext(count = 1): void {
    this.outcomeNext({ status: 12, returnCode: '0', returnMessage: 'Pending' }, count);
  }

  /** The next `count` card sales answer `Status` 0 NotFinished (a processing failure, ref §3.1). */
  notFinishedNext(count = 1): void {
    this.outcomeNext({ status: 0, returnCode: '99', returnMessage: 'Time Out' }, count);
  }

  /** The next `count` card sales answer `Status` 13 Aborted. */
  abortNext(count = 1): void {
    this.outcomeNext({ status: 13, returnCode: 'BP900', returnMessage: 'Aborted' }, count);
  }

  /**
   * The issuer's updater (Renova Fácil / ABU, ref §6.5) knows a new card for `cardNumber`: the next sale on it
   * is denied (`newCardReturnCode`) and carries `Payment.NewCard`. Returns the new card.
   */
  issuerUpdate(cardNumber: string, newCard?: Partial<IssuerUpdate>): IssuerUpdate {
    const brand = newCard?.Brand ?? this.brandOfPan(cardNumber) ?? 'Visa';
    const update: IssuerUpdate = {
      CardNumber: newCard?.CardNumber ?? sandboxCard(1, brand as CieloBrand, randomInt(1_000_000)),
      ExpirationDate: newCard?.ExpirationDate ?? `12/${this.now().getUTCFullYear() + 4}`,
      Brand: brand,
    };
    this.issuerUpdates.set(cardNumber, update);
    return update;
  }

  // ---------------------------------------------------------------- Cielo's own changes

  /**
   * A sale Pending (12) or NotFinished (0) gets its final answer: 'approved' (2, or 1 without Capture) or
   * 'denied' (3, `returnCode` 05 by default); notified (ChangeType 1) as `delivery` says.
   */
  async settle(paymentId: string, result: 'approved' | 'denied', options: { delivery?: CieloDelivery; returnCode?: string; returnMessage?: string } = {}): Promise<CieloPayment> {
    const sale = this.mustFind(paymentId);
    if (sale.status !== 12 && sale.status !== 0) throw new Error(`payment ${paymentId} is not pending (Status ${sale.status})`);
    const outcome: CieloOutcome =
      result === 'approved' ? approvedOutcome(sale.capture) : { status: 3, returnCode: options.returnCode ?? '05', returnMessage: options.returnMessage ?? 'Não Autorizada' };
    this.apply(sale, outcome);
    await this.notify(paymentId, { delivery: options.delivery });
    return sale;
  }

  /** A void or refund made in Cielo's back office (all of what is left by default), then notified. */
  async backOfficeVoid(paymentId: string, options: { amount?: number; delivery?: CieloDelivery } = {}): Promise<CieloPayment> {
    const sale = this.mustFind(paymentId);
    if (sale.status !== 1 && sale.status !== 2) throw new Error(`payment ${paymentId} cannot be voided (Status ${sale.status})`);
    const left = (sale.capturedAmount ?? sale.amount) - sale.voidedAmount;
    this.voidAmount(sale, options.amount ?? left);
    await this.notify(paymentId, { delivery: options.delivery });
    return sale;
  }

  /** A boleto is paid (ref §9: `Status` 2), then notified. */
  async payBoleto(paymentId: string, options: { delivery?: CieloDelivery } = {}): Promise<CieloPayment> {
    const sale = this.mustFind(paymentId);
    if (sale.type !== 'Boleto' || sale.status !== 1) throw new Error(`payment ${paymentId} is not an open boleto`);
    sale.status = 2;
    sale.capturedAmount = sale.amount;
    sale.capturedAt = this.now();
    await this.notify(paymentId, { delivery: options.delivery });
    return sale;
  }

  // ---------------------------------------------------------------- notifications

  /**
   * POSTs `{PaymentId, ChangeType}` (ref §10) to the notification URL with the configured headers: once,
   * twice or never (lost) as `delivery` says, unless loseNextNotifications/duplicateNextNotifications say
   * otherwise. Resolves once every delivery is answered.
   */
  async notify(paymentId: string, options: { changeType?: number; recurrentPaymentId?: string; delivery?: CieloDelivery } = {}): Promise<CieloNotification[]> {
    const changeType = options.changeType ?? 1;
    const body: Json = { PaymentId: paymentId, ChangeType: this.options.changeTypeAsString ? String(changeType) : changeType };
    if (options.recurrentPaymentId) body.RecurrentPaymentId = options.recurrentPaymentId;
    this.violations.push(...validateCielo('Notification', body).map((text) => `notification: ${text}`));
    let delivery = options.delivery ?? 'once';
    if (this.lostNotifications > 0) {
      this.lostNotifications -= 1;
      delivery = 'never';
    } else if (this.duplicatedNotifications > 0) {
      this.duplicatedNotifications -= 1;
      delivery = 'twice';
    }
    const url = this.notificationUrl;
    if (!url) return [];
    if (delivery === 'never') {
      const lost: CieloNotification = { url, body, forged: false, lost: true, headerNames: [], status: 0 };
      this.notifications.push(lost);
      return [lost];
    }
    const sent: CieloNotification[] = [];
    for (let i = 0; i < (delivery === 'twice' ? 2 : 1); i += 1) sent.push(await this.deliver(url, body, this.options.notificationHeaders ?? {}, false));
    return sent;
  }

  /** The next `count` notifications are lost (recorded with `lost` true, never sent). */
  loseNextNotifications(count = 1): void {
    this.lostNotifications += count;
  }

  /** The next `count` notifications are delivered twice. */
  duplicateNextNotifications(count = 1): void {
    this.duplicatedNotifications += count;
  }

  /**
   * Someone else posts a notification: a random PaymentId unless given (one of a real payment plays a
   * replay), without Cielo's headers unless `headers` are given.
   */
  async forgeNotification(options: { paymentId?: string; changeType?: number | string; headers?: Record<string, string>; url?: string } = {}): Promise<CieloNotification> {
    const url = options.url ?? this.notificationUrl;
    if (!url) throw new Error('no notification URL');
    return this.deliver(url, { PaymentId: options.paymentId ?? randomUUID(), ChangeType: options.changeType ?? 1 }, options.headers ?? {}, true);
  }

  // ---------------------------------------------------------------- 3-D Secure (the shopper's browser)

  /**
   * What Cielo's `BP.Mpi` script gives the checkout page for `cardNumber` (ref §8.3, §8.6), spending the
   * single-use access token (ref §8.2, D-MPI21): the event, and the fields to send in
   * `Payment.ExternalAuthentication`. A card outside the MPI's test table authenticates; an unknown, spent
   * or expired token gives `onError`.
   */
  authenticate(accessToken: string, cardNumber: string): { event: MpiEvent; Cavv?: string; Xid?: string; Eci: string; Version: string; ReferenceId: string } {
    const token = this.mpiTokens.get(accessToken);
    const referenceId = randomUUID();
    const test = MPI_TEST_CARDS[cardNumber];
    const brand = test?.brand ?? this.brandOfPan(cardNumber) ?? 'Visa';
    if (!token || token.used || token.expiresAt < this.now().getTime()) return { event: 'onError', Eci: failedEci(brand), Version: '2', ReferenceId: referenceId };
    token.used = true;
    const event = test?.event ?? 'onSuccess';
    if (event === 'onSuccess') return { event, Cavv: randomBytes(20).toString('base64'), Eci: authenticatedEci(brand), Version: '2', ReferenceId: referenceId };
    return { event, Eci: failedEci(brand), Version: '2', ReferenceId: referenceId };
  }

  get mpiTokensIssued(): number {
    return this.mpiTokens.size;
  }

  // ---------------------------------------------------------------- faults

  /** The next `count` matching calls (API paths by default) answer `status` (503) before anything is registered. */
  failNext(count: number, options: FaultFilter & { status?: number; body?: unknown } = {}): void {
    this.faults.failNext(count, options.status ?? 503, { path: options.path ?? API_PATH, method: options.method }, undefined, options.body);
  }

  /** The next `count` matching calls are handled (the payment registered), then the connection is destroyed. */
  dropAnswerNext(count: number, options: FaultFilter = {}): void {
    this.faults.dropNext(count, { path: options.path ?? API_PATH, method: options.method });
  }

  /** The next `count` matching calls are handled at once, their answer written `ms` later (a client timeout). */
  holdAnswerNext(count: number, ms: number, options: FaultFilter = {}): void {
    this.faults.holdNext(count, ms, { path: options.path ?? API_PATH, method: options.method });
  }

  /** The next `count` matching calls wait `ms` before they are handled (slowness: the work is done late). */
  delayNext(count: number, ms: number, options: FaultFilter = {}): void {
    this.faults.delayNext(count, ms, { path: options.path ?? API_PATH, method: options.method });
  }

  // ---------------------------------------------------------------- clock and read-outs

  /** Cielo's clock moves `ms` ahead (a void the next day is a refund, Status 11; the 5 s void pause passes). */
  advanceClock(ms: number): void {
    this.clockOffsetMs += ms;
  }

  now(): Date {
    return new Date(Date.now() + this.clockOffsetMs);
  }

  payment(paymentId: string): CieloPayment | undefined {
    return this.sales.get(paymentId.toLowerCase());
  }

  /** Every payment, or those of one MerchantOrderId, oldest first. */
  payments(merchantOrderId?: string): CieloPayment[] {
    return [...this.sales.values()].filter((sale) => merchantOrderId === undefined || sale.merchantOrderId === merchantOrderId);
  }

  /** How many POST /1/sales the simulator received for `merchantOrderId` (answered, refused or lost). */
  postsFor(merchantOrderId: string): number {
    return this.requests.filter((one) => one.operation === 'sale' && one.merchantOrderId === merchantOrderId).length;
  }

  /** The recorded requests of one operation (all when absent). */
  requestsOf(operation?: CieloOperation): CieloRecordedRequest[] {
    return this.requests.filter((one) => operation === undefined || one.operation === operation);
  }

  clearViolations(): void {
    this.violations.splice(0);
  }

  /** Resolves when background work (notifications and their retries) is done. */
  async whenIdle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  async close(): Promise<void> {
    await this.whenIdle();
    for (const server of this.servers) {
      server.closeAllConnections();
      server.close();
    }
    await Promise.all(this.servers.map((server) => (server.listening ? once(server, 'close') : undefined)));
  }

  // ---------------------------------------------------------------- HTTP

  private async listen(host: CieloHost, tls: { cert: Buffer; key: Buffer }): Promise<string> {
    const server = createServer({ ...tls, minVersion: 'TLSv1.2' }, (request, response) => void this.serve(host, request, response));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    this.servers.push(server);
    return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  private async serve(host: CieloHost, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? '/', 'https://simulator');
    const call: Call = { host, method: request.method ?? 'GET', url, headers: request.headers, rawBody: Buffer.concat(chunks).toString('utf8') };
    const path = url.pathname;
    const latency = this.options.saleLatencyMs ?? 0;
    if (latency > 0 && host === 'transactional' && routeOf(call.method, path)?.operation === 'sale') await sleep(latency);
    const delay = this.faults.takeDelay(call.method, path);
    if (delay > 0) await sleep(delay);
    let answer: Answer;
    const failure = this.faults.takeFailure(call.method, path);
    if (failure) answer = { status: failure.status, ...(failure.body !== undefined ? { body: failure.body } : {}) };
    else answer = this.answer(call);
    const dropped = this.faults.takeDrop(call.method, path);
    this.record(call, dropped ? 0 : answer.status);
    if (dropped) {
      request.socket.destroy();
      return;
    }
    const hold = this.faults.takeHold(call.method, path);
    if (hold > 0) await sleep(hold, undefined, { ref: false });
    if (response.destroyed || request.socket.destroyed) return;
    const payload = answer.body === undefined ? undefined : JSON.stringify(answer.body);
    const headers: Record<string, string | number> = payload === undefined ? { 'Content-Length': 0 } : { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(payload) };
    response.writeHead(answer.status, headers).end(payload);
  }

  private answer(call: Call): Answer {
    try {
      if (call.host === 'mpi') return this.mpiAnswer(call);
      return this.apiAnswer(call);
    } catch (error) {
      if (error instanceof CieloRefusal) {
        this.checkAnswer(call, error.answer);
        return error.answer;
      }
      this.violations.push(`simulator failed on ${call.method} ${call.url.pathname}: ${(error as Error).stack ?? String(error)}`);
      return { status: 500 };
    }
  }

  /** Routing, host, authentication, then the operation; every answer is checked against the schemas. */
  private apiAnswer(call: Call): Answer {
    const route = routeOf(call.method, call.url.pathname);
    if (!route) {
      this.violations.push(`${call.method} ${call.url.pathname} on the ${call.host} host: not an operation of the API`);
      return { status: call.method === 'GET' || call.method === 'POST' || call.method === 'PUT' ? 404 : 405 };
    }
    const expectedHost: CieloHost = route.operation.startsWith('get-') ? 'query' : 'transactional';
    if (expectedHost !== call.host && (this.options.strictHosts ?? true)) {
      this.violations.push(`${call.method} ${call.url.pathname} sent to the ${call.host} host; it belongs on the ${expectedHost} host (ref §1.1)`);
      return { status: 404 };
    }
    this.authenticateMerchant(call.headers);
    const requestId = header(call.headers, 'requestid');
    if (requestId !== undefined && !GUID.test(requestId)) this.violations.push(`${call.method} ${call.url.pathname}: RequestId ${requestId} is not a GUID (ref §1.2)`);
    let answer: Answer;
    switch (route.operation) {
      case 'sale':
        answer = this.createSale(call);
        break;
      case 'capture':
        answer = this.capture(call, route.param);
        break;
      case 'void':
        answer = this.voidSale(call, this.mustFindForPut(route.param));
        break;
      case 'void-by-order': {
        const newest = this.payments(route.param).at(-1);
        if (!newest) throw errors([307, 'Transaction not found']);
        answer = this.voidSale(call, newest);
        break;
      }
      case 'get-sale':
        answer = this.getSale(call, (sale) => sale.paymentId === route.param.toLowerCase());
        break;
      case 'card-token':
        answer = this.createCardToken(call);
        break;
      case 'get-by-tid':
        answer = this.getSale(call, (sale) => sale.tid === route.param);
        break;
      default:
        answer = this.byOrder(call);
    }
    this.checkAnswer(call, answer);
    return answer;
  }

  private authenticateMerchant(headers: IncomingHttpHeaders): void {
    const merchantId = header(headers, 'merchantid');
    const merchantKey = header(headers, 'merchantkey');
    let refusal: [number, string] | null = null;
    if (merchantId === undefined) refusal = [101, 'MerchantId is required'];
    else if (!GUID.test(merchantId)) refusal = [114, 'The provided MerchantId is not in correct format'];
    else if (merchantId.toLowerCase() !== this.options.merchantId.toLowerCase()) refusal = [115, 'The provided MerchantId was not found'];
    else if (merchantKey === undefined) refusal = [131, 'MerchantKey is required'];
    else if (merchantKey !== this.options.merchantKey) refusal = [132, 'MerchantKey is invalid'];
    if (!refusal) return;
    const body = this.options.unauthorized === 'error-list' ? [{ Code: refusal[0], Message: refusal[1] }] : undefined;
    throw new CieloRefusal({ status: 401, ...(body ? { body } : {}) });
  }

  /** Reports an answer off the schemas as a violation (the simulator's own bug). */
  private checkAnswer(call: Call, answer: Answer): void {
    const schema = answerSchema(call, answer);
    if (!schema) return;
    this.violations.push(...validateCielo(schema, answer.body).map((text) => `answer to ${call.method} ${call.url.pathname} (${answer.status}): ${text}`));
  }

  // ---------------------------------------------------------------- sales

  private createSale(call: Call): Answer {
    const body = this.jsonBody(call);
    if (this.options.caseInsensitiveEnums) normalizeEnums(body);
    const found = schemaErrors('SaleRequest', body).filter((error) => !(this.options.acceptHiper && error.path.endsWith('.Brand') && brandOf(body) === 'Hiper'));
    if (found.length > 0) {
      this.violations.push(...found.map((error) => `POST ${call.url.pathname}: ${errorText(error)}`));
      throw new CieloRefusal({ status: 400, body: dedupe(found.map(errorCode)) });
    }
    const sale = body as Json & { MerchantOrderId: string; Customer: Json; Payment: Json };
    const payment = sale.Payment;
    const type = payment.Type as string;
    if (type !== 'CreditCard' && type !== 'DebitCard' && type !== 'Boleto') throw errors([173, 'Payment method is not enabled']);
    if (type === 'Boleto') return this.createBoleto(sale);
    return this.createCardSale(sale, type);
  }

  private createCardSale(sale: Json & { MerchantOrderId: string; Customer: Json; Payment: Json }, type: 'CreditCard' | 'DebitCard'): Answer {
    const payment = sale.Payment;
    const card = payment[type] as Json;
    const amount = payment.Amount as number;
    const installments = (payment.Installments as number | undefined) ?? 1;
    const recurrent = truthy(payment.Recurrent);
    const capture = type === 'DebitCard' ? true : truthy(payment.Capture);
    const authenticate = truthy(payment.Authenticate);
    if (recurrent && installments > 1) throw errors([179, 'The max number of installments allowed for recurring payment is 1']);
    if (installments > (this.options.maxInstallments ?? 12) || (installments > 1 && Math.floor(amount / installments) < (this.options.minInstallmentCents ?? 500))) {
      throw errors([186, 'provider does not support the options (Capture, Authenticate, Recurrent or Installments)']);
    }
    if (type === 'DebitCard' && installments > 1) throw errors([186, 'provider does not support the options (Capture, Authenticate, Recurrent or Installments)']);
    if (recurrent && authenticate) throw errors([186, 'provider does not support the options (Capture, Authenticate, Recurrent or Installments)']);
    const brand = card.Brand as string;
    if (type === 'DebitCard' && !['Visa', 'Master', 'Elo'].includes(brand)) throw errors([185, 'Brand is not supported by selected provider']);
    let stored: StoredCard;
    let chargedWithToken: string | undefined;
    if (typeof card.CardToken === 'string') {
      const known = this.cards.get(card.CardToken.toLowerCase());
      if (!known) throw errors([130, 'Could not get Credit Card']);
      stored = known;
      chargedWithToken = card.CardToken.toLowerCase();
    } else {
      stored = { number: card.CardNumber as string, holder: card.Holder as string, expirationDate: card.ExpirationDate as string, brand };
    }
    const saveCard = truthy(card.SaveCard);
    if (saveCard && !luhnValid(stored.number)) throw errors([213, 'Credit Card Number is invalid']);
    const cardOnFile = card.CardOnFile as { Usage?: string; Reason?: string } | undefined;
    const securityCodeSent = typeof card.SecurityCode === 'string';

    let newCard: CieloPayment['newCard'];
    let outcome = this.outcomes.shift();
    if (!outcome) {
      const update = this.issuerUpdates.get(stored.number) ?? (chargedWithToken ? this.issuerUpdates.get(chargedWithToken) : undefined) ?? this.renovaFacilSandbox(stored, recurrent);
      const declined = this.declines.get(stored.number);
      if (update) {
        this.issuerUpdates.delete(stored.number);
        if (chargedWithToken) this.issuerUpdates.delete(chargedWithToken);
        newCard = { ...update, SaveCard: false };
        const code = this.options.newCardReturnCode ?? 'KA';
        outcome = { status: 3, returnCode: code, returnMessage: 'Cartão substituído: use o novo cartão' };
      } else if (declined) {
        outcome = { status: 3, ...declined };
      } else if (chargedWithToken && !securityCodeSent && this.options.cvvWithToken === 'merchant-initiated-only' && !recurrent && cardOnFile?.Usage !== 'Used') {
        outcome = { status: 3, returnCode: 'N7', returnMessage: 'Código de segurança obrigatório' };
      } else if (type === 'DebitCard') {
        outcome = this.debitOutcome(payment, brand, authenticate);
      } else {
        outcome = this.sandboxOutcome(stored.number, capture);
      }
    }
    const paymentId = randomUUID();
    const receivedAt = this.now();
    const approved = outcome.status === 1 || outcome.status === 2;
    const record: CieloPayment = {
      paymentId,
      merchantOrderId: sale.MerchantOrderId,
      sentOrderId: this.sentOrderId(sale.MerchantOrderId, receivedAt),
      type,
      amount,
      status: outcome.status,
      returnCode: outcome.returnCode,
      returnMessage: outcome.returnMessage,
      receivedAt,
      installments,
      interest: (payment.Interest as string | undefined) ?? 'ByMerchant',
      capture,
      recurrent,
      brand,
      maskedCardNumber: maskPan(stored.number),
      chargedWithToken,
      cardOnFile,
      securityCodeSent,
      voidedAmount: 0,
      voids: 0,
      tid: randomDigits(20),
      ...(outcome.status === 3 || outcome.status === 13 ? {} : { proofOfSale: randomDigits(6) }),
      ...(approved ? { authorizationCode: randomDigits(6) } : {}),
      ...(newCard ? { newCard } : {}),
    };
    if (outcome.status === 2) {
      record.capturedAmount = amount;
      record.capturedAt = receivedAt;
    }
    const external = payment.ExternalAuthentication as Json | undefined;
    if (external?.Eci !== undefined) record.eci = String(external.Eci);
    if (saveCard && (approved || this.options.tokenOnDenied)) {
      record.cardToken = randomUUID();
      this.cards.set(record.cardToken, { ...stored, brand });
    }
    this.sales.set(paymentId, record);
    this.lastSaleBodies.set(paymentId, { customer: sale.Customer, payment: echoPayment(payment, type) });
    return { status: 201, body: { ...this.saleView(record), SentOrderId: record.sentOrderId } };
  }

  /**
   * POST /1/card/ (ref §6.1): the card stored, its token answered (201, assumed: the code is unconfirmed)
   * with `Links` as one object, as the manual shows. A number failing Luhn answers 400 [{Code 213}].
   */
  private createCardToken(call: Call): Answer {
    const body = this.jsonBody(call);
    const found = schemaErrors('CardTokenRequest', body);
    if (found.length > 0) {
      this.violations.push(...found.map((error) => `POST ${call.url.pathname}: ${errorText(error)}`));
      throw new CieloRefusal({ status: 400, body: dedupe(found.map(errorCode)) });
    }
    const card = body as { CardNumber: string; Holder: string; ExpirationDate: string; Brand: string };
    if (!luhnValid(card.CardNumber)) throw errors([213, 'Credit Card Number is invalid']);
    const token = randomUUID();
    this.cards.set(token, { number: card.CardNumber, holder: card.Holder, expirationDate: card.ExpirationDate, brand: card.Brand });
    return { status: 201, body: { CardToken: token, Links: { Method: 'GET', Rel: 'self', Href: `${this.queryUrl}/1/card/${token}` } } };
  }

  /** The card number a token stands for (a test's check that the issuer's new card was the one tokenized). */
  cardNumberOf(token: string): string | undefined {
    return this.cards.get(token.toLowerCase())?.number;
  }

  /** §3.2 Renova Fácil in sandbox: a card ending in 3 with an expired date on a recurring sale has a new card. */
  private renovaFacilSandbox(card: StoredCard, recurrent: boolean): IssuerUpdate | undefined {
    if (!recurrent || !card.number.endsWith('3')) return undefined;
    const [month, year] = card.expirationDate.split('/').map(Number);
    const now = this.now();
    if (year > now.getUTCFullYear() || (year === now.getUTCFullYear() && month >= now.getUTCMonth() + 1)) return undefined;
    return { CardNumber: sandboxCard(1, card.brand as CieloBrand, randomInt(1_000_000)), ExpirationDate: `12/${now.getUTCFullYear() + 4}`, Brand: card.brand };
  }

  private sandboxOutcome(number: string, capture: boolean): CieloOutcome {
    const last = number.slice(-1);
    if (last === '6' && this.options.digit6 === 'not-finished') return { status: 0, returnCode: '99', returnMessage: 'Time Out' };
    if (last === '9') {
      const mode = this.options.digit9 ?? 'random';
      const approve = mode === 'approved' || (mode === 'random' && randomInt(2) === 0);
      return approve ? approvedOutcome(capture) : { status: 3, returnCode: '99', returnMessage: 'Time Out' };
    }
    const denial = SANDBOX_DENIALS[last];
    return denial ? { status: 3, ...denial } : approvedOutcome(capture);
  }

  /** Debit (ref §8): authenticated by the ECI of its brand, or Data Only, or refused. Always captured. */
  private debitOutcome(payment: Json, brand: string, authenticate: boolean): CieloOutcome {
    const external = payment.ExternalAuthentication as Json | undefined;
    const denied: CieloOutcome = { status: 3, returnCode: '57', returnMessage: 'Transação não permitida para o cartão' };
    if (!authenticate) {
      if (external && truthy(external.DataOnly)) return approvedOutcome(true);
      return (this.options.debitWithoutAuthentication ?? 'denied') === 'denied' ? denied : approvedOutcome(true);
    }
    if (!external) return denied;
    if (!eciAuthenticated(brand, external.Eci as string | number) && (this.options.unauthenticatedDebit ?? 'denied') === 'denied') return denied;
    return approvedOutcome(true);
  }

  /** §2.1: MerchantOrderId is sent as is when ≤ 20 alphanumerics and not used in the last 24 h; else another number. */
  private sentOrderId(merchantOrderId: string, at: Date): string {
    const reused = this.payments(merchantOrderId).some((sale) => at.getTime() - sale.receivedAt.getTime() < DAY_MS);
    return merchantOrderId.length <= 20 && !reused ? merchantOrderId : randomDigits(20);
  }

  private createBoleto(sale: Json & { MerchantOrderId: string; Customer: Json; Payment: Json }): Answer {
    const payment = sale.Payment;
    const bank = payment.Provider as string;
    if (!(this.options.boletoBanks ?? ['Simulado']).includes(bank)) throw errors([129, 'Affiliation not found']);
    checkBoletoPayer(bank, sale.Customer);
    const receivedAt = this.now();
    const expiration = (payment.ExpirationDate as string | undefined) ?? dateOnly(new Date(receivedAt.getTime() + 5 * DAY_MS));
    // Banco do Brasil keeps the last 9 digits of the nosso número (ref §9).
    const given = payment.BoletoNumber as string | undefined;
    const number = given ? (bank.startsWith('BancoDoBrasil') ? given.slice(-9) : given) : randomDigits(11);
    const paymentId = randomUUID();
    const numbers = boletoNumbers(payment.Amount as number, expiration, number);
    const record: CieloPayment = {
      paymentId,
      merchantOrderId: sale.MerchantOrderId,
      sentOrderId: this.sentOrderId(sale.MerchantOrderId, receivedAt),
      type: 'Boleto',
      amount: payment.Amount as number,
      status: 1,
      receivedAt,
      capture: false,
      recurrent: false,
      securityCodeSent: false,
      voidedAmount: 0,
      voids: 0,
      tid: randomDigits(20),
      // Banco do Brasil's answer carries no DigitableLine (ref §9).
      boleto: {
        Url: `${this.queryUrl}/post/pagador/reenvia.asp/${paymentId}`,
        Number: number,
        BarCodeNumber: numbers.BarCodeNumber,
        ...(bank.startsWith('BancoDoBrasil') ? {} : { DigitableLine: numbers.DigitableLine }),
        ExpirationDate: expiration,
      },
    };
    this.sales.set(paymentId, record);
    this.lastSaleBodies.set(paymentId, { customer: sale.Customer, payment: echoPayment(payment, 'Boleto') });
    return { status: 201, body: { ...this.saleView(record), SentOrderId: record.sentOrderId } };
  }

  private readonly lastSaleBodies = new Map<string, { customer: Json; payment: Json }>();

  /** The sale as POST and GET answer it (ref §2.5, §5): the request echoed, the card masked, the results. */
  private saleView(sale: CieloPayment, query = false): Json {
    const echoed = this.lastSaleBodies.get(sale.paymentId) ?? { customer: {}, payment: {} };
    const payment: Json = { ...echoed.payment, Amount: sale.amount, Type: sale.type, PaymentId: sale.paymentId, Status: sale.status, Tid: sale.tid, ReceivedDate: cieloDate(sale.receivedAt) };
    payment.Currency = 'BRL';
    payment.Country = 'BRA';
    payment.Provider = sale.type === 'Boleto' ? (echoed.payment.Provider ?? 'Simulado') : 'Simulado';
    payment.IsSplitted = false;
    if (sale.type !== 'Boleto') {
      payment.ServiceTaxAmount = 0;
      payment.Installments = sale.installments;
      payment.Interest = sale.interest;
      payment.Capture = sale.capture;
      payment.Authenticate = truthy(echoed.payment.Authenticate);
      payment.Recurrent = sale.recurrent;
      const card: Json = { ...(echoed.payment[sale.type] as Json), CardNumber: sale.maskedCardNumber, Brand: sale.brand };
      if (sale.cardToken) card.CardToken = sale.cardToken;
      payment[sale.type] = card;
      if (sale.eci !== undefined && (this.options.returnPaymentEci ?? true)) payment.Eci = sale.eci;
    }
    if (sale.returnCode !== undefined) {
      payment.ReturnCode = sale.returnCode;
      payment.ReturnMessage = sale.returnMessage;
    }
    if (sale.proofOfSale) payment.ProofOfSale = sale.proofOfSale;
    if (sale.authorizationCode) payment.AuthorizationCode = sale.authorizationCode;
    if (sale.capturedAmount !== undefined && sale.capturedAt) {
      payment.CapturedAmount = sale.capturedAmount;
      payment.CapturedDate = cieloDate(sale.capturedAt);
    }
    if (query && sale.voidedAmount > 0 && sale.voidedAt) {
      payment.VoidedAmount = sale.voidedAmount;
      payment.VoidedDate = cieloDate(sale.voidedAt);
    }
    if (sale.newCard) payment.NewCard = { ...sale.newCard };
    if (sale.boleto) Object.assign(payment, sale.boleto);
    payment.Links = this.links(sale);
    const view: Json = { MerchantOrderId: sale.merchantOrderId, Customer: echoed.customer, Payment: payment };
    if (query) view.AcquirerOrderId = sale.sentOrderId;
    return view;
  }

  private links(sale: CieloPayment): Json[] {
    const links: Json[] = [{ Method: 'GET', Rel: 'self', Href: `${this.queryUrl}/1/sales/${sale.paymentId}` }];
    if (sale.type !== 'Boleto' && sale.status === 1) links.push({ Method: 'PUT', Rel: 'capture', Href: `${this.apiUrl}/1/sales/${sale.paymentId}/capture` });
    if (sale.type !== 'Boleto' && (sale.status === 1 || sale.status === 2)) links.push({ Method: 'PUT', Rel: 'void', Href: `${this.apiUrl}/1/sales/${sale.paymentId}/void` });
    return links;
  }

  private apply(sale: CieloPayment, outcome: CieloOutcome): void {
    sale.status = outcome.status;
    sale.returnCode = outcome.returnCode;
    sale.returnMessage = outcome.returnMessage;
    if (outcome.status === 1 || outcome.status === 2) {
      sale.proofOfSale ??= randomDigits(6);
      sale.authorizationCode ??= randomDigits(6);
    }
    if (outcome.status === 2) {
      sale.capturedAmount = sale.amount;
      sale.capturedAt = this.now();
    }
  }

  // ---------------------------------------------------------------- capture, void

  private capture(call: Call, paymentId: string): Answer {
    this.noBody(call);
    const sale = this.mustFindForPut(paymentId);
    const amount = centsParam(call.url.searchParams, 'amount') ?? sale.amount;
    centsParam(call.url.searchParams, 'serviceTaxAmount');
    if (sale.type !== 'CreditCard') throw errors([310, 'Payment method doest not support this operation']);
    if (sale.status !== 1) throw errors([308, 'Transaction not available to capture']);
    if (amount > sale.amount) return { status: 200, body: this.putAnswer(sale, '842', 'Amount must be less than or equal to the transaction amount') };
    sale.status = 2;
    sale.capturedAmount = amount;
    sale.capturedAt = this.now();
    sale.returnCode = '6';
    sale.returnMessage = OPERATION_SUCCESSFUL;
    if (this.options.notifyOwnChanges) this.track(sleep(0).then(() => this.notify(sale.paymentId)));
    return { status: 200, body: { ...this.putAnswer(sale, '6', OPERATION_SUCCESSFUL), ReasonCode: 0, ReasonMessage: 'Successful' } };
  }

  private voidSale(call: Call, sale: CieloPayment): Answer {
    this.noBody(call);
    const amount = centsParam(call.url.searchParams, 'amount');
    centsParam(call.url.searchParams, 'serviceTaxAmount');
    if (sale.type === 'Boleto') throw errors([310, 'Payment method doest not support this operation']);
    if (sale.status === 10 || sale.status === 11) {
      if (this.options.secondFullVoid === 'void-code-17') return { status: 200, body: this.putAnswer(sale, '17', 'A void already exists for this sale') };
      throw errors([309, 'Transaction not available to void']);
    }
    if (sale.status !== 1 && sale.status !== 2) throw errors([309, 'Transaction not available to void']);
    const interval = this.options.voidIntervalMs ?? 5000;
    if (interval > 0 && sale.voidedAt && this.now().getTime() - sale.voidedAt.getTime() < interval) {
      return { status: 200, body: this.putAnswer(sale, '476', 'A void for this sale is already processing') };
    }
    const base = sale.status === 1 ? sale.amount : (sale.capturedAmount ?? sale.amount);
    const left = base - sale.voidedAmount;
    if (sale.status === 1 && amount !== undefined && (amount !== sale.amount || this.options.authorizedVoidWithAmount === 'refuse')) {
      return { status: 200, body: this.putAnswer(sale, '41', 'Status does not allow void') };
    }
    if (amount !== undefined && amount > left) return { status: 200, body: this.putAnswer(sale, '51', 'Void above the available amount') };
    const voiding = amount ?? left;
    // Debit allows one partial void only (ref §4.2); the code of the refusal is the simulator's choice.
    if (sale.type === 'DebitCard' && voiding < left && sale.voids > 0) return { status: 200, body: this.putAnswer(sale, '17', 'A void already exists for this sale') };
    this.voidAmount(sale, voiding);
    if (this.options.notifyOwnChanges) this.track(sleep(0).then(() => this.notify(sale.paymentId)));
    if (sale.status === 2) {
      return {
        status: 200,
        body: { ...this.putAnswer(sale, '0', OPERATION_SUCCESSFUL), ReasonCode: 0, ReasonMessage: 'Successful', ProviderReturnCode: '0', ProviderReturnMessage: OPERATION_SUCCESSFUL },
      };
    }
    return { status: 200, body: this.putAnswer(sale, '9', OPERATION_SUCCESSFUL) };
  }

  /** Voids `amount` of a sale: fully voided is 10 the day of its capture (or uncaptured), 11 from the next day. */
  private voidAmount(sale: CieloPayment, amount: number): void {
    const now = this.now();
    sale.voidedAmount += amount;
    sale.voidedAt = now;
    sale.voids += 1;
    const base = sale.status === 1 ? sale.amount : (sale.capturedAmount ?? sale.amount);
    if (sale.voidedAmount >= base) sale.status = sale.status === 2 && sale.capturedAt && dateOnly(sale.capturedAt) !== dateOnly(now) ? 11 : 10;
  }

  private putAnswer(sale: CieloPayment, returnCode: string, returnMessage: string): Json {
    const body: Json = { Status: sale.status, Tid: sale.tid, ReturnCode: returnCode, ReturnMessage: returnMessage, Links: this.links(sale) };
    if (sale.proofOfSale) body.ProofOfSale = sale.proofOfSale;
    if (sale.authorizationCode) body.AuthorizationCode = sale.authorizationCode;
    return body;
  }

  // ---------------------------------------------------------------- queries

  /** Whether a query still finds the sale (ref §5: only sales of the last three months can be queried). */
  private queryable(sale: CieloPayment): boolean {
    const until = new Date(sale.receivedAt.getTime());
    until.setUTCMonth(until.getUTCMonth() + 3);
    return this.now().getTime() < until.getTime();
  }

  private getSale(call: Call, match: (sale: CieloPayment) => boolean): Answer {
    this.noBody(call);
    const sale = [...this.sales.values()].find((one) => match(one) && this.queryable(one));
    return sale ? { status: 200, body: this.saleView(sale, true) } : { status: 404 };
  }

  private byOrder(call: Call): Answer {
    this.noBody(call);
    const merchantOrderId = call.url.searchParams.get('merchantOrderId');
    if (!merchantOrderId) throw errors([122, 'MerchantOrderId is required']);
    const visibleBefore = this.now().getTime() - (this.options.orderQueryDelayMs ?? 0);
    const found = this.payments(merchantOrderId).filter((sale) => sale.receivedAt.getTime() <= visibleBefore && this.queryable(sale));
    if (found.length === 0 && (this.options.emptyOrderQuery ?? 'not-found') === 'not-found') return { status: 404 };
    const dateKey = this.options.orderDateKey ?? 'ReceivedDate';
    const list = found.map((sale) => ({ PaymentId: sale.paymentId, [dateKey]: cieloDate(sale.receivedAt) }));
    return { status: 200, body: { ReasonCode: 0, ReasonMessage: 'Successful', [this.options.orderListKey ?? 'Payments']: list } };
  }

  // ---------------------------------------------------------------- MPI

  private mpiAnswer(call: Call): Answer {
    const mpi = this.options.mpi;
    if (!mpi || call.method !== 'POST' || !/^\/v[23]\/auth\/token$/.test(call.url.pathname)) {
      this.violations.push(`${call.method} ${call.url.pathname} on the MPI: not an operation played (ref §8.2)`);
      return { status: 404 };
    }
    const authorization = header(call.headers, 'authorization') ?? '';
    const expected = `Basic ${Buffer.from(`${mpi.clientId}:${mpi.clientSecret}`).toString('base64')}`;
    if (authorization !== expected) return { status: 401 };
    const body = this.jsonBody(call) as Json | null;
    const problems: string[] = [];
    if (!body || typeof body !== 'object') problems.push('body: must be a JSON object');
    else {
      if (typeof body.EstablishmentCode !== 'string' || !/^[0-9]{10}$/.test(body.EstablishmentCode)) problems.push('EstablishmentCode: must be the 10-digit EC');
      if (typeof body.MerchantName !== 'string' || body.MerchantName.length === 0 || body.MerchantName.length > 25) problems.push('MerchantName: must be 1 to 25 characters');
      if (typeof body.MCC !== 'string' || !/^[0-9]{4}$/.test(body.MCC)) problems.push('MCC: must be 4 digits');
    }
    if (problems.length > 0) {
      this.violations.push(...problems.map((text) => `POST ${call.url.pathname}: ${text}`));
      return { status: 400 };
    }
    const ttlMinutes = mpi.tokenTtlMinutes ?? 20;
    const expiresAt = this.now().getTime() + ttlMinutes * 60_000;
    const token = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ client_id: mpi.clientId, exp: Math.floor(expiresAt / 1000), jti: randomUUID() })}.${randomBytes(32).toString('base64url')}`;
    this.mpiTokens.set(token, { expiresAt, used: false });
    const expiresIn = (mpi.expiresIn ?? 'timestamp') === 'timestamp' ? cieloDate(new Date(expiresAt)).replace(' ', 'T') : ttlMinutes;
    return { status: 200, body: { access_token: token, token_type: 'bearer', expires_in: expiresIn } };
  }

  // ---------------------------------------------------------------- helpers

  /** The JSON body of a POST (Content-Type application/json, ref §1.2); anything else is a 400 and a violation. */
  private jsonBody(call: Call): unknown {
    const contentType = header(call.headers, 'content-type');
    if (!/^application\/json\b/i.test(contentType ?? '')) {
      this.violations.push(`${call.method} ${call.url.pathname}: Content-Type must be application/json, not ${contentType ?? 'absent'}`);
      throw errors([0, 'Content-Type must be application/json']);
    }
    try {
      return JSON.parse(call.rawBody) as unknown;
    } catch {
      this.violations.push(`${call.method} ${call.url.pathname}: the body is not JSON`);
      throw errors([0, 'The request body is not valid JSON']);
    }
  }

  /** Capture, void and GET take no body (ref §1.2: parameters in the query string). */
  private noBody(call: Call): void {
    if (call.rawBody.length > 0) this.violations.push(`${call.method} ${call.url.pathname}: this operation takes no body (ref §1.2)`);
  }

  private mustFind(paymentId: string): CieloPayment {
    const sale = this.payment(paymentId);
    if (!sale) throw new Error(`no payment ${paymentId}`);
    return sale;
  }

  private mustFindForPut(paymentId: string): CieloPayment {
    const sale = this.payment(paymentId);
    if (!sale) throw errors([307, 'Transaction not found']);
    return sale;
  }

  private brandOfPan(cardNumber: string): string | undefined {
    for (const card of this.cards.values()) if (card.number === cardNumber) return card.brand;
    for (const sale of this.sales.values()) if (sale.maskedCardNumber === maskPan(cardNumber)) return sale.brand;
    if (cardNumber.startsWith('4')) return 'Visa';
    if (cardNumber.startsWith('5')) return 'Master';
    return undefined;
  }

  private async deliver(url: string, body: Json, headers: Record<string, string>, forged: boolean): Promise<CieloNotification> {
    const delays = forged ? [] : (this.options.notificationRetryDelaysMs ?? []);
    let result = await post(url, body, headers, this.ca);
    for (const delay of delays) {
      if (result.status === 200) break;
      this.notifications.push({ url, body, forged, lost: false, headerNames: Object.keys(headers), ...result });
      await sleep(delay);
      result = await post(url, body, headers, this.ca);
    }
    const notification: CieloNotification = { url, body, forged, lost: false, headerNames: Object.keys(headers), ...result };
    this.notifications.push(notification);
    return notification;
  }

  private record(call: Call, status: number): void {
    const route = call.host === 'mpi' ? { operation: 'mpi-token' as const, param: '' } : (routeOf(call.method, call.url.pathname) ?? { operation: 'other' as const, param: '' });
    let body: unknown;
    try {
      body = call.rawBody.length === 0 ? undefined : redactBody(JSON.parse(call.rawBody));
    } catch {
      body = '[not JSON]';
    }
    const merchantOrderId =
      route.operation === 'sale' ? (body as { MerchantOrderId?: unknown } | undefined)?.MerchantOrderId : route.operation === 'get-by-order' ? call.url.searchParams.get('merchantOrderId') : route.operation === 'void-by-order' ? route.param : undefined;
    const paymentId = ['capture', 'void', 'get-sale'].includes(route.operation) ? route.param : undefined;
    this.requests.push({
      at: new Date().toISOString(),
      host: call.host,
      method: call.method,
      path: `${call.url.pathname}${call.url.search}`,
      operation: route.operation,
      ...(typeof merchantOrderId === 'string' ? { merchantOrderId } : {}),
      ...(paymentId ? { paymentId } : {}),
      headers: redactHeaders(call.headers),
      body,
      status,
    });
  }

  private track(work: Promise<unknown>): void {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }
}

const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

function routeOf(method: string, path: string): { operation: CieloOperation; param: string } | null {
  let match: RegExpExecArray | null;
  if (method === 'POST' && /^\/1\/sales\/?$/.test(path)) return { operation: 'sale', param: '' };
  if (method === 'POST' && /^\/1\/card\/?$/.test(path)) return { operation: 'card-token', param: '' };
  if (method === 'GET' && /^\/1\/sales\/?$/.test(path)) return { operation: 'get-by-order', param: '' };
  if (method === 'PUT' && (match = /^\/1\/sales\/OrderId\/([^/]+)\/void\/?$/.exec(path))) return { operation: 'void-by-order', param: decodeURIComponent(match[1]) };
  if (method === 'PUT' && (match = /^\/1\/sales\/([^/]+)\/capture\/?$/.exec(path))) return { operation: 'capture', param: decodeURIComponent(match[1]) };
  if (method === 'PUT' && (match = /^\/1\/sales\/([^/]+)\/void\/?$/.exec(path))) return { operation: 'void', param: decodeURIComponent(match[1]) };
  if (method === 'GET' && (match = /^\/1\/sales\/acquirerTid\/([^/]+)\/?$/.exec(path))) return { operation: 'get-by-tid', param: decodeURIComponent(match[1]) };
  if (method === 'GET' && (match = /^\/1\/sales\/([^/]+)\/?$/.exec(path))) return { operation: 'get-sale', param: decodeURIComponent(match[1]) };
  return null;
}

function answerSchema(call: Call, answer: Answer): CieloSchemaName | null {
  if (answer.body === undefined) return null;
  if (answer.status === 400 || answer.status === 401) return 'ErrorList';
  const route = routeOf(call.method, call.url.pathname);
  if (!route) return null;
  if (route.operation === 'sale' || route.operation === 'get-sale' || route.operation === 'get-by-tid') return 'SaleResponse';
  if (route.operation === 'capture' || route.operation === 'void' || route.operation === 'void-by-order') return 'CaptureVoidResponse';
  if (route.operation === 'get-by-order') return 'MerchantOrderQueryResponse';
  if (route.operation === 'card-token') return 'CardTokenResponse';
  return null;
}

/** A schema error as Cielo's API error (ref §1.4 table); Code 0 with the complaint when no code is documented. */
function errorCode(error: SchemaError): { Code: number; Message: string } {
  const at = error.path;
  const missing = error.keyword === 'required' ? error.property : undefined;
  const field = missing ?? at.split('.').at(-1) ?? '';
  const table: Array<[boolean, number, string]> = [
    [missing === 'MerchantOrderId', 122, 'MerchantOrderId is required'],
    [missing === 'Customer', 121, 'Customer is required'],
    [missing === 'Payment', 119, 'At least one Payment is required'],
    [field === 'Type' && at.startsWith('Payment'), 102, 'Payment Type is required'],
    [field === 'Amount', 108, 'Amount must be greater or equal to zero'],
    [field === 'Installments', 123, 'Installments must be greater or equal to one'],
    [missing === 'CreditCard' || missing === 'DebitCard', 124, 'Credit Card is Required'],
    [field === 'CardNumber' && missing !== undefined, 127, 'You must provide CreditCard Number'],
    [field === 'CardNumber' && missing === undefined, 213, 'Credit Card Number is invalid'],
    [field === 'Holder' && missing !== undefined, 117, 'Credit Card Holder is required'],
    [field === 'ExpirationDate' && missing !== undefined && at.includes('Card'), 125, 'Credit Card Expiration Date is required'],
    [field === 'ExpirationDate' && missing === undefined && at.includes('Card'), 126, 'Credit Card Expiration Date is invalid'],
    [field === 'SecurityCode', 146, 'SecurityCode length exceeded'],
    [field === 'Brand' && missing !== undefined, 182, 'Brand is required'],
    [field === 'Brand' && missing === undefined, 185, 'Brand is not supported by selected provider'],
    [field === 'Name' && at.startsWith('Customer'), 105, 'Customer Name is required'],
    [field === 'Identity' && at.startsWith('Customer'), 104, 'Customer Identity is required'],
  ];
  const known = table.find(([applies]) => applies);
  return known ? { Code: known[1], Message: known[2] } : { Code: 0, Message: errorText(error) };
}

function dedupe(list: Array<{ Code: number; Message: string }>): Array<{ Code: number; Message: string }> {
  const seen = new Set<string>();
  return list.filter((one) => {
    const key = `${one.Code} ${one.Message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function brandOf(body: unknown): unknown {
  const payment = (body as { Payment?: Json } | null)?.Payment;
  return ((payment?.CreditCard ?? payment?.DebitCard) as Json | undefined)?.Brand;
}

const ENUMS: Record<string, string[]> = {
  Type: ['CreditCard', 'DebitCard', 'Boleto', 'Pix', 'qrcode', 'ElectronicTransfer'],
  Interest: ['ByMerchant', 'ByIssuer'],
  Brand: ['Visa', 'Master', 'Amex', 'Elo', 'Aura', 'JCB', 'Diners', 'Discover', 'Hipercard', 'Hiper'],
  Usage: ['First', 'Used'],
  Reason: ['Recurring', 'Unscheduled', 'Installments'],
};

/** With `caseInsensitiveEnums`, `creditcard` is read as `CreditCard` (and so on) before the schema check. */
function normalizeEnums(body: unknown): void {
  const payment = (body as { Payment?: Json } | null)?.Payment;
  if (!payment || typeof payment !== 'object') return;
  const fix = (owner: Json | undefined, key: string) => {
    const value = owner?.[key];
    if (owner && typeof value === 'string') owner[key] = ENUMS[key].find((one) => one.toLowerCase() === value.toLowerCase()) ?? value;
  };
  fix(payment, 'Type');
  fix(payment, 'Interest');
  for (const node of [payment.CreditCard, payment.DebitCard] as Array<Json | undefined>) {
    fix(node, 'Brand');
    fix(node?.CardOnFile as Json | undefined, 'Usage');
    fix(node?.CardOnFile as Json | undefined, 'Reason');
  }
}

/** The request's Payment as the answer echoes it: no PAN (set masked later), no CVV, no cryptogram. */
function echoPayment(payment: Json, type: string): Json {
  const copy = JSON.parse(JSON.stringify(payment)) as Json;
  const card = copy[type] as Json | undefined;
  if (card) {
    delete card.SecurityCode;
    delete card.Cryptogram;
    if (card.SaveCard === undefined) card.SaveCard = false;
  }
  return copy;
}

function truthy(value: unknown): boolean {
  return value === true || value === 'true';
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function centsParam(params: URLSearchParams, name: string): number | undefined {
  const value = params.get(name);
  if (value === null) return undefined;
  if (!/^[0-9]{1,15}$/.test(value)) throw errors([108, 'Amount must be greater or equal to zero']);
  return Number(value);
}

function randomDigits(length: number): string {
  let digits = '';
  while (digits.length < length) digits += String(randomInt(10));
  return digits;
}

/** `YYYY-MM-DD HH:mm:SS` in Brasília time (ref §2.5: no zone given). */
function cieloDate(date: Date): string {
  return new Date(date.getTime() + SAO_PAULO_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
}

/** The date in Brasília (YYYY-MM-DD). */
function dateOnly(date: Date): string {
  return cieloDate(date).slice(0, 10);
}

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

const SECRET_HEADERS = new Set(['merchantkey', 'authorization', 'proxy-authorization', 'cookie']);

function redactHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const redacted: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    redacted[name] = !SECRET_HEADERS.has(name) ? text : name === 'authorization' ? `${text.split(' ')[0]} [redacted]` : '[redacted]';
  }
  return redacted;
}

/** A request body for the record: PAN masked, CVV, CAVV and cryptograms redacted, CardTokens cut to their last 4. */
function redactBody(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactBody);
  if (!value || typeof value !== 'object') return value;
  const copy: Json = {};
  for (const [key, one] of Object.entries(value as Json)) {
    if (key === 'CardNumber' && typeof one === 'string') copy[key] = maskPan(one);
    else if ((key === 'SecurityCode' || key === 'Cavv' || key === 'Cryptogram') && one !== null && one !== undefined) copy[key] = '[redacted]';
    else if (key === 'CardToken' && typeof one === 'string') copy[key] = `[redacted …${one.slice(-4)}]`;
    else copy[key] = redactBody(one);
  }
  return copy;
}

/** POSTs a notification over http or https (trusting the test CA); never rejects: a failure is status 0. */
function post(url: string, body: Json, headers: Record<string, string>, ca: Buffer): Promise<{ status: number; error?: string }> {
  const payload = JSON.stringify(body);
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const outgoing = send(
      target,
      { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }, timeout: 10_000, ...(target.protocol === 'https:' ? { ca } : {}) },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
        response.on('error', (error) => resolve({ status: 0, error: error.message }));
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error('no answer within 10 s')));
    outgoing.on('error', (error) => resolve({ status: 0, error: error.message }));
    outgoing.end(payload);
  });
}
