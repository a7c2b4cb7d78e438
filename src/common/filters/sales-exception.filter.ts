import { Catch } from '@nestjs/common';
import { ErrorBodyRenderer, validationDetails, withRequestId } from './error-family';
import { FamilyExceptionFilter } from './family-exception.filter';

/**
 * Sale creation (spec 7.1): `{message, error}`; on 400 also `details` (missingFields, or field and
 * message); on 401 `{message, details}` with details a string.
 */
export const renderSalesError: ErrorBodyRenderer = (context) => {
  const { error } = context;
  if (error.code === 'UNAUTHORIZED') {
    return { message: 'Unauthorized', details: error.message };
  }
  const details = context.status === 400 ? validationDetails(error) : undefined;
  return withRequestId({ message: error.message, error: error.code, ...(details ? { details } : {}) }, context);
};

@Catch()
export class SalesExceptionFilter extends FamilyExceptionFilter {
  protected readonly render = renderSalesError;
}
