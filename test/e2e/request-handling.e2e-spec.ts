import { AddressInfo } from 'node:net';
import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { createSale, saleBody } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

/**
 * Issue 35's request-handling findings (M1, M3, L3, L7): a body is read as JSON or refused, never taken
 * as empty; one object of many keys is refused before it is transformed; a large body is read only once
 * its sender's credentials check; an answer holding a secret shown once is not cached. Each failed before
 * its fix.
 */
describe('Request bodies are read or refused, cheaply, and secrets are not cached (issue 35)', () => {
  let t: TestApp;
  let base: string;
  let seller: TestSeller;

  beforeAll(async () => {
    t = await startApp();
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    seller = await createSeller(t);
  });
  afterAll(() => t.close());

  /** A raw request, as curl or any client would send it: the body as given, with exactly these headers (fetch adds none for a Uint8Array). */
  const send = async (method: string, path: string, headers: Record<string, string>, body?: string | Uint8Array) => {
    const response = await fetch(`${base}${path}`, { method, headers, body: typeof body === 'string' ? new TextEncoder().encode(body) : body });
    const text = await response.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {
      // kept as text
    }
    return { status: response.status, body: json as Record<string, unknown>, headers: response.headers };
  };
  const paidCardSale = async (): Promise<number> => (await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 10000 }))).id;
  const refundsOf = async (saleId: number) => (await t.http.get(`/api/sales/${saleId}/refunds`).set(seller.headers).expect(200)).body;
  const secretRow = async () => (await t.db.query('SELECT postback_secret_encrypted AS secret, previous_postback_secret_expires_at AS previous FROM sellers WHERE id = $1', [seller.id]))[0];

  describe('M1: a body that is not JSON is refused 415 and changes nothing', () => {
    it.each([
      ["curl's default, application/x-www-form-urlencoded", 'application/x-www-form-urlencoded'],
      ['text/plain', 'text/plain;charset=UTF-8'],
      ['no Content-Type', null],
      ['multipart/form-data', 'multipart/form-data; boundary=x'],
    ])('refunds: %s → 415 in the sales shape, nothing refunded', async (_title, contentType) => {
      const saleId = await paidCardSale();
      const headers: Record<string, string> = { ...seller.headers };
      if (contentType !== null) headers['Content-Type'] = contentType;
      const answer = await send('POST', `/api/sales/${saleId}/refunds`, headers, '{"amount":1000}');
      expect(answer).toMatchObject({ status: 415, body: { error: 'UNSUPPORTED_MEDIA_TYPE', message: expect.stringContaining('application/json') } });
      expect(await refundsOf(saleId)).toMatchObject({ refunds: [], refundedAmount: 0, refundableAmount: 10000 });
    });

    it('still reads JSON with a charset or as a +json type: the amount asked is the amount refunded', async () => {
      const saleId = await paidCardSale();
      const withCharset = await send('POST', `/api/sales/${saleId}/refunds`, { ...seller.headers, 'Content-Type': 'application/json; charset=utf-8' }, '{"amount":1000}');
      expect({ status: withCharset.status, amount: withCharset.body.amount }).toEqual({ status: 201, amount: 1000 });
      const plusJson = await send('POST', `/api/sales/${saleId}/refunds`, { ...seller.headers, 'Content-Type': 'application/merge-patch+json' }, '{"amount":500}');
      expect({ status: plusJson.status, amount: plusJson.body.amount }).toEqual({ status: 201, amount: 500 });
      expect((await refundsOf(saleId)).refundedAmount).toBe(1500);
    });

    it('secret roll with a form body → 415 in the events shape; the secret and its overlap are untouched', async () => {
      const before = await secretRow();
      const answer = await send('POST', '/api/events/secret/roll', { ...seller.headers, 'Content-Type': 'application/x-www-form-urlencoded' }, '{"overlapHours":0}');
      expect(answer).toMatchObject({ status: 415, body: { success: false, error: { code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.any(String) } } });
      expect(await secretRow()).toEqual(before);
    });

    it('the operator API refuses a text body 415 in its shape, and creates no seller', async () => {
      const count = async () => (await t.db.query('SELECT count(*)::int AS n FROM sellers'))[0].n;
      const before = await count();
      const answer = await send('POST', '/admin/sellers', { ...adminHeaders, 'Content-Type': 'text/plain' }, '{"name":"Loja","email":"texto@example.com"}');
      expect(answer).toMatchObject({ status: 415, body: { error: 'UNSUPPORTED_MEDIA_TYPE', message: expect.any(String) } });
      expect(await count()).toBe(before);
    });

    it('amount: null is a 400 naming amount, not a refund of everything left', async () => {
      const saleId = await paidCardSale();
      const answer = await t.http.post(`/api/sales/${saleId}/refunds`).set(seller.headers).send({ amount: null });
      expect(answer.status).toBe(400);
      expect(JSON.stringify(answer.body.details)).toContain('"amount"');
      expect(await refundsOf(saleId)).toMatchObject({ refunds: [], refundedAmount: 0 });
    });

    it('overlapHours: null is a 400 naming overlapHours, not the 24 h default', async () => {
      const before = await secretRow();
      const answer = await t.http.post('/api/events/secret/roll').set(seller.headers).send({ overlapHours: null });
      expect(answer.status).toBe(400);
      expect(JSON.stringify(answer.body.error)).toContain('overlapHours');
      expect(await secretRow()).toEqual(before);
    });

    it('cancelImmediately: null is a 400 naming it, not an immediate cancellation', async () => {
      const created = await t.http.post('/api/sales').set(seller.headers).send(saleBody('CREDIT_CARD', { subscription: { enabled: true, billingCycle: 'MONTHLY' } })).expect(201);
      const id = created.body.sale.subscription.id as number;
      const statusOf = async () => (await t.db.query('SELECT status FROM subscriptions WHERE id = $1', [id]))[0].status;
      const before = await statusOf();
      const answer = await t.http.post(`/api/subscriptions/${id}/cancel`).set(seller.headers).send({ cancelImmediately: null });
      expect(answer.status).toBe(400);
      expect(JSON.stringify(answer.body.error)).toContain('cancelImmediately');
      expect(await statusOf()).toBe(before);
    });
  });

  describe('M3: an object of many keys is refused before it is transformed', () => {
    const manyKeys = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));

    it('a flat body of 60,000 keys on the refunds route: 400 naming the body, nothing refunded', async () => {
      const saleId = await paidCardSale();
      const answer = await t.http.post(`/api/sales/${saleId}/refunds`).set(seller.headers).send(manyKeys(60_000));
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 400,
        body: { error: 'VALIDATION_ERROR', message: expect.any(String), details: { field: 'body', message: 'must have at most 1000 fields' } },
      });
      expect((await refundsOf(saleId)).refundedAmount).toBe(0);
    });

    it('2,000 keys in a sale\'s metadata: 400 naming metadata, no sale', async () => {
      const count = async () => (await t.db.query('SELECT count(*)::int AS n FROM sales WHERE seller_id = $1', [seller.id]))[0].n;
      const before = await count();
      const answer = await t.http.post('/api/sales').set(seller.headers).send(saleBody('PIX', { metadata: manyKeys(2_000) }));
      expect({ status: answer.status, details: answer.body.details }).toEqual({ status: 400, details: { field: 'metadata', message: 'must have at most 1000 fields' } });
      expect(await count()).toBe(before);
    });
  });

  describe('L3: a body over 64 KB is read only once its sender is known', () => {
    // Not JSON at all: a body that was parsed would be answered 400 MALFORMED_JSON.
    const unparsable = '{' + 'x'.repeat(200_000);
    const json = { 'Content-Type': 'application/json' };

    it('with a wrong key pair, its 401 is the one a small body gets, and the body is not parsed', async () => {
      const wrong = { 'X-Api-Public-Key': seller.publicKey, 'X-Api-Private-Key': 'sk_' + 'x'.repeat(40) };
      const small = await send('POST', '/api/sales', { ...wrong, ...json }, '{}');
      const large = await send('POST', '/api/sales', { ...wrong, ...json }, unparsable);
      expect(small.status).toBe(401);
      expect(large).toMatchObject({ status: small.status, body: small.body });
      const none = await send('POST', '/api/subscriptions/1/cancel', json, unparsable);
      expect(none).toMatchObject({ status: 401, body: { success: false, error: { code: 'UNAUTHORIZED', message: expect.any(String) } } });
    });

    it('with a wrong operator token, the operator API answers its 401 without parsing the body', async () => {
      const answer = await send('POST', '/admin/sellers', { 'X-Admin-Token': 'not-the-token', ...json }, unparsable);
      expect(answer).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED', message: expect.any(String) } });
    });

    it('on a route that takes no credentials it is refused 413 unread', async () => {
      const answer = await send('POST', '/nothing-here', json, unparsable);
      expect(answer).toMatchObject({ status: 413, body: { error: 'PAYLOAD_TOO_LARGE', message: expect.any(String) } });
    });

    it('with the right key pair it is parsed (and here found malformed), up to 1 MB', async () => {
      const answer = await send('POST', '/api/sales', { ...seller.headers, ...json }, unparsable);
      expect(answer).toMatchObject({ status: 400, body: { error: 'MALFORMED_JSON' } });
      // Valid JSON padded with 90 KB of whitespace: read whole, and the sale is made.
      const valid = await send('POST', '/api/sales', { ...seller.headers, ...json }, JSON.stringify(saleBody('PIX')) + ' '.repeat(90_000));
      expect(valid.status).toBe(201);
    });
  });

  describe('L7: an answer holding a secret shown once is never cached', () => {
    it('POST /api/events/secret/roll answers Cache-Control: no-store', async () => {
      const answer = await t.http.post('/api/events/secret/roll').set(seller.headers).send({}).expect(201);
      expect(answer.headers['cache-control']).toBe('no-store');
    });

    it('the operator routes that show keys, a postback secret or an invitation link answer no-store', async () => {
      const created = await t.http.post('/admin/sellers').set(adminHeaders).send({ name: 'Loja Segredo', email: `segredo-${Date.now()}@example.com` }).expect(201);
      const id = created.body.seller.id as number;
      const answers = [
        created,
        await t.http.post(`/admin/sellers/${id}/api-keys`).set(adminHeaders).expect(201),
        await t.http.post(`/admin/sellers/${id}/invitation`).set(adminHeaders).expect(201),
        await t.http.post(`/admin/sellers/${id}/postback-secret`).set(adminHeaders).send({}).expect(201),
      ];
      expect(answers.map((answer) => answer.headers['cache-control'])).toEqual(['no-store', 'no-store', 'no-store', 'no-store']);
    });
  });
});
