import { logMask, maskRequestForLog, requestIdFor } from './logging.module';

const ADMIN_TOKEN = 'admin-token-0123456789';
const mask = logMask([ADMIN_TOKEN, null]);

describe('the logged request', () => {
  it('masks a private key or postback secret wherever a client put it: a swapped header, glued to a word, percent-encoded, a path id', () => {
    const key = 'sk_Zk3v9Qm1AbCdEfGhIjKlMn';
    const logged = maskRequestForLog(
      {
        url: `/api/transactions/${key}?token=%73k_Zk3v9Qm1AbCdEfGhIjKlMn`,
        params: { id: key },
        query: { token: key, list: [`whsec_q8WAbCdEfGhIjKl`] },
        headers: { 'x-api-public-key': key, 'idempotency-key': `order_${key}`, 'user-agent': 'curl/8' },
      },
      mask,
    );
    expect(JSON.stringify(logged)).not.toMatch(/Zk3v9Qm1|q8WAbCd/);
    expect(logged.headers).toEqual({ 'x-api-public-key': '[redacted]', 'idempotency-key': 'order_[redacted]', 'user-agent': 'curl/8' });
  });

  it('masks card numbers (Luhn-valid runs of 12 to 19 digits) and the literal secrets it is given, and keeps other numbers', () => {
    const logged = maskRequestForLog({ url: `/api/subscriptions?search=5555555555554444&token=${ADMIN_TOKEN}&at=1795438501210`, query: {}, headers: {} }, mask);
    expect(logged.url).toBe('/api/subscriptions?search=[redacted]&token=[redacted]&at=1795438501210');
  });

  it('leaves a public key and ordinary values as they are', () => {
    const request = { url: '/api/seller', query: {}, headers: { 'x-api-public-key': 'pk_Zk3v9Qm1AbCdEfGhIjKlMn' } };
    expect(maskRequestForLog(request, mask)).toEqual(request);
  });

  it('takes the caller\'s X-Request-Id only when it holds nothing to mask', () => {
    const idOf = (given: string) => {
      const headers: Record<string, string> = {};
      const id = requestIdFor(mask)({ headers: { 'x-request-id': given } } as never, { setHeader: (name: string, value: string) => (headers[name] = value) } as never);
      return { id, echoed: headers['X-Request-Id'] };
    };
    expect(idOf('req-123_abc')).toEqual({ id: 'req-123_abc', echoed: 'req-123_abc' });
    for (const secret of ['4000000000000010', 'sk_Zk3v9Qm1AbCdEfGh', ADMIN_TOKEN]) expect(idOf(secret).id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
