import { HttpException } from '@nestjs/common';
import { QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { ThrottlerException } from '@nestjs/throttler';
import { DomainError, ErrorCode } from '../../domain/domain-error';
import { PixProviderUnavailableError } from '../../providers/api-pix/api-pix.client';
import { PixRequestRefusedError } from '../../providers/pix-provider.port';

/** What a seller is told when the PSP could not be reached or refused the gateway itself (its token, a 5xx). */
export const PIX_PROVIDER_UNAVAILABLE = 'The PIX provider is unavailable now: retry after the Retry-After delay';

/** Errors raised by express' body parser before any route runs. */
interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
}

/** A body-parser error without a known type (a gzip body that does not inflate, say), by its status. */
const BODY_PARSER_STATUS_CODES: Record<number, [ErrorCode, string]> = {
  400: ['MALFORMED_JSON', 'The request body could not be read'],
  413: ['PAYLOAD_TOO_LARGE', 'The request body is too large'],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported'],
};

const BODY_PARSER_CODES: Record<string, [ErrorCode, string]> = {
  'entity.parse.failed': ['MALFORMED_JSON', 'The request body is not valid JSON'],
  'entity.too.large': ['PAYLOAD_TOO_LARGE', 'The request body is too large'],
  'entity.verify.failed': ['MALFORMED_JSON', 'The request body could not be read'],
  'request.aborted': ['MALFORMED_JSON', 'The request body was cut short'],
  'request.size.invalid': ['MALFORMED_JSON', 'The request body does not match its Content-Length'],
  'charset.unsupported': ['UNSUPPORTED_MEDIA_TYPE', 'The request body charset is not supported; send UTF-8 JSON'],
  'encoding.unsupported': ['UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported'],
};

const HTTP_STATUS_CODES: Record<number, ErrorCode> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
};

/**
 * Any thrown value as a DomainError. Returns null for what is not understood: the caller answers
 * 500 INTERNAL_ERROR and logs it.
 */
export function toDomainError(exception: unknown): DomainError | null {
  if (exception instanceof DomainError) return exception;
  if (isTransientDatabaseError(exception)) {
    return new DomainError('SERVICE_UNAVAILABLE', 'The service is busy: retry after the Retry-After delay');
  }
  if (exception instanceof PixProviderUnavailableError) {
    // Only that: which call failed and how (a token refused, a status) is the operator's, in the log (respondWithError).
    return new DomainError('SERVICE_UNAVAILABLE', PIX_PROVIDER_UNAVAILABLE);
  }
  if (exception instanceof PixRequestRefusedError) {
    // A permanent refusal (RFC 7807, 4xx): the PSP's own title and detail, never a retry.
    return new DomainError('PSP_REFUSED', pspRefusalMessage(exception));
  }
  if (exception instanceof ThrottlerException) {
    return new DomainError('RATE_LIMITED', 'Too many requests: slow down and retry after the Retry-After delay');
  }
  const parserType = (exception as BodyParserError | null)?.type;
  if (parserType && BODY_PARSER_CODES[parserType]) {
    const [code, message] = BODY_PARSER_CODES[parserType];
    return new DomainError(code, message);
  }
  const parserError = exception as BodyParserError | null;
  if (parserError?.expose === true && typeof parserError.status === 'number' && BODY_PARSER_STATUS_CODES[parserError.status] && !(exception instanceof HttpException)) {
    const [code, message] = BODY_PARSER_STATUS_CODES[parserError.status];
    return new DomainError(code, message);
  }
  if (exception instanceof HttpException) {
    const code = HTTP_STATUS_CODES[exception.getStatus()];
    if (!code) return null;
    const response = exception.getResponse();
    const raw = typeof response === 'string' ? response : (response as { message?: unknown }).message;
    const message = Array.isArray(raw) ? raw.join('; ') : typeof raw === 'string' ? raw : exception.message;
    return new DomainError(code, code === 'NOT_FOUND' ? routeNotFoundMessage(message) : message);
  }
  return null;
}

/**
 * PostgreSQL answers that mean "busy now, fine later": no pool connection within
 * DB_POOL_ACQUIRE_TIMEOUT_MS, a statement or lock timeout, a deadlock or serialization failure, an idle
 * transaction ended by the server, too many connections. Nothing was committed by the failed request.
 */
const TRANSIENT_CODES = new Set([
  // PostgreSQL SQLSTATEs: timeouts, deadlock, serialization, idle transaction ended, server shutting down or starting
  '57014', '55P03', '40P01', '40001', '25P03', '53300', '57P01', '57P02', '57P03',
  // connection exceptions, and the network errors of a server that cannot be reached
  '08000', '08003', '08006', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE',
]);
const TRANSIENT_MESSAGES = [/^timeout exceeded when trying to connect$/, /^Connection terminated/];

export function isTransientDatabaseError(exception: unknown): boolean {
  if (!(exception instanceof Error)) return false;
  // The backend of a transaction was terminated under it (a restart, a failover, pg_terminate_backend):
  // TypeORM released its query runner, and the next statement says so. Nothing of that transaction was
  // committed; found by the chaos run, which saw these answered 500.
  if (exception instanceof QueryRunnerAlreadyReleasedError || exception instanceof QueryRunnerProviderAlreadyReleasedError) return true;
  if (TRANSIENT_MESSAGES.some((pattern) => pattern.test(exception.message))) return true;
  const code = (exception as { code?: unknown }).code;
  return typeof code === 'string' && TRANSIENT_CODES.has(code);
}

/** What the seller is told of a PSP's refusal: its status, title and detail (the PSP's words, not our credentials). */
function pspRefusalMessage(refusal: PixRequestRefusedError): string {
  const { title, detail, type } = refusal.problem;
  const reason = [title ?? type ?? 'no reason given', detail].filter((part) => part !== undefined && part !== '').join(': ');
  return `The PIX provider refused the request (${refusal.status} ${reason}); nothing was created, and the same request will be refused again`;
}

function routeNotFoundMessage(message: string): string {
  return /^Cannot [A-Z]+ /.test(message) ? `Route not found: ${message.replace(/^Cannot /, '')}` : message;
}
