import { NextFunction, Request, Response, json } from 'express';
import { DomainError, RequestValidationError } from '../../domain/domain-error';
import { toDomainError } from '../filters/to-domain-error';
import { pathShapeProblem, requestShapeProblem } from '../../domain/request-shape';

/** Largest JSON body accepted; larger ones get 413 in the family's error shape. */
export const BODY_LIMIT = '1mb';

/**
 * Body parsing is ours rather than Nest's so that a malformed, oversized or undecodable body becomes a
 * DomainError (MALFORMED_JSON, PAYLOAD_TOO_LARGE) that the filters answer in the endpoint family's shape.
 */
const jsonParser = json({ limit: BODY_LIMIT });

export function parseJsonBody(request: Request, response: Response, next: NextFunction): void {
  // Translated here: past this point Nest would turn the parser's SyntaxError into a bare 400.
  jsonParser(request, response, (error?: unknown) => next(error === undefined ? undefined : (toDomainError(error) ?? error)));
}

/**
 * Before any transformation or validation: depth, array and string limits, and characters PostgreSQL
 * cannot store, in the body, the query and the path (400 naming the field, in the family's shape).
 */
export function checkRequestShape(request: Request, _response: Response, next: NextFunction): void {
  const problem = requestShapeProblem(request.body) ?? requestShapeProblem(request.query) ?? pathShapeProblem(request.path);
  next(problem ? new RequestValidationError([], [problem]) : undefined);
}

/** Largest request line plus headers the service serves (Node's own limit, HEADER_PARSER_LIMIT, is wider). */
export const HEADER_LIMIT_BYTES = 16 * 1024;
/**
 * What Node's parser buffers before it refuses a request by itself (configure-app.ts): as much as a body
 * may hold. Wider than HEADER_LIMIT_BYTES so that a request between the two is refused here, where its
 * path, and so its family's error shape, is known however its request line and headers were split into
 * packets. Only past this does Node refuse it, reading the path from the packet that crossed the limit.
 */
export const HEADER_PARSER_LIMIT_BYTES = 1024 * 1024;

/** 431 in the family's shape for a request line and headers over HEADER_LIMIT_BYTES. */
export function checkHeaderSize(request: Request, _response: Response, next: NextFunction): void {
  let size = request.method.length + request.originalUrl.length + 12;
  for (const part of request.rawHeaders) size += part.length + 2;
  next(size > HEADER_LIMIT_BYTES ? new DomainError('HEADERS_TOO_LARGE', 'The request line and headers must fit in 16 KB') : undefined);
}
