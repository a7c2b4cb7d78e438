import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { DomainError, ErrorCode, RequestValidationError } from '../../domain/domain-error';
import { renderAccountError } from '../filters/account-exception.filter';
import { renderCashoutError } from '../filters/cashout-exception.filter';
import { ErrorBodyRenderer } from '../filters/error-family';
import { renderEventsError } from '../filters/events-exception.filter';
import { STATUS_BY_CODE } from '../filters/error-status';
import { renderSalesError } from '../filters/sales-exception.filter';
import { renderSubscriptionsError } from '../filters/subscriptions-exception.filter';
import { renderTransactionsError } from '../filters/transactions-exception.filter';

export type ErrorFamily = 'account' | 'sales' | 'transactions' | 'cashout' | 'subscriptions' | 'events';

const RENDERERS: Record<ErrorFamily, ErrorBodyRenderer> = {
  account: renderAccountError,
  sales: renderSalesError,
  transactions: renderTransactionsError,
  cashout: renderCashoutError,
  subscriptions: renderSubscriptionsError,
  events: renderEventsError,
};

const SAMPLE_MESSAGES: Partial<Record<ErrorCode, string>> = {
  UNAUTHORIZED: 'Invalid API key pair',
  FORBIDDEN: 'This account is blocked',
  NOT_FOUND: 'Not found',
  RATE_LIMITED: 'Too many requests: slow down and retry after the Retry-After delay',
  INTERNAL_ERROR: 'Internal server error',
  SERVICE_UNAVAILABLE: 'The service is busy: retry after the Retry-After delay',
  PSP_REFUSED: 'The PIX provider refused the charge (400 Cobrança inválida.: O campo cob.devedor.cpf não é válido.); nothing was created, and the same request will be refused again',
  MALFORMED_JSON: 'The request body is not valid JSON',
  UNSUPPORTED_MEDIA_TYPE: 'The request body must be JSON sent as Content-Type: application/json; this one has Content-Type "text/plain" and was not read',
  PAYLOAD_TOO_LARGE: 'The request body is too large',
  INVALID_ID: 'Invalid id "abc": it must be a positive integer',
};

function sampleError(code: ErrorCode): DomainError {
  if (code === 'MISSING_FIELDS') return new RequestValidationError(['customer.email', 'items'], []);
  if (code === 'VALIDATION_ERROR') {
    return new RequestValidationError([], [{ field: 'email', message: 'email must be an email' }]);
  }
  return new DomainError(code, SAMPLE_MESSAGES[code] ?? code);
}

/**
 * Documents the error answers of a route with example bodies rendered by the family's own filter,
 * so the documentation cannot drift from what the service answers.
 */
export function ApiErrorResponses(family: ErrorFamily, codes: ErrorCode[]): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = STATUS_BY_CODE[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const decorators = [...byStatus.entries()].map(([status, statusCodes]) => {
    const examples = Object.fromEntries(
      statusCodes.map((code) => [
        code,
        { value: RENDERERS[family]({ error: sampleError(code), status, requestId: '5b1f0c1e-2f59-4d0c-9f7e-1c2b3a4d5e6f' }) },
      ]),
    );
    return ApiResponse({
      status,
      description: statusCodes.join(', '),
      content: { 'application/json': { schema: { type: 'object' }, examples } },
    });
  });
  return applyDecorators(...decorators);
}
