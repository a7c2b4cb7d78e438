import { NextFunction, Request, RequestHandler, Response, json } from 'express';
import { DomainError, RequestValidationError } from '../../domain/domain-error';
import { toDomainError } from '../filters/to-domain-error';
import { pathShapeProblem, requestShapeProblem } from '../../domain/request-shape';

/** Largest JSON body accepted from a request whose credentials were checked first (largeBodyAdmission). */
export const BODY_LIMIT = '1mb';
/**
 * Largest JSON body parsed before anything is known of who sent it: a request whose credentials were not
 * checked (an anonymous route, the dashboard, the PSP's notification). Parsing costs the event loop about
 * 150 ms a megabyte, so a bigger body is read only once its sender is known (issue 35, L3).
 */
export const ANONYMOUS_BODY_LIMIT_BYTES = 64 * 1024;

/** The media types read as JSON: application/json and any application/*+json, with their charset. */
const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * Body parsing is ours rather than Nest's so that a malformed, oversized or undecodable body becomes a
 * DomainError (MALFORMED_JSON, PAYLOAD_TOO_LARGE) that the filters answer in the endpoint family's shape.
 */
const jsonParser = json({ limit: BODY_LIMIT, type: JSON_TYPES });
const anonymousJsonParser = json({ limit: ANONYMOUS_BODY_LIMIT_BYTES, type: JSON_TYPES });

/**
 * Whether a body larger than ANONYMOUS_BODY_LIMIT_BYTES may be read, decided from the request's headers
 * and path alone: resolves true when its credentials check (the body is then read up to BODY_LIMIT),
 * false when the route takes no credentials (the body is read up to ANONYMOUS_BODY_LIMIT_BYTES), and
 * rejects with the route's own refusal (401, 403) when its credentials are wrong.
 */
export type LargeBodyAdmission = (request: Request) => Promise<boolean>;

/**
 * What every request goes through before its route, as one Express middleware (one router layer, no
 * path parameters to build): the size of its request line and headers (431); a body that is not JSON
 * refused (415: nothing reads it, so no default may stand in for what it said), unless a parser mounted
 * before already read it (the dashboard's forms); its JSON body parsed, larger than
 * ANONYMOUS_BODY_LIMIT_BYTES only once `admission` has checked who sends it (a malformed, oversized or
 * undecodable body becomes MALFORMED_JSON or PAYLOAD_TOO_LARGE; a request without a body, as every GET,
 * skips the parser); then the shape of its body, query and path (400 naming the field): depth, keys,
 * array and string limits, and characters PostgreSQL cannot store. Errors go to the exception filters,
 * which answer in the family's shape.
 */
export function checkRequest(admission: LargeBodyAdmission): RequestHandler {
  return (request: Request, response: Response, next: NextFunction): void => {
    if (headerSize(request) > HEADER_LIMIT_BYTES) return next(new DomainError('HEADERS_TOO_LARGE', 'The request line and headers must fit in 16 KB'));
    if (!hasBody(request) || alreadyRead(request)) return next(shapeError(request));
    if (!request.is(JSON_TYPES)) return next(new DomainError('UNSUPPORTED_MEDIA_TYPE', unsupportedMessage(request)));
    // Translated here: past this point Nest would turn the parser's SyntaxError into a bare 400.
    const parsed = (error?: unknown): void => next(error === undefined ? shapeError(request) : (toDomainError(error) ?? error));
    if (!mayExceedAnonymousLimit(request)) return anonymousJsonParser(request, response, parsed);
    admission(request).then(
      (admitted) => (admitted ? jsonParser : anonymousJsonParser)(request, response, parsed),
      (refusal: unknown) => next(refusal),
    );
  };
}

/**
 * A request carries a body when it says it is chunked or gives a length above zero (an empty body has
 * nothing to misread, whatever its type). Node refuses a request with both headers, or a bad length.
 */
function hasBody(request: Request): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}

/** A body a parser mounted before this one read to its end (the dashboard's forms), as body-parser itself tells. */
function alreadyRead(request: Request): boolean {
  return request.readableEnded;
}

function mayExceedAnonymousLimit(request: Request): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length']) > ANONYMOUS_BODY_LIMIT_BYTES;
}

function unsupportedMessage(request: Request): string {
  const type = request.headers['content-type'];
  const said = type ? `Content-Type ${JSON.stringify(type.slice(0, 100))}` : 'no Content-Type';
  return `The request body must be JSON sent as Content-Type: application/json; this one has ${said} and was not read`;
}

function shapeError(request: Request): RequestValidationError | undefined {
  // Express parses req.query again at each read: a URL without a query string has none to check.
  const query = request.url.includes('?') ? request.query : undefined;
  const problem = requestShapeProblem(request.body) ?? requestShapeProblem(query) ?? pathShapeProblem(request.path);
  return problem ? new RequestValidationError([], [problem]) : undefined;
}

/** Largest request line plus headers the service serves (Node's own limit, HEADER_PARSER_LIMIT, is a little wider). */
export const HEADER_LIMIT_BYTES = 16 * 1024;
/**
 * What Node's parser buffers before it refuses a request by itself (configure-app.ts). Wider than
 * HEADER_LIMIT_BYTES so that a request between the two is refused here, where its path, and so its
 * family's error shape, is known however its request line and headers were split into packets; past it,
 * Node refuses the request, reading the path from the packet that crossed the limit. Not much wider:
 * each connection still sending its headers holds up to this much (Node's own default, 16 KB, is as
 * narrow; 1 MiB let 40 slow clients hold 44 MiB for a minute, issue 35 L2).
 */
export const HEADER_PARSER_LIMIT_BYTES = 32 * 1024;

function headerSize(request: Request): number {
  let size = request.method.length + request.originalUrl.length + 12;
  for (const part of request.rawHeaders) size += part.length + 2;
  return size;
}
