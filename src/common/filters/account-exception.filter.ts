import { Catch } from '@nestjs/common';
import { ErrorBodyRenderer, validationDetails, withRequestId } from './error-family';
import { FamilyExceptionFilter } from './family-exception.filter';

/** Seller, balance, the operator API and health: `{error, message}` (spec §7), with `details` on a 400. */
export const renderAccountError: ErrorBodyRenderer = (context) => {
  const { error } = context;
  const details = context.status === 400 ? validationDetails(error) : undefined;
  return withRequestId({ error: error.code, message: error.message, ...(details ? { details } : {}) }, context);
};

@Catch()
export class AccountExceptionFilter extends FamilyExceptionFilter {
  protected readonly render = renderAccountError;
}
