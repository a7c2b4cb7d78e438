import { AUTOMATIC_PIX_LAST_SEND_DAYS, AUTOMATIC_PIX_PERIODS } from './automatic-pix';
import { detectCardBrand } from './card';
import { eciMeaning, isAuthenticatedEci, THREE_DS_BRANDS } from './eci';
import { BillingCycle } from './subscription-billing';
import { DomainError, FieldError, RequestValidationError } from './domain-error';
import { cents } from './money';
import { SalePaymentMethod } from './sale-status';

/** Smallest sale: R$ 1.00 (platform.md §7: a positive amount below it is 422 MINIMUM_AMOUNT). */
export const MINIMUM_SALE_CENTS = cents(100);
/** Boleto due date when the request does not give one (platform.md §7). */
export const DEFAULT_BOLETO_DAYS = 3;

/** What the rules of a sale request read of it (the validated body of POST /api/sales). */
export interface SaleRequest {
  amount: number;
  paymentMethod: SalePaymentMethod;
  card?: {
    number: string;
    holderName: string;
    expirationMonth: string;
    expirationYear: string;
    cvv: string;
    installments?: number;
    /** 3-D Secure 2.2's result (required for debit). */
    threeDSecure?: { cavv: string; xid?: string; eci: string; version: string; referenceId: string };
  };
  installments?: { number?: number };
  subscription?: { enabled: boolean; billingCycle?: string; automaticPix?: boolean; trialDays?: number };
  customer?: { document?: { number?: string } };
}

/** What taking a payment by each method needs the seller to allow. */
export interface PaymentPermissions {
  isCreditCardAvailable: boolean;
  isBoletoAvailable: boolean;
  isPixAvailable: boolean;
}

export const isCardMethod = (method: SalePaymentMethod): method is 'CREDIT_CARD' | 'DEBIT_CARD' =>
  method === 'CREDIT_CARD' || method === 'DEBIT_CARD';

/** The number of installments of a credit card sale: installments.number, or its alias card.installments, or 1. */
export function installmentsOf(request: SaleRequest): number {
  return request.installments?.number ?? request.card?.installments ?? 1;
}

/** Rules across fields that the request's shape cannot say alone (spec 7.1, platform.md §7). */
export function checkSaleRules(request: SaleRequest, today = new Date()): void {
  const errors: FieldError[] = [];
  const creditOnly = 'installments are for CREDIT_CARD sales only';
  if (request.paymentMethod !== 'CREDIT_CARD') {
    if (request.installments?.number !== undefined) errors.push({ field: 'installments.number', message: creditOnly });
    if (request.card?.installments !== undefined) errors.push({ field: 'card.installments', message: creditOnly });
  }
  if (request.installments?.number !== undefined && request.card?.installments !== undefined && request.installments.number !== request.card.installments) {
    errors.push({ field: 'card.installments', message: 'card.installments and installments.number disagree' });
  }
  if (request.card && isCardMethod(request.paymentMethod)) {
    const expiry = Number(request.card.expirationYear) * 12 + Number(request.card.expirationMonth);
    const current = today.getUTCFullYear() * 12 + today.getUTCMonth() + 1;
    if (expiry < current) errors.push({ field: 'card.expirationYear', message: 'the card has expired' });
  }
  if (request.card && request.paymentMethod === 'DEBIT_CARD') errors.push(...debitAuthenticationErrors(request.card));
  if (request.subscription && request.paymentMethod !== 'CREDIT_CARD' && request.paymentMethod !== 'PIX') {
    errors.push({ field: 'paymentMethod', message: 'subscriptions are paid by CREDIT_CARD or PIX only' });
  }
  if (request.subscription?.automaticPix) {
    // Pix Automático (issue 22): a PIX subscription whose payer is named by a CPF or CNPJ, on a cycle the BCB has a period for.
    if (request.paymentMethod !== 'PIX') errors.push({ field: 'subscription.automaticPix', message: 'automaticPix is for PIX subscriptions only' });
    const cycle = request.subscription.billingCycle as BillingCycle | undefined;
    if (cycle && !AUTOMATIC_PIX_PERIODS[cycle]) {
      errors.push({ field: 'subscription.billingCycle', message: `Pix Automático has no ${cycle} period: use WEEKLY, MONTHLY, QUARTERLY, SEMIANNUAL or YEARLY` });
    }
    const trialDays = request.subscription.trialDays ?? 0;
    if (trialDays > 0 && trialDays < AUTOMATIC_PIX_LAST_SEND_DAYS + 1) {
      errors.push({ field: 'subscription.trialDays', message: `with automaticPix a trial lasts at least ${AUTOMATIC_PIX_LAST_SEND_DAYS + 1} days (the first charge reaches the PSP 2 days before it is due), or none` });
    }
    if (!request.customer?.document?.number) errors.push({ field: 'customer.document', message: 'Pix Automático needs the payer\'s CPF or CNPJ' });
  }
  if (errors.length > 0) throw new RequestValidationError([], errors);
  if (request.amount < MINIMUM_SALE_CENTS) {
    throw new DomainError('MINIMUM_AMOUNT', `amount must be at least ${MINIMUM_SALE_CENTS} cents`);
  }
}

/**
 * Online debit must be authenticated by 3-D Secure (cielo-ecommerce-3.0.md §8.1): a debit sale carries
 * `card.threeDSecure`, for a brand 3-D Secure runs for, with an ECI that says the cardholder was
 * authenticated (by the issuer, or by the brand on its behalf: §8.5). Anything else is refused before the
 * acquirer is asked.
 */
function debitAuthenticationErrors(card: NonNullable<SaleRequest['card']>): FieldError[] {
  const authentication = card.threeDSecure;
  if (!authentication) {
    return [{ field: 'card.threeDSecure', message: 'DEBIT_CARD sales must be authenticated by 3-D Secure: send what the BP.Mpi script answered (cavv, eci, version, referenceId); see POST /api/cards/3ds-token' }];
  }
  if (typeof authentication.eci !== 'string' || typeof card.number !== 'string') return [];
  const brand = detectCardBrand(card.number);
  const meaning = eciMeaning(brand, authentication.eci);
  if (meaning === null) return [{ field: 'card.threeDSecure', message: `3-D Secure is not offered for ${brand ?? 'this card'}'s debit (only ${THREE_DS_BRANDS.join(', ')})` }];
  if (!isAuthenticatedEci(brand, authentication.eci)) {
    return [{ field: 'card.threeDSecure.eci', message: `ECI ${authentication.eci} means the ${brand} cardholder was not authenticated (${meaning}): a debit sale needs an authenticated cardholder` }];
  }
  return [];
}

/** FORBIDDEN when the seller may not take payments by the request's method. */
export function checkPaymentPermission(method: SalePaymentMethod, permissions: PaymentPermissions): void {
  const allowed: Record<SalePaymentMethod, boolean> = {
    PIX: permissions.isPixAvailable,
    CREDIT_CARD: permissions.isCreditCardAvailable,
    DEBIT_CARD: permissions.isCreditCardAvailable,
    BOLETO: permissions.isBoletoAvailable,
    TRANSFER: true,
  };
  if (!allowed[method]) {
    throw new DomainError('FORBIDDEN', `${method} payments are not enabled for this account`);
  }
}

/**
 * The request as its idempotency fingerprint sees it: the card number and CVV are left out (only the
 * last four digits stay, so another card is another request). Nothing derived from them is kept.
 */
export function withoutCardSecrets<T extends SaleRequest>(request: T): Omit<T, 'card'> & { card?: Record<string, unknown> } {
  if (!request.card) return request;
  const { number, cvv: _cvv, threeDSecure: _authentication, ...rest } = request.card;
  return { ...request, card: { ...rest, lastFour: number.slice(-4) } };
}

/** An address as a sale request gives it (customer.address, or shipping). */
export interface RequestAddress {
  street?: string;
  streetNumber?: string;
  complement?: string;
  zipCode?: string;
  neighborhood?: string;
  city?: string;
  state?: string;
}

/** The fields a boleto's payer address must have, in the order they are reported missing (ref §9: Street, Number, ZipCode, City, State, District). */
const PAYER_ADDRESS_FIELDS = ['street', 'streetNumber', 'zipCode', 'neighborhood', 'city', 'state'] as const;

/**
 * The payer's address a boleto is registered to: `customer.address` when it is whole, else a whole
 * `shipping` address (`from` says which); otherwise null, with the first field missing
 * (`customer.address.zipCode`, or `customer.address` when neither was given in part) for the 400 that names it.
 */
export function payerAddressOf(request: { customer?: { address?: RequestAddress }; shipping?: RequestAddress }): {
  address: { street: string; streetNumber: string; complement: string | null; zipCode: string; neighborhood: string; city: string; state: string } | null;
  missing: string | null;
  from: 'customer.address' | 'shipping' | null;
} {
  const gap = (address: RequestAddress | undefined) => PAYER_ADDRESS_FIELDS.find((field) => !address?.[field]?.trim()) ?? null;
  const whole = (address: RequestAddress) => ({
    street: address.street as string,
    streetNumber: address.streetNumber as string,
    complement: address.complement?.trim() || null,
    zipCode: address.zipCode as string,
    neighborhood: address.neighborhood as string,
    city: address.city as string,
    state: address.state as string,
  });
  const given = request.customer?.address;
  if (given && gap(given) === null) return { address: whole(given), missing: null, from: 'customer.address' };
  if (request.shipping && gap(request.shipping) === null) return { address: whole(request.shipping), missing: null, from: 'shipping' };
  return { address: null, missing: given ? `customer.address.${gap(given)}` : 'customer.address', from: null };
}
