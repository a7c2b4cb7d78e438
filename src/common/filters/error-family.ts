import { DomainError, ErrorCode, RequestValidationError } from '../../domain/domain-error';

/** What a family renderer gets: the error, its status, and the request id to quote on a 500. */
export interface ErrorContext {
  error: DomainError;
  status: number;
  requestId: string;
}

/** The body of an error answer in one endpoint family's shape (spec §7). */
export type ErrorBodyRenderer = (context: ErrorContext) => Record<string, unknown>;

export const INTERNAL_MESSAGE = 'Internal server error';

/** The field a 400 is about when the error names none: the body, the path's id, or the request as a whole. */
const FIELD_BY_CODE: Partial<Record<ErrorCode, string>> = {
  MALFORMED_JSON: 'body',
  INVALID_ID: 'id',
};

const STATE_REFUSALS: ReadonlySet<ErrorCode> = new Set(['INVALID_STATUS', 'ALREADY_CANCELLED', 'ALREADY_PAUSED']);

/**
 * The details of a 400, whatever produced it (the body parser, the shape check, the validation pipe,
 * a node-level refusal): which fields are missing, or which field is wrong and why.
 */
export function validationDetails(error: DomainError): Record<string, unknown> | undefined {
  // A subscription's state refusing the operation (spec 7.5) is about no field of the request.
  if (STATE_REFUSALS.has(error.code)) return undefined;
  if (error instanceof RequestValidationError) {
    if (error.missingFields.length > 0) return { missingFields: error.missingFields };
    const [first, ...rest] = error.fieldErrors;
    return rest.length > 0 ? { ...first, errors: error.fieldErrors } : { ...first };
  }
  return { field: FIELD_BY_CODE[error.code] ?? 'request', message: error.message, ...error.details };
}

/** The request id, added to every 500 so that a seller can quote it to support. */
export function withRequestId(body: Record<string, unknown>, context: ErrorContext): Record<string, unknown> {
  return context.status >= 500 ? { ...body, requestId: context.requestId } : body;
}
