import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import { Request, Response } from 'express';
import { renderAccountError } from './account-exception.filter';
import { renderCashoutError } from './cashout-exception.filter';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { ErrorBodyRenderer } from './error-family';
import { renderEventsError } from './events-exception.filter';
import { respondWithError } from './family-exception.filter';
import { renderSalesError } from './sales-exception.filter';
import { renderSubscriptionsError } from './subscriptions-exception.filter';
import { renderTransactionsError } from './transactions-exception.filter';

/** Path prefixes of the endpoint families, most specific first. */
const FAMILY_BY_PREFIX: Array<[string, ErrorBodyRenderer]> = [
  ['/api/sales', renderSalesError],
  ['/api/transactions', renderTransactionsError],
  ['/api/sandbox', renderTransactionsError],
  ['/api/public/cashout', renderCashoutError],
  ['/api/subscriptions', renderSubscriptionsError],
  ['/api/events', renderEventsError],
];

export function rendererForPath(path: string): ErrorBodyRenderer {
  const lower = path.toLowerCase();
  const match = FAMILY_BY_PREFIX.find(([prefix]) => lower === prefix || lower.startsWith(`${prefix}/`));
  return match ? match[1] : renderAccountError;
}

/**
 * Global filter for what no family filter saw: unknown routes, malformed or oversized bodies (the body
 * parser runs before routing) and anything thrown outside a controller. Picks the family by path;
 * logs and answers 500 with a request id for anything unexpected, never a stack trace or SQL.
 */
@Catch()
export class FallbackExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    // The dashboard is HTML: an unknown page there is a page too, not a JSON body.
    if (request.path === '/dashboard' || request.path.startsWith('/dashboard/')) return new DashboardExceptionFilter().catch(exception, host);
    respondWithError(exception, request, http.getResponse<Response>(), rendererForPath(request.path));
  }
}
