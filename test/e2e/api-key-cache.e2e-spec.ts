import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ApiKeyCache } from '../../src/auth/api-key-cache';
import { adminHeaders, createSeller } from './setup/factories';
import { saleBody } from './setup/sales';
import { freePort, TS_NODE } from './setup/processes';
import { TestRedis } from './setup/redis-server';
import { startApp, TestApp } from './setup/test-app';

const run = promisify(execFile);

/**
 * Verified key pairs are cached in memory (API_KEY_CACHE_SECONDS), yet a revocation or a block made
 * through one instance is honoured by every instance from the next request on (Redis pub/sub).
 */
describe('API key cache across two instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await startApp({ API_KEY_CACHE_SECONDS: '3600' });
    b = await startApp({ API_KEY_CACHE_SECONDS: '3600' });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('a pair revoked through one instance answers 401 at once on the other, which had it cached', async () => {
    const seller = await createSeller(a);
    const second = await a.http.post(`/admin/sellers/${seller.id}/api-keys`).set(adminHeaders).expect(201);
    const secondHeaders = { 'X-Api-Public-Key': second.body.publicKey, 'X-Api-Private-Key': second.body.privateKey };
    for (const app of [a, b]) {
      await app.http.get('/api/public/balance').set(seller.headers).expect(200);
      await app.http.get('/api/public/balance').set(secondHeaders).expect(200);
    }

    await a.http.delete(`/admin/api-keys/${seller.publicKey}`).set(adminHeaders).expect(204);

    const refused = await b.http.get('/api/public/balance').set(seller.headers).expect(401);
    expect(refused.body).toEqual({ error: 'UNAUTHORIZED', message: expect.any(String) });
    await a.http.get('/api/public/balance').set(seller.headers).expect(401);
    await b.http.get('/api/seller').set(secondHeaders).expect(200);
  });

  it('a seller blocked through one instance answers 403 at once on the other, and 200 there once unblocked', async () => {
    const seller = await createSeller(a);
    await a.http.get('/api/seller').set(seller.headers).expect(200);
    await b.http.get('/api/seller').set(seller.headers).expect(200);

    await b.http.patch(`/admin/sellers/${seller.id}`).set(adminHeaders).send({ blocked: true }).expect(200);
    const refused = await a.http.get('/api/seller').set(seller.headers).expect(403);
    expect(refused.body).toEqual({ error: 'FORBIDDEN', message: expect.any(String) });
    await b.http.get('/api/seller').set(seller.headers).expect(403);

    await a.http.patch(`/admin/sellers/${seller.id}`).set(adminHeaders).send({ blocked: false }).expect(200);
    await b.http.get('/api/seller').set(seller.headers).expect(200);
    await a.http.get('/api/seller').set(seller.headers).expect(200);
  });

  it("a seller's permissions and fees changed through one instance apply at once on the other, which kept its profile", async () => {
    const seller = await createSeller(a);
    const card = saleBody('CREDIT_CARD', { amount: 10000, items: [{ title: 'Curso', unitPrice: 10000, quantity: 1, tangible: false }] });
    const before = await b.http.post('/api/sales').set(seller.headers).send(card).expect(201);
    expect(before.body.sale.status).toBe('PAGO');

    await a.http.patch(`/admin/sellers/${seller.id}`).set(adminHeaders).send({ fees: { creditCardPercentBps: 1000, cardReservePercentBps: 0 } }).expect(200);
    const repriced = await b.http.post('/api/sales').set(seller.headers).send(card).expect(201);
    const [row] = await b.db.query('SELECT system_fee_cents, net_amount_cents FROM sales WHERE id = $1', [repriced.body.sale.id]);
    expect(Number(row.system_fee_cents)).toBeGreaterThanOrEqual(1000);
    expect(Number(row.system_fee_cents) + Number(row.net_amount_cents)).toBe(10000);

    await a.http.patch(`/admin/sellers/${seller.id}`).set(adminHeaders).send({ permissions: { isCreditCardAvailable: false } }).expect(200);
    const refused = await b.http.post('/api/sales').set(seller.headers).send(card).expect(403);
    expect(refused.body).toEqual({ error: 'FORBIDDEN', message: expect.any(String) });
    await b.http.post('/api/sales').set(seller.headers).send(saleBody('PIX')).expect(201);
  });

  it('another seller blocked leaves this seller\'s cached pair working', async () => {
    const seller = await createSeller(a);
    const other = await createSeller(a);
    await b.http.get('/api/seller').set(seller.headers).expect(200);
    await a.http.patch(`/admin/sellers/${other.id}`).set(adminHeaders).send({ blocked: true }).expect(200);
    await b.http.get('/api/seller').set(seller.headers).expect(200);
    await b.http.get('/api/seller').set(other.headers).expect(403);
  });
});

/**
 * Issue 19, finding 4: a revocation that could not be announced was reported as done (the CLI exited 0),
 * and an instance trusted its cache again at ioredis' 'ready', before its SUBSCRIBE was sent again.
 */
describe('API key changes that cannot be announced, and resubscription', () => {
  let redis: TestRedis;
  let t: TestApp;

  beforeAll(async () => {
    redis = await TestRedis.start();
    t = await startApp({ API_KEY_CACHE_SECONDS: '3600', REDIS_URL: redis.url });
  }, 30_000);
  afterAll(async () => {
    await t.close();
    await redis.down();
  });

  it('the CLI revokes the pair but exits 3 and says so when it cannot announce the revocation', async () => {
    const seller = await createSeller(t);
    const closed = await freePort();
    const failure = await run(process.execPath, [...TS_NODE, 'src/cli.ts', 'api-keys:revoke', '--public-key', seller.publicKey], {
      env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${closed}`, LOG_FILE: undefined },
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(3);
    expect(failure?.stderr).toMatch(/not announced to the other instances/);
    const [row] = await t.db.query('SELECT revoked_at IS NOT NULL AS revoked FROM api_keys WHERE public_key = $1', [seller.publicKey]);
    expect(row.revoked).toBe(true);
  }, 60_000);

  it('the admin API answers a revocation and a block it could not announce with a Warning header', async () => {
    const seller = await createSeller(t);
    const other = await createSeller(t);
    await redis.down();
    try {
      const revoked = await t.http.delete(`/admin/api-keys/${seller.publicKey}`).set(adminHeaders).expect(204);
      expect(revoked.headers.warning).toMatch(/^199 payment-gateway ".*not announced to the other instances.*3600 s"$/);
      const blocked = await t.http.patch(`/admin/sellers/${other.id}`).set(adminHeaders).send({ blocked: true }).expect(200);
      expect(blocked.headers.warning).toMatch(/not announced/);
    } finally {
      await redis.up();
    }
    const announced = await t.http.patch(`/admin/sellers/${other.id}`).set(adminHeaders).send({ blocked: false });
    expect(announced.status).toBe(200);
    expect(announced.headers.warning).toBeUndefined();
  }, 30_000);

  it('trusts its cache again only once Redis has confirmed the new SUBSCRIBE, not at ready', async () => {
    const cache = t.app.get(ApiKeyCache);
    const subscriber = (cache as unknown as { subscriber: { once(event: 'ready', listener: () => void): void } }).subscriber;
    const liveAtReady: boolean[] = [];
    await redis.down();
    subscriber.once('ready', () => liveAtReady.push((cache as unknown as { live: boolean }).live));
    await redis.up();
    const deadline = Date.now() + 10_000;
    while (!(cache as unknown as { live: boolean }).live && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(liveAtReady).toEqual([false]);
    expect((cache as unknown as { live: boolean }).live).toBe(true);
    // Live means subscribed: a change published now reaches it.
    const seller = await createSeller(t);
    await t.http.get('/api/seller').set(seller.headers).expect(200);
    await t.db.query('UPDATE api_keys SET revoked_at = now() WHERE public_key = $1', [seller.publicKey]);
    await t.http.get('/api/seller').set(seller.headers).expect(200); // cached: the SQL change is not announced
    const publisher = new (await import('ioredis')).default(redis.url);
    try {
      const channel = (cache as unknown as { channel: string }).channel;
      expect(await publisher.publish(channel, `key:${seller.publicKey}`)).toBe(1);
    } finally {
      publisher.disconnect();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    await t.http.get('/api/seller').set(seller.headers).expect(401);
  }, 30_000);
});
