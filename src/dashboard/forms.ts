import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { Request, Response } from 'express';
import { collectFieldErrors } from '../common/pipes/validation.pipe';
import { DomainError, RequestValidationError } from '../domain/domain-error';
import { newCsrfToken } from './dashboard-http';

/** What a form page shows after a refused submission: a message per field, and one for the form. */
export interface FormErrors {
  fields: Record<string, string>;
  form: string | null;
}

export const NO_ERRORS: FormErrors = { fields: {}, form: null };

/**
 * The errors of a refused form, from the DomainError the service threw (the API's own rules and
 * messages): field errors next to their field, anything else above the form. Anything that is not a
 * DomainError is rethrown (it is a failure, not a refusal).
 */
export function formErrorsOf(error: unknown, fieldNames: Record<string, string> = {}): FormErrors {
  if (!(error instanceof DomainError)) throw error;
  if (error instanceof RequestValidationError) {
    const fields: Record<string, string> = {};
    for (const field of error.missingFields) fields[fieldNames[field] ?? field] = 'Campo obrigatório.';
    for (const { field, message } of error.fieldErrors) fields[fieldNames[field] ?? field] ??= message;
    return { fields, form: 'Corrija os campos indicados.' };
  }
  if (error.code === 'SERVICE_UNAVAILABLE' || error.code === 'INTERNAL_ERROR' || error.code === 'GENERAL_ERROR') throw error;
  return { fields: {}, form: error.message };
}

/**
 * The notice a page shows after a redirect (`?notice=<key>`), looked up among the page's own notices
 * only: a Map has no inherited entries, so `constructor` or `__proto__` is no notice (null).
 */
export function noticeOf(notices: ReadonlyMap<string, string>, key: unknown): string | null {
  return typeof key === 'string' ? (notices.get(key) ?? null) : null;
}

/** A text field of a submitted form ('' when absent or not text). */
export function formText(request: Request, name: string): string {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/**
 * Starts a fresh session (a new id, against fixation) for this user, with its own CSRF token; the old
 * one is gone. The only place a dashboard session is written: nothing is stored before sign-in.
 */
export async function startSession(request: Request, userId: number, sellerId: number): Promise<void> {
  await new Promise<void>((resolve, reject) => request.session.regenerate((error) => (error ? reject(error as Error) : resolve())));
  request.session.userId = userId;
  request.session.sellerId = sellerId;
  request.session.csrfToken = newCsrfToken();
  await new Promise<void>((resolve, reject) => request.session.save((error) => (error ? reject(error as Error) : resolve())));
}

/**
 * Validates what a form or a filter sent with the API's own DTO (its class-validator rules), the way the
 * API's validation pipe does: the typed value, or the field errors to show next to each field.
 */
/** `plain` as the DTO, checked as the API checks it; throws the RequestValidationError the API would answer. */
export async function checked<T extends object>(dto: new () => T, plain: Record<string, unknown>): Promise<T> {
  const value = plainToInstance(dto, plain);
  const { missing, invalid } = collectFieldErrors(await validate(value, { whitelist: true, forbidUnknownValues: true }));
  if (missing.length > 0 || invalid.length > 0) throw new RequestValidationError(missing, invalid);
  return value;
}

export async function validated<T extends object>(dto: new () => T, plain: Record<string, unknown>): Promise<{ value: T; errors: FormErrors | null }> {
  const value = plainToInstance(dto, plain);
  const { missing, invalid } = collectFieldErrors(await validate(value, { whitelist: true, forbidUnknownValues: true }));
  if (missing.length === 0 && invalid.length === 0) return { value, errors: null };
  return { value, errors: formErrorsOf(new RequestValidationError(missing, invalid)) };
}

/**
 * Something the seller asked to send (a test event, a redelivery, a bulk replay), limited by
 * MANUAL_SENDS_PER_HOUR: its result, or, past the limit, null after `refused` rendered the page again
 * with 429, Retry-After and the limit's message. Any other error is rethrown.
 */
export async function limitedSend<T>(response: Response, send: () => Promise<T>, refused: (message: string) => Promise<void>): Promise<T | null> {
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof DomainError) || error.code !== 'RATE_LIMITED') throw error;
    response.status(429).setHeader('Retry-After', String(error.details?.retryAfterSeconds ?? 60));
    await refused(error.message);
    return null;
  }
}
