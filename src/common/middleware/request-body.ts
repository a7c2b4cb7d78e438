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

/**
 * What every request goes through before its route, as one Express middleware (one router layer, no
 * path parameters to build): the size of its request line and headers (431), its JSON body parsed (a
 * malformed, oversized or undecodable body becomes MALFORMED_JSON or PAYLOAD_TOO_LARGE; a request
 * without a body, as every GET, skips the parser), then the shape of its body, query and path (400
 * naming the field): depth, array and string limits, and characters PostgreSQL cannot store. Errors go
 * to the exception filters, which answer in the family's shape.
 */
export function checkRequest(request: Request, response: Response, next: NextFunction): void {
  if (headerSize(request) > HEADER_LIMIT_BYTES) return next(new DomainError('HEADERS_TOO_LARGE', 'The request line and headers must fit in 16 KB'));
  if (!hasBody(request)) return next(shapeError(request));
  // Translated here: past this point Nest would turn the parser's SyntaxError into a bare 400.
  jsonParser(request, response, (error?: unknown) => next(error === undefined ? shapeError(request) : (toDomainError(error) ?? error)));
}

/** As body-parser (type-is) decides it: a request has a body when it says how long it is or that it is chunked. */
function hasBody(request: Request): boolean {
  return request.headers['transfer-encoding'] !== undefined || !isNaN(request.headers['content-length'] as unknown as number);
}

function shapeError(request: Request): RequestValidationError | undefined {
  // Express parses req.query again at each read: a URL without a query string has none to check.
  const query = request.url.includes('?') ? request.query : undefined;
  const problem = requestShapeProblem(request.body) ?? requestShapeProblem(query) ?? pathShapeProblem(request.path);
  return problem ? new RequestValidationError([], [problem]) : undefined;
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

function headerSize(request: Request): number {
  let size = request.method.length + request.originalUrl.length + 12;
  for (const part of request.rawHeaders) size += part.length + 2;
  return size;
}
