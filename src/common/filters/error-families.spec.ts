import { DomainError, ERROR_CODES, RequestValidationError } from '../../domain/domain-error';
import { renderAccountError } from './account-exception.filter';
import { renderCashoutError } from './cashout-exception.filter';
import { ErrorBodyRenderer } from './error-family';
import { STATUS_BY_CODE } from './error-status';
import { rendererForPath } from './fallback-exception.filter';
import { renderSalesError } from './sales-exception.filter';
import { renderEventsError } from './events-exception.filter';
import { renderSubscriptionsError } from './subscriptions-exception.filter';
import { renderTransactionsError } from './transactions-exception.filter';

const render = (renderer: ErrorBodyRenderer, error: DomainError) =>
  renderer({ error, status: STATUS_BY_CODE[error.code], requestId: 'req-1' });

describe('error bodies of spec §7', () => {
  it('sales: {message, error}, details on 400, and {message, details} on 401', () => {
    expect(render(renderSalesError, new RequestValidationError(['customer.email', 'items'], []))).toEqual({
      message: expect.any(String),
      error: 'MISSING_FIELDS',
      details: { missingFields: ['customer.email', 'items'] },
    });
    expect(render(renderSalesError, new RequestValidationError([], [{ field: 'amount', message: 'amount must be positive' }]))).toEqual({
      message: expect.any(String),
      error: 'VALIDATION_ERROR',
      details: { field: 'amount', message: 'amount must be positive' },
    });
    expect(render(renderSalesError, new DomainError('UNAUTHORIZED', 'Invalid API key pair'))).toEqual({
      message: 'Unauthorized',
      details: 'Invalid API key pair',
    });
    expect(render(renderSalesError, new DomainError('MINIMUM_AMOUNT', 'too small'))).toEqual({ message: 'too small', error: 'MINIMUM_AMOUNT' });
  });

  it('cashout: business errors as {message, errorType}, an internal failure as GENERAL_ERROR', () => {
    for (const code of ['INSUFFICIENT_BALANCE', 'API_WITHDRAWAL_DISABLED_GLOBALLY', 'TRANSFER_NOT_ALLOWED', 'MINIMUM_VALUE', 'MAXIMUM_VALUE'] as const) {
      expect(render(renderCashoutError, new DomainError(code, 'no'))).toEqual({ message: 'no', errorType: code });
    }
    expect(render(renderCashoutError, new DomainError('INTERNAL_ERROR', 'Internal server error'))).toEqual({
      message: 'Internal server error',
      errorType: 'GENERAL_ERROR',
      requestId: 'req-1',
    });
    expect(render(renderCashoutError, new DomainError('UNAUTHORIZED', 'no'))).toEqual({ message: 'no', error: 'UNAUTHORIZED' });
  });

  it('transaction lookup: {message, error}', () => {
    expect(render(renderTransactionsError, new DomainError('INVALID_ID', 'bad id'))).toEqual({ message: 'bad id', error: 'INVALID_ID', details: { field: 'id', message: 'bad id' } });
    expect(render(renderTransactionsError, new DomainError('NOT_FOUND', 'none'))).toEqual({ message: 'none', error: 'NOT_FOUND' });
  });

  it('seller and balance: {error, message}', () => {
    expect(render(renderAccountError, new DomainError('NOT_FOUND', 'none'))).toEqual({ error: 'NOT_FOUND', message: 'none' });
  });

  it('subscriptions: {success: false, error: {code, message}}', () => {
    expect(render(renderSubscriptionsError, new DomainError('ALREADY_CANCELLED', 'already'))).toEqual({
      success: false,
      error: { code: 'ALREADY_CANCELLED', message: 'already' },
    });
  });

  it('gives every code a status, and a 500 always carries the request id and no internals', () => {
    for (const code of ERROR_CODES) {
      expect(STATUS_BY_CODE[code]).toBeGreaterThanOrEqual(400);
    }
    for (const renderer of [renderAccountError, renderSalesError, renderTransactionsError, renderSubscriptionsError]) {
      const body = JSON.stringify(render(renderer, new DomainError('INTERNAL_ERROR', 'Internal server error')));
      expect(body).toContain('req-1');
    }
  });

  it('picks the family by path', () => {
    expect(rendererForPath('/api/sales')).toBe(renderSalesError);
    expect(rendererForPath('/api/transactions/12')).toBe(renderTransactionsError);
    expect(rendererForPath('/api/public/cashout/3')).toBe(renderCashoutError);
    expect(rendererForPath('/api/subscriptions/metrics')).toBe(renderSubscriptionsError);
    expect(rendererForPath('/api/events/redeliver')).toBe(renderEventsError);
    expect(rendererForPath('/api/public/balance')).toBe(renderAccountError);
    expect(rendererForPath('/api/salesforce')).toBe(renderAccountError);
  });
});
