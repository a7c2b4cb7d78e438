import { QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { isTransientDatabaseError, toDomainError } from './to-domain-error';

describe('toDomainError', () => {
  it('answers a query runner released under its transaction (its backend terminated) 503 SERVICE_UNAVAILABLE, not 500', () => {
    for (const error of [new QueryRunnerAlreadyReleasedError(), new QueryRunnerProviderAlreadyReleasedError()]) {
      expect(isTransientDatabaseError(error)).toBe(true);
      expect(toDomainError(error)?.code).toBe('SERVICE_UNAVAILABLE');
    }
  });

  it('answers PostgreSQL timeouts and lost connections 503, and leaves an unknown error to the 500 path', () => {
    expect(toDomainError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }))?.code).toBe('SERVICE_UNAVAILABLE');
    expect(toDomainError(new Error('Connection terminated unexpectedly'))?.code).toBe('SERVICE_UNAVAILABLE');
    expect(toDomainError(new Error('something else'))).toBeNull();
  });
});
