import { ArgumentsHost, ExceptionFilter, Logger } from '@nestjs/common';
import { Request, Response } from 'express';
import { DomainError } from '../../domain/domain-error';
import { ErrorBodyRenderer, INTERNAL_MESSAGE } from './error-family';
import { STATUS_BY_CODE } from './error-status';
import { PixProviderUnavailableError } from '../../providers/api-pix/api-pix.client';
import { toDomainError } from './to-domain-error';

const logger = new Logger('Errors');
/** Seconds a client is asked to wait after a 503 (the pool frees up within a few statements). */
export const BUSY_RETRY_AFTER_SECONDS = 1;

/** Answers any exception with its status and the body shape of one endpoint family. */
export function respondWithError(exception: unknown, request: Request, response: Response, render: ErrorBodyRenderer): void {
  const known = toDomainError(exception);
  const error = known ?? new DomainError('INTERNAL_ERROR', INTERNAL_MESSAGE);
  const status = STATUS_BY_CODE[error.code];
  const requestId = String((request as { id?: unknown }).id ?? '');
  if (error.code === 'SERVICE_UNAVAILABLE') {
    // The cause (the PSP's call and answer, the database's error) is written here, never in the answer.
    const cause = exception instanceof PixProviderUnavailableError ? 'PIX provider unavailable' : 'database busy';
    logger.warn({ err: exception, requestId, method: request.method, path: request.path }, `Request refused: ${cause}`);
  } else if (status >= 500) {
    logger.error({ err: exception, requestId, method: request.method, path: request.path }, 'Request failed');
  }
  if (response.headersSent) return;
  if (error.code === 'SERVICE_UNAVAILABLE') response.setHeader('Retry-After', String(BUSY_RETRY_AFTER_SECONDS));
  response.status(status).json(render({ error, status, requestId }));
}

/** Base of the per-family filters in this folder; each one names its renderer. */
export abstract class FamilyExceptionFilter implements ExceptionFilter {
  protected abstract readonly render: ErrorBodyRenderer;

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    respondWithError(exception, http.getRequest<Request>(), http.getResponse<Response>(), this.render);
  }
}
