import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import { Request, Response } from 'express';
import { DomainError, ErrorCode } from '../../domain/domain-error';
import { INTERNAL_MESSAGE } from './error-family';
import { STATUS_BY_CODE } from './error-status';
import { toDomainError } from './to-domain-error';

const logger = new Logger('Errors');

type DashboardAnswer = 'sign-in' | 'not-found' | 'page';

/**
 * How each code is answered on the dashboard's HTML pages: not signed in goes to the sign-in page;
 * another seller's resource, an unknown one or a bad id is the same 404 page (a seller never learns
 * what exists elsewhere); the rest is a page with the status and the message. Errors of a form are
 * shown next to its fields by the controller itself and never reach this filter.
 */
export const DASHBOARD_ANSWER: Record<ErrorCode, DashboardAnswer> = {
  UNAUTHORIZED: 'sign-in',
  NOT_FOUND: 'not-found',
  FORBIDDEN: 'not-found',
  INVALID_ID: 'not-found',
  VALIDATION_ERROR: 'page',
  MISSING_FIELDS: 'page',
  MALFORMED_JSON: 'page',
  PAYLOAD_TOO_LARGE: 'page',
  UNSUPPORTED_MEDIA_TYPE: 'page',
  HEADERS_TOO_LARGE: 'page',
  MALFORMED_REQUEST: 'page',
  RATE_LIMITED: 'page',
  CONFLICT: 'page',
  INVALID_TRANSITION: 'page',
  MINIMUM_AMOUNT: 'page',
  IDEMPOTENCY_KEY_REUSED: 'page',
  IDEMPOTENCY_KEY_IN_USE: 'page',
  NOT_SUPPORTED: 'page',
  INSUFFICIENT_BALANCE: 'page',
  API_WITHDRAWAL_DISABLED_GLOBALLY: 'page',
  TRANSFER_NOT_ALLOWED: 'page',
  MINIMUM_VALUE: 'page',
  MAXIMUM_VALUE: 'page',
  GENERAL_ERROR: 'page',
  INVALID_STATUS: 'page',
  SALE_NOT_REFUNDABLE: 'page',
  REFUND_EXCEEDS_REMAINING: 'page',
  REFUND_WINDOW_EXPIRED: 'page',
  ALREADY_CANCELLED: 'page',
  ALREADY_PAUSED: 'page',
  PSP_REFUSED: 'page',
  SERVICE_UNAVAILABLE: 'page',
  INTERNAL_ERROR: 'page',
};

@Catch()
export class DashboardExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const error = toDomainError(exception) ?? new DomainError('INTERNAL_ERROR', INTERNAL_MESSAGE);
    const requestId = String((request as { id?: unknown }).id ?? '');
    const answer = DASHBOARD_ANSWER[error.code];
    const status = answer === 'not-found' ? 404 : STATUS_BY_CODE[error.code];
    if (status >= 500) logger.error({ err: exception, requestId, method: request.method, path: request.path }, 'Dashboard request failed');
    if (response.headersSent) return;
    if (answer === 'sign-in') return response.redirect(303, '/dashboard/login');
    if (error.code === 'SERVICE_UNAVAILABLE') response.setHeader('Retry-After', '1');
    if (answer === 'not-found') {
      return response.status(404).render('error', { title: 'Página não encontrada', message: 'Não encontramos o que você procurava nesta conta.' });
    }
    response.status(status).render('error', {
      title: status >= 500 ? 'Algo deu errado' : 'Não foi possível concluir',
      message: status >= 500 ? `Tente de novo em instantes. Se persistir, informe ao suporte o código ${requestId}.` : error.message,
    });
  }
}
