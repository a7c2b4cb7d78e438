import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

/** Prometheus figures as a scraper reads them: `name{labels} value` lines. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = (match[2] ?? '').split(',');
    if (wanted.every((label) => present.includes(label))) return Number(match[3]);
  }
  return null;
}

/** GET /metrics: what an operator watches under load, behind the operator token. */
describe('GET /metrics', () => {
  let t: TestApp;
  let seller: TestSeller;

  // The relay never runs during the test, so that the postback below stays undelivered in the outbox.
  beforeAll(async () => {
    t = await startApp({ OUTBOX_POLL_MS: '3600000' });
    seller = await createSeller(t);
  });
  afterAll(() => t.close());

  it('answers 401 without the operator token, and 404 while ADMIN_TOKEN is unset', async () => {
    const refused = await t.http.get('/metrics').expect(401);
    expect(refused.body).toEqual({ error: 'UNAUTHORIZED', message: expect.any(String) });
    await t.http.get('/metrics').set({ 'X-Admin-Token': 'not-the-operator-token-at-all' }).expect(401);
    const closed = await startApp({ ADMIN_TOKEN: undefined });
    try {
      await closed.http.get('/metrics').expect(404);
    } finally {
      await closed.close();
    }
  });

  it('counts requests per route template and status, never per raw URL', async () => {
    await t.http.get('/api/public/balance').set(seller.headers).expect(200);
    await t.http.get('/api/public/balance').set(seller.headers).expect(200);
    await t.http.get('/api/transactions/987654321').set(seller.headers).expect(404);

    const { text, headers } = await t.http.get('/metrics').set(adminHeaders).expect(200);
    expect(headers['content-type']).toMatch(/^text\/plain/);
    expect(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/api/public/balance', status: '200' })).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/api/transactions/:id', status: '404' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_bucket', { route: '/api/public/balance', status: '200', le: '+Inf' })).toBeGreaterThanOrEqual(2);
    expect(text).not.toContain('987654321');
  });

  it('reports the database pool, the outbox lag and the queues', async () => {
    const sale = await createSale(t, seller, saleBody('PIX', { postbackUrl: 'http://127.0.0.1:9/postbacks' }));
    expect((await sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED')).status).toBe(200);

    const { text } = await t.http.get('/metrics').set(adminHeaders).expect(200);
    expect(sample(text, 'db_pool_connections', { state: 'max' })).toBe(Number(process.env.DB_POOL_SIZE));
    expect(sample(text, 'db_pool_connections', { state: 'in_use' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'db_pool_waiting_requests')).toBe(0);
    expect(sample(text, 'outbox_pending_events')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'outbox_oldest_pending_age_seconds')).toBeGreaterThan(0);
    for (const queue of ['notifications', 'payouts']) {
      expect(sample(text, 'queue_jobs', { queue, state: 'waiting' })).toBeGreaterThanOrEqual(0);
    }
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});
