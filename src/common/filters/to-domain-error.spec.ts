import { QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { PixProviderUnavailableError } from '../../providers/api-pix/api-pix.client';
import { PixRequestRefusedError } from '../../providers/pix-provider.port';
import { isTransientDatabaseError, toDomainError } from './to-domain-error';

describe('toDomainError', () => {
  it('answers a query runner released under its transaction (its backend terminated) 503 SERVICE_UNAVAILABLE, not 500', () => {
    for (const error of [new QueryRunnerAlreadyReleasedError(), new QueryRunnerProviderAlreadyReleasedError()]) {
      expect(isTransientDatabaseError(error)).toBe(true);
      expect(toDomainError(error)?.code).toBe('SERVICE_UNAVAILABLE');
    }
  });

  it('answers a PSP that did not answer 503 SERVICE_UNAVAILABLE, and a PSP refusal (RFC 7807, 4xx) 422 PSP_REFUSED with its title and detail', () => {
    expect(toDomainError(new PixProviderUnavailableError('API Pix PUT /cob/x answered 503'))?.code).toBe('SERVICE_UNAVAILABLE');
    const refused = toDomainError(new PixRequestRefusedError(400, { type: 'https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida', title: 'Cobrança inválida.', detail: 'O campo cob.valor.original não é válido.' }));
    expect(refused?.code).toBe('PSP_REFUSED');
    expect(refused?.message).toContain('400 Cobrança inválida.: O campo cob.valor.original não é válido.');
  });

  it('answers PostgreSQL timeouts and lost connections 503, and leaves an unknown error to the 500 path', () => {
    expect(toDomainError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }))?.code).toBe('SERVICE_UNAVAILABLE');
    expect(toDomainError(new Error('Connection terminated unexpectedly'))?.code).toBe('SERVICE_UNAVAILABLE');
    expect(toDomainError(new Error('something else'))).toBeNull();
  });
});
