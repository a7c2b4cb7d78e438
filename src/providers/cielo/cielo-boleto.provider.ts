import { Logger } from '@nestjs/common';
import { barcodeToLine } from '../../domain/boleto-line';
import { cents } from '../../domain/money';
import { Boleto, BoletoFieldProblem, BoletoProvider, BoletoRefusedError, BoletoRequest, IssuedBoleto, PayerAddress } from '../card-provider.port';
import { CieloClient, CieloUnavailableError } from './cielo.client';
import { cieloOrderId, firstCieloError, isCieloPaymentId, referenceOfCieloOrder, salesUnderOrder } from './cielo-orders';

/** The bank contract Cielo registers the boletos through (CIELO_BOLETO_PROVIDER, ref §9). */
export type CieloBoletoBank = 'Bradesco2' | 'BancoDoBrasil3' | 'Simulado';

/** CIELO_BOLETO_* and the shared CIELO_ORDER_ID_PREFIX. */
export interface CieloBoletoSettings {
  bank: CieloBoletoBank;
  orderIdPrefix: string;
  assignor: string | null;
  instructions: string | null;
  demonstrative: string | null;
  clearingDays: number;
}

/** A boleto as Cielo's answer and look-up give it (ref §9 "Answer"; the fields read here, leniently). */
interface CieloBoletoPayment {
  PaymentId?: string;
  Type?: string;
  Status?: number | string;
  Amount?: number;
  CapturedAmount?: number;
  Url?: string;
  BarCodeNumber?: string;
  DigitableLine?: string;
  ReturnCode?: string | number;
  ReturnMessage?: string;
}

interface CieloBoletoSale {
  MerchantOrderId?: string;
  Payment?: CieloBoletoPayment;
}

/**
 * Each bank's limits (ref §9 "BoletoNumber", "Customer data"): the nosso número's digits, and for Banco do
 * Brasil the payer's name and address in upper-case letters (with `-` and `'`), the street, number and
 * complement within 60 characters together, the city within 18, the instructions within 50. Bradesco and
 * the sandbox keep the schema's lengths.
 */
interface BankRules {
  nossoNumeroDigits: number;
  upperCaseOnly: boolean;
  addressLineMax: number | null;
  cityMax: number;
  instructionsMax: number;
}

const BANK_RULES: Readonly<Record<CieloBoletoBank, BankRules>> = {
  Bradesco2: { nossoNumeroDigits: 11, upperCaseOnly: false, addressLineMax: null, cityMax: 50, instructionsMax: 255 },
  Simulado: { nossoNumeroDigits: 11, upperCaseOnly: false, addressLineMax: null, cityMax: 50, instructionsMax: 255 },
  BancoDoBrasil3: { nossoNumeroDigits: 9, upperCaseOnly: true, addressLineMax: 60, cityMax: 18, instructionsMax: 50 },
};

/**
 * How long Cielo answers about a sale (ref §5: only sales of the last three months can be queried, older
 * ones are 404), in days at the shortest (three calendar months are at least 89 days).
 */
const QUERY_WINDOW_DAYS = 89;

/** The schema's lengths (cielo-ecommerce-3.0.schemas.json, Customer and Address). */
const NAME_MAX = 255;
const STREET_MAX = 255;
const NUMBER_MAX = 15;
const COMPLEMENT_MAX = 50;
const DISTRICT_MAX = 50;
const ASSIGNOR_MAX = 200;
const DEMONSTRATIVE_MAX = 255;

/**
 * Registered boletos through Cielo's API E-commerce 3.0 (../shared/reference/cielo-ecommerce-3.0.md §9):
 * `POST /1/sales/` with `Payment.Type` Boleto and `Provider` the bank contract (CIELO_BOLETO_PROVIDER), our
 * reference as MerchantOrderId (CIELO_ORDER_ID_PREFIX and the sale's id), the sale's id as the nosso número
 * (its last 9 digits for Banco do Brasil), the payer's name, CPF/CNPJ and address within the bank's limits,
 * the due date. Cielo answers the typeable line (not for Banco do Brasil: it is read from the bar code),
 * the bar code and the boleto's page; the boleto is open (`Status` 1).
 *
 * No idempotency (ref §5): a POST whose answer did not come is looked up by MerchantOrderId before the
 * request is answered 503; a boleto found is the sale's. Payment is learned only from Cielo's look-up by
 * PaymentId (findBoleto: `Status` 2), whether a notification named it or the poll of open boletos asked.
 */
export class CieloBoletoProvider implements BoletoProvider {
  private readonly logger = new Logger(CieloBoletoProvider.name);
  readonly takesTransfers = false;
  readonly clearingDays: number;
  /**
   * The latest due date taken: a boleto is cancelled unpaid at the end of its due date plus the clearing
   * days, and only Cielo's look-up says whether it was paid until then, so that end (one more day for the
   * end of the day, one for the poll to ask) must come within Cielo's query window; a boleto due later would
   * be paid unseen (its look-up 404) and never end.
   */
  readonly maxDueDays: number;

  constructor(
    private readonly client: CieloClient,
    private readonly settings: CieloBoletoSettings,
  ) {
    this.clearingDays = settings.clearingDays;
    this.maxDueDays = QUERY_WINDOW_DAYS - 2 - settings.clearingDays;
  }

  boletoProblem(request: BoletoRequest): BoletoFieldProblem | null {
    const payer = request.payer;
    if (!payer?.document) return { field: 'customer.document', message: `A boleto is registered to its payer's CPF or CNPJ: customer.document is required for BOLETO` };
    if (!payer.address) {
      return { field: 'customer.address', message: "A boleto is registered to its payer's address: give customer.address (street, streetNumber, zipCode, neighborhood, city, state) or a full shipping address" };
    }
    if (!this.text(payer.name, NAME_MAX)) return { field: 'customer.name', message: `customer.name has no letters the bank (${this.settings.bank}) can print` };
    // Every field the bank requires (ref §9: Street, Number, ZipCode, City, State, District) must keep something
    // once reduced to what the bank prints (Banco do Brasil: A-Z, digits, - and '), or the boleto would be
    // registered to an empty field: named here (customer.address.<field>; the caller names shipping.<field>
    // when the address came from there).
    const sent = this.address(payer.address);
    const required: Array<[keyof PayerAddress, string]> = [
      ['street', sent.Street],
      ['streetNumber', sent.Number],
      ['zipCode', sent.ZipCode],
      ['neighborhood', sent.District],
      ['city', sent.City],
      ['state', sent.State],
    ];
    const empty = required.find(([, value]) => !value);
    if (empty) return { field: `customer.address.${empty[0]}`, message: `customer.address.${empty[0]} has nothing the bank (${this.settings.bank}) can print` };
    return null;
  }

  async createBoleto(request: BoletoRequest): Promise<Boleto> {
    const problem = this.boletoProblem(request);
    if (problem) throw new BoletoRefusedError(`${problem.field}: ${problem.message}`);
    const payer = request.payer as NonNullable<BoletoRequest['payer']>;
    const document = payer.document as NonNullable<typeof payer.document>;
    const rules = BANK_RULES[this.settings.bank];
    const orderId = cieloOrderId(this.settings.orderIdPrefix, String(request.reference));
    const body = {
      MerchantOrderId: orderId,
      Customer: {
        Name: this.text(payer.name, NAME_MAX),
        Identity: document.number.replace(/\D/g, ''),
        IdentityType: document.type === 'cnpj' ? 'CNPJ' : 'CPF',
        Address: this.address(payer.address as PayerAddress),
      },
      Payment: {
        Type: 'Boleto',
        Provider: this.settings.bank,
        Amount: request.amountCents,
        BoletoNumber: String(request.reference).slice(-rules.nossoNumeroDigits),
        ExpirationDate: request.dueDate,
        ...(this.settings.assignor ? { Assignor: cut(this.settings.assignor, ASSIGNOR_MAX) } : {}),
        ...(this.settings.instructions ? { Instructions: this.printable(this.settings.instructions, rules.instructionsMax) } : {}),
        ...(this.settings.demonstrative ? { Demonstrative: cut(this.settings.demonstrative, DEMONSTRATIVE_MAX) } : {}),
      },
    };
    let answer;
    try {
      answer = await this.client.send('POST', '/1/sales/', body);
    } catch (error) {
      return this.issuedAfterAll(request.reference, orderId, error as Error);
    }
    if (answer.status === 201 || answer.status === 200) return this.boletoOf((answer.body ?? {}) as CieloBoletoSale, request.reference);
    if (answer.status >= 400 && answer.status < 500 && answer.status !== 408 && answer.status !== 429) {
      const error = firstCieloError(answer.body);
      const said = error ? `${String(error.Code ?? answer.status)} ${error.Message ?? ''}`.trim() : `HTTP ${answer.status}`;
      throw new BoletoRefusedError(`Cielo refused to issue the boleto: ${said}`);
    }
    return this.issuedAfterAll(request.reference, orderId, new CieloUnavailableError(`Cielo answered ${answer.status} to the boleto of sale ${request.reference}`));
  }

  /**
   * The boleto under its PaymentId (`GET /1/sales/{PaymentId}`, query host): OPEN (`Status` 1, 12 while
   * its bank has not answered, or 0 NotFinished: no final answer yet, in doubt and asked again (ref §12.4),
   * never taken for a cancellation), PAID (`Status` 2, with what Cielo reports paid: CapturedAmount when it
   * gives one, else the amount), CANCELLED (voided, aborted or denied: 10, 11, 13, 3). Null when Cielo shows
   * none, or a payment that is not a boleto.
   */
  async findBoleto(externalId: string): Promise<IssuedBoleto | null> {
    if (!isCieloPaymentId(externalId)) return null;
    const found = await this.client.query(`/1/sales/${encodeURIComponent(externalId)}`);
    if (found.status === 404 || !found.body) return null;
    const sale = found.body as CieloBoletoSale;
    const payment = sale.Payment ?? {};
    if (payment.Type !== undefined && payment.Type !== 'Boleto') return null;
    const reference = referenceOfCieloOrder(this.settings.orderIdPrefix, sale.MerchantOrderId);
    const status = Number(payment.Status);
    switch (status) {
      case 0:
      case 1:
      case 12:
        return { reference, state: 'OPEN', paidCents: null };
      case 2: {
        const paid = typeof payment.CapturedAmount === 'number' ? payment.CapturedAmount : payment.Amount;
        if (typeof paid !== 'number' || !Number.isSafeInteger(paid) || paid <= 0) throw new CieloUnavailableError(`Cielo reports boleto ${externalId} paid without an amount`);
        return { reference, state: 'PAID', paidCents: cents(paid) };
      }
      case 3:
      case 10:
      case 11:
      case 13:
        return { reference, state: 'CANCELLED', paidCents: null };
      default:
        throw new CieloUnavailableError(`Cielo reported boleto ${externalId} in Status ${String(payment.Status)}, which a boleto here cannot be in`);
    }
  }

  /**
   * A POST without an answer: the boleto Cielo may have issued anyway is looked for by MerchantOrderId
   * (the query retries on its own). Found, it is the sale's; not found, the request fails unknown (503): a
   * boleto registered after this look-up is nobody's, its line never shown, so never paid.
   */
  private async issuedAfterAll(reference: number, orderId: string, cause: Error): Promise<Boleto> {
    const { sales } = await salesUnderOrder<CieloBoletoSale>(this.client, orderId).catch(() => ({ sales: [] as Array<{ paymentId: string; sale: CieloBoletoSale }> }));
    const found = sales.find(({ sale }) => sale.Payment?.Type === 'Boleto');
    if (found) {
      this.logger.warn({ provider: 'cielo', reference, paymentId: found.paymentId }, 'A boleto whose answer was lost was found by its MerchantOrderId');
      return this.boletoOf({ ...found.sale, Payment: { ...found.sale.Payment, PaymentId: found.sale.Payment?.PaymentId ?? found.paymentId } }, reference);
    }
    throw new CieloUnavailableError(`${cause.message}; no boleto shows under ${orderId}`);
  }

  /** The answer's line, bar code and page: the typeable line is Cielo's, or (Banco do Brasil gives none) read from the bar code. */
  private boletoOf(sale: CieloBoletoSale, reference: number): Boleto {
    const payment = sale.Payment ?? {};
    // Denied or aborted (ref §3.1): no boleto was registered, whatever else the answer holds.
    const status = Number(payment.Status);
    if (status === 3 || status === 13) throw new BoletoRefusedError(`Cielo did not register the boleto (Status ${status}${payment.ReturnCode !== undefined ? `, ${String(payment.ReturnCode)} ${payment.ReturnMessage ?? ''}`.trimEnd() : ''})`);
    const barcode = (payment.BarCodeNumber ?? '').replace(/\D/g, '');
    const line = (payment.DigitableLine ?? '').replace(/\D/g, '');
    const code = line.length === 47 ? line : barcode.length === 44 ? barcodeToLine(barcode) : null;
    if (!payment.PaymentId || !code) throw new CieloUnavailableError(`Cielo's answer to the boleto of sale ${reference} has no PaymentId or no line to pay it by`);
    return { code, externalId: payment.PaymentId, barcode: barcode.length === 44 ? barcode : null, url: payment.Url ?? null };
  }

  /** The payer's address within the bank's limits (Cielo's Address, ref §9): its line cut from the complement first. */
  private address(address: PayerAddress): Record<string, string> {
    const rules = BANK_RULES[this.settings.bank];
    const number = this.text(address.streetNumber, NUMBER_MAX, true);
    let street = this.text(address.street, STREET_MAX, true);
    let complement = address.complement ? this.text(address.complement, COMPLEMENT_MAX, true) : '';
    if (rules.addressLineMax !== null) {
      const room = rules.addressLineMax - number.length;
      street = street.slice(0, Math.max(1, room)).trim();
      complement = complement.slice(0, Math.max(0, room - street.length)).trim();
    }
    return {
      Street: street,
      Number: number,
      ...(complement ? { Complement: complement } : {}),
      ZipCode: address.zipCode.replace(/\D/g, ''),
      City: this.text(address.city, rules.cityMax, true),
      State: address.state.toUpperCase(),
      Country: 'BRA',
      District: this.text(address.neighborhood, DISTRICT_MAX, true),
    };
  }

  /** A text as the bank prints it: no accents; for Banco do Brasil upper-case letters, `-` and `'` (and digits in an address); within `max`. */
  private text(value: string, max: number, address = false): string {
    const plain = value.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
    const kept = BANK_RULES[this.settings.bank].upperCaseOnly ? plain.toUpperCase().replace(address ? /[^A-Z0-9 '-]/g : /[^A-Z '-]/g, ' ') : plain.replace(/[\p{Cc}]/gu, ' ');
    return cut(kept.replace(/\s+/g, ' ').trim(), max);
  }

  /** A configured text (the instructions) as the bank prints it: for Banco do Brasil without accents, in upper case, with its digits and punctuation; within `max`. */
  private printable(value: string, max: number): string {
    const plain = value.replace(/[\p{Cc}]/gu, ' ');
    const kept = BANK_RULES[this.settings.bank].upperCaseOnly
      ? plain.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toUpperCase().replace(/[^A-Z0-9 .,;:/'()-]/g, ' ')
      : plain;
    return cut(kept.replace(/\s+/g, ' ').trim(), max);
  }
}

/** At most `max` characters, never a surrogate pair split in two (an emoji in a name). */
function cut(value: string, max: number): string {
  return Array.from(value).slice(0, max).join('').trim();
}
