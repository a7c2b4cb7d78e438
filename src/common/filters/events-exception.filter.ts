import { Catch } from '@nestjs/common';
import { ErrorBodyRenderer } from './error-family';
import { FamilyExceptionFilter } from './family-exception.filter';
import { renderSubscriptionsError } from './subscriptions-exception.filter';

/**
 * Events API and postback secret (README, Events API): the family answers `{success: false, error: {code,
 * message}}` and, on a 400, `error.details` naming the field, the shape of spec 7.5 that its successes'
 * `{success: true, data}` envelope follows.
 */
export const renderEventsError: ErrorBodyRenderer = renderSubscriptionsError;

@Catch()
export class EventsExceptionFilter extends FamilyExceptionFilter {
  protected readonly render = renderEventsError;
}
