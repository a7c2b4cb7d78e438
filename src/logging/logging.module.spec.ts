import { maskMisplacedSecrets } from './logging.module';

describe('the logged request', () => {
  it('masks a private key or postback secret wherever a client put it: a swapped header, a query string, the URL', () => {
    const key = 'sk_Zk3v9Qm1AbCdEfGhIjKlMn';
    const logged = maskMisplacedSecrets({
      url: `/api/public/balance?token=${key}`,
      query: { token: key, list: [`whsec_q8WAbCdEfGhIjKl`] },
      headers: { 'x-api-public-key': key, 'idempotency-key': `order-1-${key}`, 'user-agent': 'curl/8' },
    });
    expect(JSON.stringify(logged)).not.toMatch(/sk_Zk3v|whsec_q8W/);
    expect(logged.headers).toEqual({ 'x-api-public-key': '[redacted]', 'idempotency-key': 'order-1-[redacted]', 'user-agent': 'curl/8' });
    expect(logged.url).toBe('/api/public/balance?token=[redacted]');
  });

  it('leaves a public key and ordinary values as they are', () => {
    const request = { url: '/api/seller', query: {}, headers: { 'x-api-public-key': 'pk_Zk3v9Qm1AbCdEfGhIjKlMn' } };
    expect(maskMisplacedSecrets(request)).toEqual(request);
  });
});
