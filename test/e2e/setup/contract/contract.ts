import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import * as S from './spec-schemas';

/**
 * The contract check: every JSON answer the e2e suite receives, and every postback or webhook body its
 * receivers get, against the spec's types (spec-schemas.ts). An answer on a route or status the table
 * below does not know is a violation too, so a new route cannot go unchecked.
 */
type Schema = Record<string, unknown>;
type Family = (status: number) => Schema;

interface Route {
  method: string;
  path: RegExp;
  /** The success answers by status; a status not listed is refused unless it is an error of `family`. */
  ok: Record<number, Schema | null>;
  family: Family;
}

const ID = '[^/]+';
const keyPair = S.shape({ publicKey: { type: 'string', pattern: '^pk_' }, privateKey: { type: 'string', pattern: '^sk_' } });
const webhook = S.shape({ id: { type: 'integer' }, url: { type: 'string' }, type: { const: 'WITHDRAWAL' } });
const settings = S.shape({ apiWithdrawalsEnabled: { type: 'boolean' } });
const invitation = S.shape({ url: { type: 'string' }, expiresAt: { type: 'string', format: 'date-time' }, revokedInvitations: { type: 'integer', minimum: 0 } });
const adminSeller = { allOf: [S.sellerAccount, S.shape({ fees: { type: 'object' } })] };
/** A sale as the operator sees it (POST /admin/sales/{id}/events): the lookup of spec 2.3, its seller, its status history with who recorded each move. */
const adminSale = {
  allOf: [
    S.transaction,
    S.shape({
      sellerId: { type: 'integer' },
      statusHistory: {
        type: 'array',
        items: S.shape({
          previousStatus: { anyOf: [{ enum: S.SALE_STATUSES }, { type: 'null' }] },
          status: { enum: S.SALE_STATUSES },
          changedAt: { type: 'string', format: 'date-time' },
          recordedBy: { enum: ['OPERATOR', null] },
          reason: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'null' }] },
        }),
      },
    }),
  ],
};
const operatorObject = { type: 'object' };
const operatorList = { type: 'array', items: { type: 'object' } };
const health = S.shape({ status: { enum: ['ok', 'error'] } });
const cents = { type: 'integer' };
const ledgerSummary = S.shape({
  from: { type: 'string', format: 'date-time' },
  to: { type: 'string', format: 'date-time' },
  feeRevenue: cents,
  fineRevenue: cents,
  reversalCost: cents,
  providers: { type: 'array', items: S.shape({ provider: { type: 'string' }, acquirerReceivable: cents, pspHoldings: cents, payoutInTransit: cents }) },
  sellers: S.shape({ available: cents, blocked: cents }),
  balance: { const: 0 },
});
/** The statement (extrato), the gateway's own route beside 2.8: integers in cents, a nullable cursor. */
const statement = S.shape({
  statement: {
    type: 'array',
    items: S.shape({
      id: { type: 'integer' },
      createdAt: { type: 'string', format: 'date-time' },
      kind: { type: 'string' },
      reference: S.shape({ type: { enum: ['SALE', 'WITHDRAWAL'] }, id: { type: 'integer' } }),
      available: { type: 'integer' },
      blocked: { type: 'integer' },
      availableAfter: { type: 'integer' },
      blockedAfter: { type: 'integer' },
    }),
  },
  nextCursor: { anyOf: [{ type: 'string' }, { type: 'null' }] },
});

/** A refund of a sale (the gateway's own route beside spec 4.1): cents, a status, dates. */
const refund = S.shape({
  id: { type: 'integer' },
  saleId: { type: 'integer' },
  amount: { type: 'integer', minimum: 1 },
  status: { enum: ['PENDING', 'COMPLETED', 'FAILED'] },
  failureReason: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  initiatedBy: { enum: ['SELLER', 'PSP'] },
  nature: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  createdAt: { type: 'string', format: 'date-time' },
  completedAt: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] },
});
const refundStatus = { enum: ['PENDING', 'COMPLETED', 'FAILED'] };
/** A refund's signed postback (issue 21, beside spec 6.1's): the envelope of 6.1 around the refund as the API shows it. */
const refundPostback = S.shape({
  id: { type: 'string' },
  type: { const: 'refund.status_changed' },
  previousStatus: { anyOf: [refundStatus, { type: 'null' }] },
  status: refundStatus,
  changedAt: { type: 'string', format: 'date-time' },
  sequence: { type: 'integer', minimum: 1 },
  data: refund,
});
/** POST /api/cards/3ds-token (issue 39): the token for the checkout page's 3-D Secure script. */
const threeDSecureToken = S.shape({
  accessToken: { type: 'string', minLength: 1 },
  expiresAt: { type: 'string', format: 'date-time' },
  environment: { enum: ['SDB', 'PRD', 'SANDBOX'] },
  scriptUrl: { anyOf: [{ type: 'string', format: 'uri' }, { type: 'null' }] },
});
const refundList = S.shape({ refunds: { type: 'array', items: refund }, refundedAmount: cents, refundableAmount: cents });
const reconciliation = S.shape({
  from: { type: 'string', format: 'date-time' },
  to: { type: 'string', format: 'date-time' },
  provider: { enum: ['sandbox', 'api-pix'] },
  receivedAtPsp: S.shape({ count: { type: 'integer' }, amount: cents }),
  bookedInGateway: S.shape({ count: { type: 'integer' }, amount: cents }),
  differences: {
    type: 'array',
    items: S.shape({
      kind: {
        enum: ['UNMATCHED', 'LATE', 'AMOUNT_MISMATCH', 'DUPLICATE', 'NOT_BOOKED', 'NOT_AT_PSP', 'PSP_RETURN', 'SEND_UNKNOWN', 'PAYOUT_NOT_AT_PSP', 'PAYOUT_AMOUNT_MISMATCH', 'PAYOUT_STATUS_MISMATCH'],
      },
      endToEndId: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      txid: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      saleId: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
      withdrawalId: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
      amount: cents,
      returnStatus: { anyOf: [{ enum: ['PENDING', 'DEVOLVIDO', 'NAO_REALIZADO'] }, { type: 'null' }] },
      detail: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    }),
  },
});
/** The PSP's side of the webhook: an empty object, or an RFC 7807 problem. */
const pspProblem: Family = () => S.shape({ type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' } }, { detail: { type: 'string' } });

/** Every route with a JSON answer: the spec's (section 4), the sandbox's and the operator's (platform.md §2, §3). */
/** Pix Automático (issue 22): the authorization a subscription shows, and a subscription that shows one. */
const isoDate = { type: 'string', format: 'date-time' };
const nullable = (schema: object) => ({ anyOf: [schema, { type: 'null' }] });
const automaticPix = S.shape({
  status: { enum: ['PENDING', 'AUTHORIZED', 'REJECTED', 'EXPIRED', 'CANCELLED'] },
  journey: { enum: ['JOURNEY_2', 'JOURNEY_3'] },
  recurrenceId: nullable({ type: 'string', pattern: '^[a-zA-Z0-9]{29}$' }),
  authorizedAt: nullable(isoDate),
  endedAt: nullable(isoDate),
  endReason: nullable({ type: 'string' }),
  renewals: { enum: ['AUTOMATIC', 'AWAITING_AUTHORIZATION', 'QR_PER_CYCLE'] },
  retryPolicy: { const: 'PERMITE_3R_7D' },
  maxAmount: cents,
  endDate: nullable(isoDate),
});
const automaticSubscription = { allOf: [S.subscription, S.shape({ automaticPix })] };
/** A Pix Automático authorization's change (issue 35): the authorization's statuses, the subscription after it. */
const authorizationStatus = { enum: ['PENDING', 'AUTHORIZED', 'REJECTED', 'EXPIRED', 'CANCELLED'] };
const automaticPixPostback = S.shape({
  id: { type: 'string' },
  type: { const: 'subscription.automatic_pix_changed' },
  previousStatus: nullable(authorizationStatus),
  status: authorizationStatus,
  changedAt: isoDate,
  sequence: { type: 'integer', minimum: 1 },
  data: automaticSubscription,
});

/** The events API (issue 23): its own family, in the `{success, data}` / `{success: false, error}` shape of spec 7.5. */
/** A boleto paid after its sale was cancelled, owed back to its payer (issue 40's operator list). */
const lateBoletoPayment = S.shape({
  id: { type: 'integer', minimum: 1 },
  saleId: { type: 'integer', minimum: 1 },
  sellerId: { type: 'integer', minimum: 1 },
  provider: { type: 'string' },
  paymentId: { type: 'string' },
  amount: { type: 'integer', minimum: 1 },
  seenBy: { enum: ['NOTIFICATION', 'POLL'] },
  status: { enum: ['DUE', 'RETURNED'] },
  returnedAt: nullable(isoDate),
  returnNote: nullable({ type: 'string' }),
  createdAt: isoDate,
});
const isoOrNull = nullable({ type: 'string', format: 'date-time' });
const event = S.shape({
  id: { type: 'string', format: 'uuid' },
  type: { enum: ['transaction.status_changed', 'refund.status_changed', 'subscription.status_changed', 'subscription.automatic_pix_changed', 'withdrawal.status_changed'] },
  objectType: nullable({ enum: ['sale', 'subscription', 'withdrawal'] }),
  objectId: nullable({ type: 'integer', minimum: 1 }),
  sequence: nullable({ type: 'integer', minimum: 1 }),
  createdAt: { type: 'string', format: 'date-time' },
  url: { type: 'string' },
  deliveryStatus: { enum: ['pending', 'delivered', 'failed'] },
  attempts: { type: 'integer', minimum: 0 },
  nextAttemptAt: isoOrNull,
  deliveredAt: isoOrNull,
  lastError: nullable({ type: 'string' }),
  payload: { type: 'object' },
});
const eventAttempt = S.shape({
  attemptedAt: { type: 'string', format: 'date-time' },
  responseStatus: nullable({ type: 'integer' }),
  error: nullable({ type: 'string' }),
  durationMs: { type: 'integer', minimum: 0 },
  requestHeaders: nullable({ type: 'object', additionalProperties: { type: 'string' } }),
});
const eventDetail = { allOf: [event, S.shape({ deliveryAttempts: { type: 'array', items: eventAttempt } })] };
const ok = (data: Schema) => S.shape({ success: { const: true }, data });
const eventList = ok(S.shape({ events: { type: 'array', items: event }, nextCursor: nullable({ type: 'string' }) }));
const endpointList = ok({
  type: 'array',
  items: S.shape({
    url: { type: 'string' },
    status: { enum: ['healthy', 'failing'] },
    failingSince: isoOrNull,
    failuresSince: isoOrNull,
    lastSuccessAt: isoOrNull,
    lastFailureAt: isoOrNull,
    lastError: nullable({ type: 'string' }),
  }),
});
const rolledSecret = S.shape({ postbackSecret: { type: 'string', pattern: '^whsec_' }, previousSecretExpiresAt: isoOrNull, expiredEarlierSecret: { type: 'boolean' } });

const ROUTES: Route[] = [
  { method: 'POST', path: /^\/api\/sales$/, ok: { 201: S.saleCreated }, family: S.salesError },
  { method: 'GET', path: new RegExp(`^/api/transactions/${ID}$`), ok: { 200: S.transaction }, family: S.lookupError },
  { method: 'POST', path: /^\/api\/cards\/3ds-token$/, ok: { 200: threeDSecureToken }, family: S.salesError },
  { method: 'POST', path: new RegExp(`^/api/sales/${ID}/refunds$`), ok: { 201: refund }, family: S.salesError },
  { method: 'GET', path: new RegExp(`^/api/sales/${ID}/refunds$`), ok: { 200: refundList }, family: S.salesError },
  { method: 'GET', path: /^\/admin\/reconciliation$/, ok: { 200: reconciliation }, family: S.accountError },
  // The PSP's notifications, at the path the tests give API_PIX_WEBHOOK_URL.
  { method: 'POST', path: /^\/psp\/notifications\/[A-Za-z0-9_-]{22,}\/pix$/, ok: { 200: S.shape({}) }, family: pspProblem },
  // Pix Automático's, served only with it configured (issue 35): without it, the service's own 404.
  { method: 'POST', path: /^\/psp\/notifications\/[A-Za-z0-9_-]{22,}\/(rec|cobr)$/, ok: { 200: S.shape({}) }, family: (status) => (status === 404 ? S.accountError(status) : pspProblem(status)) },
  // Any provider's notifications through the one intake (src/intake): POST <its path>/<secret>[/<kind>]; a path
  // under it that no provider declared is the service's own 404.
  { method: 'POST', path: /^\/[a-z0-9-]+\/notifications\/[A-Za-z0-9_-]{22,}(\/[a-z-]+)?$/, ok: { 200: S.shape({}) }, family: (status) => (status === 404 ? S.accountError(status) : pspProblem(status)) },
  { method: 'GET', path: /^\/api\/seller$/, ok: { 200: S.sellerAccount }, family: S.accountError },
  { method: 'GET', path: /^\/api\/public\/balance$/, ok: { 200: S.balance }, family: S.accountError },
  { method: 'GET', path: /^\/api\/public\/balance\/statement$/, ok: { 200: statement }, family: S.accountError },
  { method: 'POST', path: /^\/api\/public\/cashout$/, ok: { 201: S.withdrawalCreated }, family: S.cashoutError },
  { method: 'GET', path: new RegExp(`^/api/public/cashout/${ID}$`), ok: { 200: S.withdrawalLookup }, family: S.cashoutError },
  { method: 'GET', path: /^\/api\/subscriptions$/, ok: { 200: S.subscriptionList }, family: S.subscriptionsError },
  { method: 'GET', path: /^\/api\/subscriptions\/metrics$/, ok: { 200: S.subscriptionMetrics }, family: S.subscriptionsError },
  { method: 'GET', path: new RegExp(`^/api/subscriptions/${ID}$`), ok: { 200: S.subscriptionOne }, family: S.subscriptionsError },
  { method: 'POST', path: new RegExp(`^/api/subscriptions/${ID}/pause$`), ok: { 200: S.subscriptionPaused }, family: S.subscriptionsError },
  { method: 'POST', path: new RegExp(`^/api/subscriptions/${ID}/resume$`), ok: { 200: S.subscriptionResumed }, family: S.subscriptionsError },
  { method: 'POST', path: new RegExp(`^/api/subscriptions/${ID}/cancel$`), ok: { 200: S.subscriptionCancelled }, family: S.subscriptionsError },
  { method: 'POST', path: new RegExp(`^/api/sandbox/sales/${ID}/events$`), ok: { 200: S.transaction }, family: S.lookupError },
  { method: 'POST', path: new RegExp(`^/api/sandbox/subscriptions/${ID}/automatic-pix$`), ok: { 200: automaticSubscription }, family: S.lookupError },
  { method: 'POST', path: new RegExp(`^/api/sandbox/sales/${ID}/automatic-pix$`), ok: { 200: S.transaction }, family: S.lookupError },
  { method: 'POST', path: new RegExp(`^/api/sandbox/cashouts/${ID}/events$`), ok: { 200: S.withdrawalLookup }, family: S.lookupError },
  { method: 'POST', path: new RegExp(`^/api/sandbox/refunds/${ID}/events$`), ok: { 200: refund }, family: S.lookupError },
  { method: 'POST', path: /^\/api\/sandbox\/scheduler\/run$/, ok: { 200: operatorObject }, family: S.lookupError },
  {
    method: 'POST',
    path: /^\/admin\/sellers$/,
    ok: { 201: S.shape({ seller: S.sellerAccount, credentials: keyPair, postbackSecret: { type: 'string' } }) },
    family: S.accountError,
  },
  { method: 'GET', path: new RegExp(`^/admin/sellers/${ID}$`), ok: { 200: adminSeller }, family: S.accountError },
  { method: 'PATCH', path: new RegExp(`^/admin/sellers/${ID}$`), ok: { 200: adminSeller }, family: S.accountError },
  { method: 'POST', path: new RegExp(`^/admin/sellers/${ID}/api-keys$`), ok: { 201: keyPair }, family: S.accountError },
  { method: 'POST', path: new RegExp(`^/admin/sellers/${ID}/invitation$`), ok: { 201: invitation }, family: S.accountError },
  { method: 'DELETE', path: new RegExp(`^/admin/api-keys/${ID}$`), ok: { 204: null }, family: S.accountError },
  { method: 'POST', path: new RegExp(`^/admin/sales/${ID}/events$`), ok: { 200: adminSale }, family: S.accountError },
  { method: 'GET', path: /^\/admin\/settings$/, ok: { 200: settings }, family: S.accountError },
  { method: 'GET', path: /^\/admin\/ledger\/summary$/, ok: { 200: ledgerSummary }, family: S.accountError },
  { method: 'PUT', path: /^\/admin\/settings$/, ok: { 200: settings }, family: S.accountError },
  { method: 'POST', path: new RegExp(`^/admin/sellers/${ID}/webhooks$`), ok: { 201: webhook }, family: S.accountError },
  { method: 'GET', path: new RegExp(`^/admin/sellers/${ID}/webhooks$`), ok: { 200: { type: 'array', items: webhook } }, family: S.accountError },
  { method: 'DELETE', path: new RegExp(`^/admin/sellers/${ID}/webhooks/${ID}$`), ok: { 204: null }, family: S.accountError },
  { method: 'GET', path: new RegExp(`^/admin/sellers/${ID}/deliveries$`), ok: { 200: operatorList }, family: S.accountError },
  { method: 'POST', path: new RegExp(`^/admin/sellers/${ID}/deliveries/${ID}/redeliver$`), ok: { 200: operatorObject, 201: operatorObject }, family: S.accountError },
  { method: 'POST', path: new RegExp(`^/admin/sellers/${ID}/postback-secret$`), ok: { 201: rolledSecret }, family: S.accountError },
  { method: 'GET', path: /^\/admin\/boleto-returns$/, ok: { 200: { type: 'array', items: lateBoletoPayment } }, family: S.accountError },
  { method: 'POST', path: new RegExp(`^/admin/boleto-returns/${ID}/returned$`), ok: { 200: lateBoletoPayment }, family: S.accountError },
  { method: 'GET', path: /^\/api\/events$/, ok: { 200: eventList }, family: S.subscriptionsError },
  { method: 'GET', path: /^\/api\/events\/endpoints$/, ok: { 200: endpointList }, family: S.subscriptionsError },
  { method: 'POST', path: /^\/api\/events\/redeliver$/, ok: { 202: ok(S.shape({ requeued: { type: 'integer', minimum: 0 }, remaining: { type: 'integer', minimum: 0 } })) }, family: S.subscriptionsError },
  { method: 'GET', path: /^\/api\/events\/secret$/, ok: { 200: ok(S.shape({ previousSecretExpiresAt: isoOrNull })) }, family: S.subscriptionsError },
  { method: 'POST', path: /^\/api\/events\/secret\/roll$/, ok: { 201: ok(rolledSecret) }, family: S.subscriptionsError },
  { method: 'POST', path: /^\/api\/events\/secret\/expire-previous$/, ok: { 200: ok(S.shape({ expired: { type: 'boolean' } })) }, family: S.subscriptionsError },
  { method: 'GET', path: new RegExp(`^/api/events/${ID}$`), ok: { 200: ok(eventDetail) }, family: S.subscriptionsError },
  { method: 'POST', path: new RegExp(`^/api/events/${ID}/redeliver$`), ok: { 202: ok(eventDetail) }, family: S.subscriptionsError },
  { method: 'GET', path: /^\/health(\/live)?$/, ok: { 200: health, 503: health }, family: S.accountError },
  // The whole OpenAPI document, for the operator (outside production the same as /docs-json, which contract.e2e-spec.ts checks).
  { method: 'GET', path: /^\/admin\/docs-json$/, ok: { 200: S.shape({ openapi: { type: 'string' }, paths: { type: 'object' } }) }, family: S.accountError },
];

/** The family of an answer whose route is unknown, by the spec's path prefixes (section 7). */
function familyByPath(path: string): Family {
  if (/^\/api\/sales(\/|$)/.test(path)) return S.salesError;
  if (/^\/api\/(transactions|sandbox)(\/|$)/.test(path)) return S.lookupError;
  if (/^\/api\/public\/cashout(\/|$)/.test(path)) return S.cashoutError;
  if (/^\/api\/subscriptions(\/|$)/.test(path)) return S.subscriptionsError;
  if (/^\/api\/events(\/|$)/.test(path)) return S.subscriptionsError;
  return S.accountError;
}

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const compiled = new Map<Schema, ValidateFunction>();
function validatorFor(schema: Schema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

function problems(schema: Schema, body: unknown): string | null {
  const validate = validatorFor(schema);
  if (validate(body)) return null;
  return ajv.errorsText(validate.errors, { separator: '; ', dataVar: 'body' });
}

/** Rules a schema cannot say: 2.8's total is available plus blocked. */
function semanticProblems(path: string, status: number, body: unknown): string | null {
  if (status === 200 && path === '/api/public/balance') {
    const b = body as { available: number; blocked: number; total: number };
    if (b.total !== b.available + b.blocked) return `body.total ${b.total} is not available ${b.available} + blocked ${b.blocked}`;
  }
  return null;
}

/** Dashboard pages, Swagger and metrics answer HTML or text; /docs-json is checked by its own test. */
const NOT_JSON_CONTRACT = /^\/(dashboard|docs|docs-json|metrics)(\/|$)/;

/**
 * What is wrong with one answer, or null. `body` is the parsed JSON (undefined when the answer was not JSON).
 * Only JSON answers are checked, and a JSON answer on a route of the API must be one the table knows.
 */
export function answerViolation(method: string, url: string, status: number, contentType: string | undefined, body: unknown): string | null {
  // Express routes ignore a trailing slash (and case: the routes here are lower case).
  const path = new URL(url, 'http://x').pathname.replace(/(.)\/+$/, '$1');
  if (NOT_JSON_CONTRACT.test(path)) return null;
  const isJson = /^application\/json/i.test(contentType ?? '');
  const route = ROUTES.find((r) => r.method === method.toUpperCase() && r.path.test(path));
  const where = `${method.toUpperCase()} ${path} ${status}`;
  if (route && status in route.ok) {
    const schema = route.ok[status];
    if (schema === null) return null;
    if (!isJson) return `${where}: expected a JSON body, got ${contentType ?? 'none'}`;
    const found = problems(schema, body) ?? semanticProblems(path, status, body);
    return found ? `${where}: ${found}` : null;
  }
  if (status < 400) return isJson ? `${where}: no contract for this route and status` : null;
  if (!isJson) return method.toUpperCase() === 'HEAD' ? null : `${where}: an error answer must be JSON, got ${contentType ?? 'none'}`;
  const found = problems((route?.family ?? familyByPath(path))(status), body);
  return found ? `${where}: ${found}` : null;
}

/** What is wrong with a postback or webhook body a test receiver got, or null. */
export function deliveryViolation(headers: Record<string, unknown>, body: unknown): string | null {
  const type = (body as { type?: unknown } | null)?.type;
  const schema =
    type === 'transaction.status_changed'
      ? S.transactionPostback
      : type === 'subscription.status_changed'
        ? S.subscriptionPostback
        : type === 'refund.status_changed'
          ? refundPostback
          : type === 'subscription.automatic_pix_changed'
            ? automaticPixPostback
            : type === 'WITHDRAWAL'
              ? S.withdrawalWebhook
              : null;
  if (!schema) return `delivery of unknown type ${JSON.stringify(type)}`;
  const signed = typeof headers['x-signature'] === 'string';
  if (type === 'WITHDRAWAL' && signed) return 'withdrawal webhook carries X-Signature (spec 6.2 says none)';
  if (type !== 'WITHDRAWAL' && !signed) return `${String(type)} postback without X-Signature (spec 6.1)`;
  const found = problems(schema, body);
  return found ? `${String(type)}: ${found}` : null;
}

/** Violations found where no test can fail at once (a receiver's server); the e2e setup fails the test that caused them. */
export const pendingViolations: string[] = [];
