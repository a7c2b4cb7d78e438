/**
 * Every error the service answers with has one of these codes. Services and domain code throw
 * `DomainError`s; the exception filter of each endpoint family (src/common/filters) turns a code into
 * the HTTP status and the body shape of spec §7.
 */
export const ERROR_CODES = [
  // request shape
  'VALIDATION_ERROR',
  'MISSING_FIELDS',
  'INVALID_ID',
  'MALFORMED_JSON',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'HEADERS_TOO_LARGE',
  'MALFORMED_REQUEST',
  // who is asking
  'UNAUTHORIZED',
  'FORBIDDEN',
  'RATE_LIMITED',
  // what is asked
  'NOT_FOUND',
  'CONFLICT',
  'INVALID_TRANSITION',
  'MINIMUM_AMOUNT',
  'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_KEY_IN_USE',
  'NOT_SUPPORTED',
  // withdrawals (spec 7.4)
  'INSUFFICIENT_BALANCE',
  'API_WITHDRAWAL_DISABLED_GLOBALLY',
  'TRANSFER_NOT_ALLOWED',
  'MINIMUM_VALUE',
  'MAXIMUM_VALUE',
  'GENERAL_ERROR',
  // subscriptions (spec 7.5)
  'INVALID_STATUS',
  'ALREADY_CANCELLED',
  'ALREADY_PAUSED',
  // refunds of a sale
  'SALE_NOT_REFUNDABLE',
  'REFUND_EXCEEDS_REMAINING',
  'REFUND_WINDOW_EXPIRED',
  // the PIX provider (PSP) refused what was asked with an RFC 7807 problem (4xx): asking again will not help
  'PSP_REFUSED',
  // the service is saturated for a moment (no database connection in time): retry after Retry-After
  'SERVICE_UNAVAILABLE',
  // anything unexpected
  'INTERNAL_ERROR',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** A field that failed validation, named by its path in the request (customer.email, items[0].title). */
export interface FieldError {
  field: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A request whose fields are missing or invalid. */
/** At most this many missing fields and field errors are reported (a hostile body could hold thousands). */
export const MAX_REPORTED_FIELD_ERRORS = 20;

export class RequestValidationError extends DomainError {
  readonly missingFields: string[];
  readonly fieldErrors: FieldError[];

  constructor(missingFields: string[], fieldErrors: FieldError[]) {
    super(
      missingFields.length > 0 ? 'MISSING_FIELDS' : 'VALIDATION_ERROR',
      missingFields.length > 0
        ? `Missing required fields: ${missingFields.slice(0, MAX_REPORTED_FIELD_ERRORS).join(', ')}`
        : `Invalid field ${fieldErrors[0]?.field ?? ''}: ${fieldErrors[0]?.message ?? ''}`.trim(),
    );
    this.missingFields = missingFields.slice(0, MAX_REPORTED_FIELD_ERRORS);
    this.fieldErrors = fieldErrors.slice(0, MAX_REPORTED_FIELD_ERRORS);
  }
}

export class InvalidTransitionError extends DomainError {
  constructor(
    readonly from: string,
    readonly event: string,
  ) {
    super('INVALID_TRANSITION', `Cannot apply ${event} to a resource in status ${from}`);
  }
}
