import { expiryOf } from './cielo-mpi.client';

const jwt = (claims: Record<string, unknown>) => `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;

describe('the MPI token’s expiry (cielo-ecommerce-3.0.md §8.2: expires_in unconfirmed)', () => {
  const now = new Date('2026-11-28T12:00:00Z');

  it('reads the JWT’s exp first', () => {
    expect(expiryOf(jwt({ exp: 1_795_874_400 }), 20, now).toISOString()).toBe(new Date(1_795_874_400_000).toISOString());
  });

  it('then expires_in as minutes, or as a date-time (Brasília’s when it has no offset)', () => {
    expect(expiryOf('opaque', 20, now).toISOString()).toBe('2026-11-28T12:20:00.000Z');
    expect(expiryOf('opaque', '2026-11-28 09:20:00', now).toISOString()).toBe('2026-11-28T12:20:00.000Z');
    expect(expiryOf('opaque', '2026-11-28T12:30:00Z', now).toISOString()).toBe('2026-11-28T12:30:00.000Z');
  });

  it('else, or when what it says is in the past, 20 minutes', () => {
    expect(expiryOf('opaque', 'soon', now).toISOString()).toBe('2026-11-28T12:20:00.000Z');
    expect(expiryOf('opaque', '2020-01-01T00:00:00', now).toISOString()).toBe('2026-11-28T12:20:00.000Z');
    expect(expiryOf(jwt({ sub: 'x' }), undefined, now).toISOString()).toBe('2026-11-28T12:20:00.000Z');
  });
});
