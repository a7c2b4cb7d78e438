/**
 * The spec's tables (../shared/spec/payment-gateway-api.md 2.2, 2.3, 2.5–2.10, 6.1, 6.2, 7) and
 * platform.md's answers, as JSON Schema. Written from the documents, never from the service's DTOs:
 * a field is nullable only where the spec says "or null", required where the spec lists it, and the
 * enums are the spec's. Extra fields the service adds are allowed; the spec's own fields are strict.
 */
type Schema = Record<string, unknown>;

const string: Schema = { type: 'string' };
const integer: Schema = { type: 'integer' };
const boolean: Schema = { type: 'boolean' };
const number: Schema = { type: 'number' };
const object: Schema = { type: 'object' };
const isoDate: Schema = { type: 'string', format: 'date-time' };
const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
const reais: Schema = { type: 'string', pattern: '^-?\\d+\\.\\d{2}$' };

/** An object whose listed properties are all required; `optional` ones may be absent (never null unless typed so). */
export function shape(required: Record<string, Schema>, optional: Record<string, Schema> = {}): Schema {
  return { type: 'object', required: Object.keys(required), properties: { ...required, ...optional } };
}

export const SALE_STATUSES = ['PENDENTE', 'PAGO', 'CANCELADO', 'RECUSADO', 'ESTORNADO', 'FALHA', 'EM_PROCESSAMENTO', 'CHARGEBACK', 'MED'];
export const PAYMENT_METHODS = ['CREDIT_CARD', 'DEBIT_CARD', 'BOLETO', 'PIX', 'TRANSFER'];
export const SUBSCRIPTION_STATUSES = ['PENDING', 'ACTIVE', 'TRIALING', 'PAUSED', 'CANCELLED', 'PAST_DUE', 'EXPIRED'];
export const BILLING_CYCLES = ['WEEKLY', 'BIWEEKLY', 'MONTHLY', 'QUARTERLY', 'SEMIANNUAL', 'YEARLY'];
export const WITHDRAWAL_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED'];
export const WEBHOOK_WITHDRAWAL_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'CANCELLED', 'REJECTED'];
export const PIX_KEY_TYPES = ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM'];
const saleStatus: Schema = { enum: SALE_STATUSES };
const paymentMethod: Schema = { enum: PAYMENT_METHODS };
const subscriptionStatus: Schema = { enum: SUBSCRIPTION_STATUSES };
const billingCycle: Schema = { enum: BILLING_CYCLES };

/** 2.2 and 2.3: name, email, document, phone, all strings. */
const customer = shape({ name: string, email: string, document: string, phone: string });

/**
 * 2.5. Its nextBillingDate is typed a string; 2.6 makes the same date null once the subscription is
 * cancelled or expired, which a sale whose first card is refused does at once. Null is allowed there only.
 */
const saleSubscriptionFields = {
  id: integer,
  status: subscriptionStatus,
  billingCycle,
  amount: integer,
  nextBillingDate: nullable(isoDate),
  trialEndsAt: nullable(isoDate),
  customerEmail: string,
  customerName: string,
};
export const saleSubscription = {
  ...shape(saleSubscriptionFields),
  if: { properties: { status: { enum: ['CANCELLED', 'EXPIRED'] } } },
  else: { properties: { nextBillingDate: isoDate } },
};

/** 2.2 */
export const sale = shape(
  {
    id: integer,
    amount: { type: 'string', pattern: '^\\d+$' },
    status: saleStatus,
    paymentMethod,
    customer,
    payment: shape(
      { method: paymentMethod, installments: nullable(integer) },
      {
        pix: shape({ key: string, qrCodeBase64: { type: 'string', pattern: '^data:image/png;base64,[A-Za-z0-9+/]+=*$' }, expiresAt: nullable(isoDate) }),
        card: shape({ lastDigits: { type: 'string', pattern: '^\\d{4}$' }, brand: string }),
      },
    ),
    shipping: nullable(string),
    createdAt: isoDate,
  },
  { subscription: saleSubscription },
);

export const saleCreated = shape({ message: string, sale });

/** 2.3 */
export const transaction = shape(
  {
    id: integer,
    status: saleStatus,
    amount: integer,
    paymentMethod,
    date: isoDate,
    customer,
    items: { type: 'array', items: shape({ id: integer, title: string, unitPrice: integer, quantity: integer, tangible: boolean }) },
  },
  {
    netAmount: integer,
    systemFee: integer,
    reserveAmount: integer,
    completedAt: nullable(isoDate),
    pixKey: nullable(string),
    cardLastFour: nullable(string),
    cardBrand: nullable(string),
    // The gateway's own field (issue 39): the acquirer's code and text for its answer to a card charge.
    acquirerReturn: shape({ code: string, message: string }),
    boletoCode: nullable(string),
    externalTransactionId: string,
    installments: integer,
    shipping: object,
  },
);

/** 2.6, list item form: 2.5's fields (the date null once cancelled or expired), and three more. */
const subscriptionListFields = {
  ...saleSubscriptionFields,
  paymentMethod: { enum: ['PIX', 'CREDIT_CARD'] },
  product: shape({ id: integer, name: string }),
  createdAt: isoDate,
};
export const subscriptionListItem = shape(subscriptionListFields);

/** 2.6, the whole subscription. */
export const subscription = shape({
  ...subscriptionListFields,
  startedAt: nullable(isoDate),
  cancelledAt: nullable(isoDate),
  customerDocument: string,
  customerPhone: string,
  lastPaymentDate: nullable(isoDate),
  lastPaymentStatus: { enum: ['PAGO', 'PENDENTE', 'RECUSADO', 'FALHA'] },
  totalBillings: integer,
  successfulBillings: integer,
  failedBillings: integer,
  metadata: object,
  updatedAt: isoDate,
});

/** 4.7 */
export const subscriptionList = shape({
  success: { const: true },
  data: shape({
    subscriptions: { type: 'array', items: subscriptionListItem },
    pagination: shape({ page: integer, limit: integer, total: integer, totalPages: integer }),
  }),
});

/** 2.7 inside 4.12 */
export const subscriptionMetrics = shape({
  success: { const: true },
  data: shape({ total: integer, active: integer, cancelled: integer, paused: integer, mrr: number, arr: number, churnRate: number }),
});

export const subscriptionOne = shape({ success: { const: true }, data: subscription });

/** 4.9, 4.10, 4.11 */
export const subscriptionPaused = shape({ success: { const: true }, message: string, data: shape({ id: integer, status: { const: 'PAUSED' }, pausedAt: isoDate }) });
export const subscriptionResumed = shape({
  success: { const: true },
  message: string,
  data: shape({ id: integer, status: { const: 'ACTIVE' }, nextBillingDate: isoDate, resumedAt: isoDate }),
});
export const subscriptionCancelled = shape({
  success: { const: true },
  message: string,
  data: {
    anyOf: [
      shape({ id: integer, status: { const: 'CANCELLED' }, cancelledAt: isoDate, cancellationReason: nullable(string) }),
      shape({ id: integer, status: subscriptionStatus, scheduledCancellationDate: isoDate, cancellationReason: nullable(string) }),
    ],
  },
});

/** 2.8 */
export const balance = shape({ available: integer, blocked: integer, total: integer });

/** 2.9 */
export const sellerAccount = shape({
  id: integer,
  userId: integer,
  legalName: string,
  blocked: boolean,
  invoiceDescriptor: string,
  commercialName: nullable(string),
  createdAt: isoDate,
  uploadedDocuments: boolean,
  user: shape({
    id: integer,
    email: string,
    phone: string,
    name: string,
    isEmailVerified: boolean,
    isPhoneVerified: boolean,
    isAdmin: boolean,
    isMaster: boolean,
    createdAt: isoDate,
  }),
  document: nullable(shape({ id: integer, number: string, type: { enum: ['cpf', 'cnpj'] } })),
  permissions: shape({
    isCreditCardAvailable: boolean,
    isBoletoAvailable: boolean,
    isPixAvailable: boolean,
    transferEnabled: boolean,
    transferPriceCents: integer,
    anticipationEnabled: boolean,
    anticipatableVolumePercentage: number,
    anticipationPricePercent: number,
    minAnticipatableDays: integer,
  }),
  details: shape({
    averageRevenue: integer,
    averageTicket: integer,
    physicalProducts: boolean,
    productsDescription: string,
    siteUrl: string,
    phone: string,
    email: string,
  }),
  legalRepresentative: nullable(object),
  address: nullable(shape({ street: string, streetNumber: string, zipCode: string, neighborhood: string, city: string, state: string, country: string })),
  revenue: shape(
    Object.fromEntries(
      ['total', 'card', 'pix', 'boleto', 'chargeback', 'refund'].flatMap((name) => [
        [`${name}Amount`, integer],
        [`${name}Count`, integer],
      ]),
    ),
  ),
  defaultRecipient: shape({
    id: integer,
    legalName: string,
    document: shape({ number: string, type: string }),
    transferSettings: object,
    balance: shape({ available: integer, updatedAt: isoDate }),
  }),
});

/** 2.10: the creation answer has no updatedAt; the lookup has it. */
const withdrawalFields = {
  id: integer,
  amount: reais,
  netAmount: reais,
  pixKey: string,
  pixKeyType: { enum: PIX_KEY_TYPES },
  status: { enum: WITHDRAWAL_STATUSES },
  createdAt: isoDate,
  fees: shape({ fixed: reais, variable: reais, total: reais }),
};
export const withdrawalCreated = { ...shape(withdrawalFields), not: { required: ['updatedAt'] } };
export const withdrawalLookup = shape({ ...withdrawalFields, updatedAt: isoDate });

/**
 * 6.1 with platform.md §5: `previousStatus` is null on the event that announces a creation; `sequence`
 * (issue 23) numbers the events of one sale or subscription from 1.
 */
const postbackFields = { id: string, previousStatus: nullable(string), status: string, changedAt: isoDate, sequence: { type: 'integer', minimum: 1 } };
export const transactionPostback = shape({ ...postbackFields, type: { const: 'transaction.status_changed' }, status: saleStatus, previousStatus: nullable(saleStatus), data: transaction });
export const subscriptionPostback = shape({
  ...postbackFields,
  type: { const: 'subscription.status_changed' },
  status: subscriptionStatus,
  previousStatus: nullable(subscriptionStatus),
  data: subscription,
});

/** 6.2 */
export const withdrawalWebhook = shape({
  id: integer,
  userId: integer,
  amount: reais,
  pixKey: nullable(string),
  pixKeyType: nullable({ enum: PIX_KEY_TYPES }),
  status: { enum: WEBHOOK_WITHDRAWAL_STATUSES },
  externalId: nullable(string),
  createdAt: isoDate,
  updatedAt: isoDate,
  processedAt: nullable(isoDate),
  user: shape({ id: integer, name: string, email: string }),
  type: { const: 'WITHDRAWAL' },
});

/** Section 7's error families. */
const details400: Schema = {
  anyOf: [
    shape({ missingFields: { type: 'array', items: string, minItems: 1 } }),
    shape({ field: string, message: string }),
  ],
};

/** 7.1: `{message, error}`, `details` on every 400; 401 `{message, details}` with details a string. */
export function salesError(status: number): Schema {
  if (status === 401) return shape({ message: string, details: string });
  if (status === 400) return shape({ message: string, error: string, details: details400 });
  return shape({ message: string, error: string });
}

/** 7.2 and the sandbox routes (platform.md §3): `{message, error}`. */
export function lookupError(status: number): Schema {
  return status === 400 ? shape({ message: string, error: string }, { details: details400 }) : shape({ message: string, error: string });
}

/** 7.4: business errors `{message, errorType}` with the spec's set; the rest `{message, error}`. */
export function cashoutError(status: number): Schema {
  const business: Record<number, string[]> = {
    403: ['API_WITHDRAWAL_DISABLED_GLOBALLY', 'TRANSFER_NOT_ALLOWED'],
    422: ['INSUFFICIENT_BALANCE', 'MINIMUM_VALUE', 'MAXIMUM_VALUE'],
    500: ['GENERAL_ERROR'],
  };
  const plain = lookupError(status);
  const codes = business[status];
  if (status === 500) return shape({ message: string, errorType: { enum: codes } });
  return codes ? { anyOf: [shape({ message: string, errorType: { enum: codes } }), plain] } : plain;
}

/** 7 (seller, balance) and every route outside the spec's families: `{error, message}`. */
export function accountError(status: number): Schema {
  return status === 400 ? shape({ error: string, message: string }, { details: details400 }) : shape({ error: string, message: string });
}

/** 7.5: `{success: false, error: {code, message}}`, the spec's code for each status it names. */
export function subscriptionsError(status: number): Schema {
  const codes: Record<number, string[]> = {
    400: ['INVALID_STATUS', 'ALREADY_CANCELLED', 'ALREADY_PAUSED', 'VALIDATION_ERROR', 'MISSING_FIELDS', 'INVALID_ID', 'MALFORMED_JSON', 'MALFORMED_REQUEST'],
    401: ['UNAUTHORIZED'],
    403: ['FORBIDDEN'],
    404: ['NOT_FOUND'],
    500: ['INTERNAL_ERROR'],
  };
  const code = codes[status] ? { enum: codes[status] } : string;
  return shape({ success: { const: false }, error: shape({ code, message: string }, status === 400 ? { details: details400 } : {}) });
}
