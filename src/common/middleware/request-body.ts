import { NextFunction, Request, Response, json } from 'express';
import { RequestValidationError } from '../../domain/domain-error';
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
