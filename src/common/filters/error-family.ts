import { DomainError, RequestValidationError } from '../../domain/domain-error';

/** What a family renderer gets: the error, its status, and the request id to quote on a 500. */
export interface ErrorContext {
  error: DomainError;
  status: number;
  requestId: string;
}

/** The body of an error answer in one endpoint family's shape (spec §7). */
export type ErrorBodyRenderer = (context: ErrorContext) => Record<string, unknown>;

export const INTERNAL_MESSAGE = 'Internal server error';

/** The details of a 400: which fields are missing, or which field is wrong and why. */
export function validationDetails(error: DomainError): Record<string, unknown> | undefined {
  if (error instanceof RequestValidationError) {
    if (error.missingFields.length > 0) return { missingFields: error.missingFields };
    const [first, ...rest] = error.fieldErrors;
    return rest.length > 0 ? { ...first, errors: error.fieldErrors } : { ...first };
  }
  return error.details;
}

/** The request id, added to every 500 so that a seller can quote it to support. */
export function withRequestId(body: Record<string, unknown>, context: ErrorContext): Record<string, unknown> {
  return context.status >= 500 ? { ...body, requestId: context.requestId } : body;
}
