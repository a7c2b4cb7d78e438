import { Catch } from '@nestjs/common';
import { ErrorBodyRenderer, validationDetails, withRequestId } from './error-family';
import { FamilyExceptionFilter } from './family-exception.filter';

/** Subscriptions (spec 7.5): `{success: false, error: {code, message}}`. */
export const renderSubscriptionsError: ErrorBodyRenderer = (context) => {
  const { error } = context;
  const details = context.status === 400 ? validationDetails(error) : undefined;
  return withRequestId(
    { success: false, error: { code: error.code, message: error.message, ...(details ? { details } : {}) } },
    context,
  );
};

@Catch()
export class SubscriptionsExceptionFilter extends FamilyExceptionFilter {
  protected readonly render = renderSubscriptionsError;
}
