import { createSeller, TestSeller } from './setup/factories';
import { TestRedis } from './setup/redis-server';
import { saleBody } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

/** Spec §7: every family answers in its own shape, even for errors raised before any route runs. */
describe('Error shapes by endpoint family (spec §7)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  let made: TestSeller | undefined;
  const seller = async (): Promise<TestSeller> => (made ??= await createSeller(t));

  /** Every 400 names what it is about (issue 18): the body for one that does not parse. */
  const bodyDetails = (code: string) => (code === 'MALFORMED_JSON' ? { details: { field: 'body', message: expect.any(String) } } : {});
  const families: Array<[string, string, (code: string) => unknown]> = [
    ['sales', '/api/sales', (code) => ({ message: expect.any(String), error: code, ...bodyDetails(code) })],
    ['transaction lookup', '/api/transactions', (code) => ({ message: expect.any(String), error: code, ...bodyDetails(code) })],
    ['cashout', '/api/public/cashout', (code) => ({ message: expect.any(String), error: code, ...bodyDetails(code) })],
    ['seller', '/api/seller', (code) => ({ error: code, message: expect.any(String), ...bodyDetails(code) })],
    ['balance', '/api/public/balance', (code) => ({ error: code, message: expect.any(String), ...bodyDetails(code) })],
    ['subscriptions', '/api/subscriptions', (code) => ({ success: false, error: { code, message: expect.any(String), ...bodyDetails(code) } })],
  ];

  describe.each(families)('%s', (_family, prefix, shape) => {
    it('answers a malformed JSON body with 400 in the family shape', async () => {
      const response = await t.http.post(`${prefix}/x`).set('Content-Type', 'application/json').send('{"amount": 10,');
      expect(response.status).toBe(400);
      expect(response.body).toEqual(shape('MALFORMED_JSON'));
    });

    // From a seller whose keys check: a body over 64 KB is not read before (request-body.ts, issue 35 L3).
    it('answers an oversized body with 413 in the family shape', async () => {
      const response = await t.http
        .post(prefix)
        .set((await seller()).headers)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ metadata: 'x'.repeat(1_100_000) }));
      expect(response.status).toBe(413);
      expect(response.body).toEqual(shape('PAYLOAD_TOO_LARGE'));
    });

    it('answers an unknown route below it with 404 in the family shape', async () => {
      const response = await t.http.delete(`${prefix}/1/unknown-action`);
      expect(response.status).toBe(404);
      expect(response.body).toEqual(shape('NOT_FOUND'));
    });
  });

  it('answers an unknown route elsewhere with 404 {error, message}', async () => {
    const response = await t.http.get('/nothing-here').expect(404);
    expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Route not found: GET /nothing-here' });
  });

  it('never answers a 500 to a bad percent-encoding in a path', async () => {
    const response = await t.http.get('/admin/sellers/%E0%A4%A').set('X-Admin-Token', 'x');
    expect(response.status).toBeLessThan(500);
  });

  it('answers 400 in the family shape to a bad percent-encoding anywhere in a path, a route parameter or not', async () => {
    for (const path of ['/api/transactions/%E0%A4%A', '/api/public/balance%ZZ', '/api/sales/1/%F0%9F', '/health%ZZ']) {
      const response = await t.http.get(path);
      expect([path, response.status, response.body]).toEqual([path, 400, expect.objectContaining({ error: 'VALIDATION_ERROR', details: { field: 'path', message: 'holds a malformed percent-encoding' } })]);
    }
  });

  it('echoes a sane X-Request-Id, and makes one up otherwise', async () => {
    const given = await t.http.get('/health').set('X-Request-Id', 'req-123_abc').expect(200);
    expect(given.headers['x-request-id']).toBe('req-123_abc');
    const made = await t.http.get('/health').set('X-Request-Id', 'bad id with spaces').expect(200);
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers GET /health 200 with PostgreSQL and Redis up, without keys', async () => {
    const response = await t.http.get('/health').expect(200);
    expect(response.body).toMatchObject({ status: 'ok', info: { database: { status: 'up' }, redis: { status: 'up' } } });
  });

  it('keeps GET /health 200 while Redis is down, reporting Redis degraded, and keeps taking sales; /health/live answers', async () => {
    const redis = await TestRedis.start();
    const app = await startApp({ REDIS_URL: redis.url });
    try {
      await app.http.get('/health').expect(200);
      await redis.down();
      const response = await app.http.get('/health').expect(200);
      expect(response.body).toMatchObject({ status: 'ok', info: { database: { status: 'up' }, redis: { status: 'down', degraded: true } } });
      const seller = await createSeller(app);
      expect((await app.http.post('/api/sales').set(seller.headers).send(saleBody('CREDIT_CARD'))).status).toBe(201);
      expect((await app.http.get('/health/live').expect(200)).body).toEqual({ status: 'ok' });
      await redis.up();
      const deadline = Date.now() + 10_000;
      let state = 'down';
      while (state !== 'up' && Date.now() < deadline) {
        state = (await app.http.get('/health').expect(200)).body.info.redis.status;
        if (state !== 'up') await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(state).toBe('up');
    } finally {
      await app.close();
      await redis.down();
    }
  });

  it('limits requests per key pair with 429 and Retry-After when RATE_LIMIT_RPS is set', async () => {
    const limited = await startApp({ RATE_LIMIT_RPS: '3' });
    try {
      const seller = await createSeller(limited);
      const other = await createSeller(limited);
      const statuses: number[] = [];
      let refused: { headers: Record<string, string>; body: unknown } | undefined;
      for (let i = 0; i < 6; i += 1) {
        const response = await limited.http.get('/api/public/balance').set(seller.headers);
        statuses.push(response.status);
        if (response.status === 429) refused = response;
      }
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(3);
      expect(statuses).toContain(429);
      expect(Number(refused?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(refused?.body).toEqual({ error: 'RATE_LIMITED', message: expect.any(String) });
      // another key pair has its own budget
      await limited.http.get('/api/public/balance').set(other.headers).expect(200);
    } finally {
      await limited.close();
    }
  });

  it('counts the limit per verified key pair: requests with a seller\'s public key and a wrong private key spend the caller\'s address budget, not the seller\'s', async () => {
    const limited = await startApp({ RATE_LIMIT_RPS: '3' });
    try {
      const seller = await createSeller(limited);
      const forged = { 'X-Api-Public-Key': seller.publicKey, 'X-Api-Private-Key': 'sk_wrongwrongwrongwrongwrong' };
      const attack = [];
      for (let i = 0; i < 6; i += 1) attack.push((await limited.http.get('/api/public/balance').set(forged)).status);
      expect(attack[0]).toBe(401);
      expect(attack).toContain(429);
      await limited.http.get('/api/public/balance').set(seller.headers).expect(200); // the seller's own budget is untouched

      const anonymous = [];
      for (let i = 0; i < 8; i += 1) anonymous.push((await limited.http.get('/api/seller')).status);
      expect(anonymous).toContain(429); // no keys: counted per address
      const admin = [];
      for (let i = 0; i < 8; i += 1) admin.push(await limited.http.get('/admin/settings').set('X-Admin-Token', 'wrong-token-0123456789'));
      const refused = admin.find((response) => response.status === 429);
      expect(Number(refused?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(refused?.body).toEqual({ error: 'RATE_LIMITED', message: expect.any(String) });
      expect((await limited.http.get('/health')).status).toBe(200); // probes have a budget of their own
    } finally {
      await limited.close();
    }
  });

  it('counts per X-Forwarded-For client only behind a trusted proxy (TRUST_PROXY)', async () => {
    const trusting = await startApp({ RATE_LIMIT_RPS: '2', TRUST_PROXY: 'loopback' });
    try {
      const from = async (client: string) => (await trusting.http.get('/api/seller').set('X-Forwarded-For', client)).status;
      const first = [await from('203.0.113.1'), await from('203.0.113.1'), await from('203.0.113.1')];
      expect(first).toContain(429);
      expect(await from('203.0.113.2')).toBe(401); // another client behind the same proxy has its own budget
    } finally {
      await trusting.close();
    }
  });

  it('holds the limit across two instances (counters in Redis), and sends security headers without X-Powered-By', async () => {
    const first = await startApp({ RATE_LIMIT_RPS: '4' });
    const second = await startApp({ RATE_LIMIT_RPS: '4' });
    try {
      const seller = await createSeller(first);
      const statuses = [];
      for (let i = 0; i < 8; i += 1) statuses.push((await (i % 2 ? second : first).http.get('/api/public/balance').set(seller.headers)).status);
      expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(4);
      expect(statuses).toContain(429);
      const response = await first.http.get('/health');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['x-powered-by']).toBeUndefined();
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('publishes the OpenAPI document with every route, the key headers and examples', async () => {
    const { body } = await t.http.get('/docs-json').expect(200);
    const routes = Object.entries(body.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(routes).toEqual(
      expect.arrayContaining([
        'GET /api/seller',
        'GET /api/public/balance',
        'GET /health',
        'POST /admin/sellers',
        'GET /admin/sellers/{id}',
        'PATCH /admin/sellers/{id}',
        'POST /admin/sellers/{id}/api-keys',
        'DELETE /admin/api-keys/{publicKey}',
        'POST /admin/sellers/{sellerId}/webhooks',
        'GET /admin/sellers/{sellerId}/webhooks',
        'DELETE /admin/sellers/{sellerId}/webhooks/{webhookId}',
        'GET /admin/settings',
        'PUT /admin/settings',
        'POST /api/sales',
        'GET /api/transactions/{id}',
        'POST /api/public/cashout',
        'GET /api/public/cashout/{id}',
        'POST /api/sandbox/sales/{id}/events',
        'POST /api/sandbox/cashouts/{id}/events',
        'POST /api/sandbox/scheduler/run',
        'GET /api/subscriptions',
        'GET /api/subscriptions/metrics',
        'GET /api/subscriptions/{id}',
        'POST /api/subscriptions/{id}/pause',
        'POST /api/subscriptions/{id}/resume',
        'POST /api/subscriptions/{id}/cancel',
        'GET /admin/sellers/{sellerId}/deliveries',
        'POST /admin/sellers/{sellerId}/deliveries/{deliveryId}/redeliver',
        'POST /admin/sellers/{sellerId}/postback-secret',
      ]),
    );
    expect(Object.values(body.components.securitySchemes)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'X-Api-Public-Key', in: 'header' }),
        expect.objectContaining({ name: 'X-Api-Private-Key', in: 'header' }),
      ]),
    );
    const seller = body.paths['/api/seller'].get;
    expect(seller.responses['401'].content['application/json'].examples.UNAUTHORIZED.value).toEqual({
      error: 'UNAUTHORIZED',
      message: expect.any(String),
    });
    expect(body.components.schemas.SellerAccountResponse.properties.revenue).toBeDefined();
    const cashout = body.paths['/api/public/cashout'].post;
    expect(cashout.responses['422'].content['application/json'].examples.INSUFFICIENT_BALANCE.value).toEqual({
      message: expect.any(String),
      errorType: 'INSUFFICIENT_BALANCE',
    });
    expect(body.paths['/api/sales'].post.responses['201']).toBeDefined();
    const html = await t.http.get('/docs').expect(200);
    expect(html.text).toContain('swagger');
  });
});
