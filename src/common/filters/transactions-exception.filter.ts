import { Catch } from '@nestjs/common';
import { ErrorBodyRenderer, validationDetails, withRequestId } from './error-family';
import { FamilyExceptionFilter } from './family-exception.filter';

/** Transaction lookup and the sandbox routes (spec 7.2, platform.md §3): `{message, error}`. */
export const renderTransactionsError: ErrorBodyRenderer = (context) => {
  const { error } = context;
  const details = context.status === 400 ? validationDetails(error) : undefined;
  return withRequestId({ message: error.message, error: error.code, ...(details ? { details } : {}) }, context);
};

@Catch()
export class TransactionsExceptionFilter extends FamilyExceptionFilter {
  protected readonly render = renderTransactionsError;
}
