import { Catch } from '@nestjs/common';
import { ErrorCode } from '../../domain/domain-error';
import { ErrorBodyRenderer, validationDetails, withRequestId } from './error-family';
import { FamilyExceptionFilter } from './family-exception.filter';

/**
 * How each code is answered on the cashout routes (spec 7.4): business errors as `{message, errorType}`,
 * the rest as `{message, error}`; an internal failure is errorType GENERAL_ERROR.
 */
const CASHOUT_BODY_KEY: Record<ErrorCode, 'errorType' | 'error'> = {
  INSUFFICIENT_BALANCE: 'errorType',
  API_WITHDRAWAL_DISABLED_GLOBALLY: 'errorType',
  TRANSFER_NOT_ALLOWED: 'errorType',
  MINIMUM_VALUE: 'errorType',
  MAXIMUM_VALUE: 'errorType',
  GENERAL_ERROR: 'errorType',
  INTERNAL_ERROR: 'errorType',
  VALIDATION_ERROR: 'error',
  MISSING_FIELDS: 'error',
  INVALID_ID: 'error',
  MALFORMED_JSON: 'error',
  PAYLOAD_TOO_LARGE: 'error',
  UNSUPPORTED_MEDIA_TYPE: 'error',
  HEADERS_TOO_LARGE: 'error',
  MALFORMED_REQUEST: 'error',
  UNAUTHORIZED: 'error',
  FORBIDDEN: 'error',
  RATE_LIMITED: 'error',
  NOT_FOUND: 'error',
  CONFLICT: 'error',
  INVALID_TRANSITION: 'error',
  MINIMUM_AMOUNT: 'error',
  IDEMPOTENCY_KEY_REUSED: 'error',
  IDEMPOTENCY_KEY_IN_USE: 'error',
  NOT_SUPPORTED: 'error',
  INVALID_STATUS: 'error',
  SALE_NOT_REFUNDABLE: 'error',
  REFUND_EXCEEDS_REMAINING: 'error',
  REFUND_WINDOW_EXPIRED: 'error',
  ALREADY_CANCELLED: 'error',
  ALREADY_PAUSED: 'error',
  PSP_REFUSED: 'error',
  SERVICE_UNAVAILABLE: 'error',
};

export const renderCashoutError: ErrorBodyRenderer = (context) => {
  const { error } = context;
  const code = error.code === 'INTERNAL_ERROR' ? 'GENERAL_ERROR' : error.code;
  const details = context.status === 400 ? validationDetails(error) : undefined;
  return withRequestId(
    { message: error.message, [CASHOUT_BODY_KEY[error.code]]: code, ...(details ? { details } : {}) },
    context,
  );
};

@Catch()
export class CashoutExceptionFilter extends FamilyExceptionFilter {
  protected readonly render = renderCashoutError;
}
