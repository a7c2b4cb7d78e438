import { randomInt } from 'node:crypto';
import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { TestRedis } from './setup/redis-server';
import { startApp, TestApp } from './setup/test-app';

/**
 * Whose budget a request spends is decided by the route that matched, not by the raw path (issue 19,
 * point 5): the operator API and /metrics per client address whatever keys come along and however the
 * path is spelled, the API per seller (all its key pairs together), /health per address in a budget of
 * its own. The setup runs on an app without limits (nothing it does is counted); the limited app shares
 * the same database and Redis.
 */
describe('Rate limits by the matched route', () => {
  let setup: TestApp;
  let limited: TestApp;

  beforeAll(async () => {
    setup = await startApp();
    limited = await startApp({ RATE_LIMIT_RPS: '3', TRUST_PROXY: 'loopback' });
  });
  afterAll(async () => {
    await limited.close();
    await setup.close();
  });

  /** A client address of this test's own, so that tests never share an address budget. */
  const newAddress = () => `198.51.${randomInt(256)}.${randomInt(1, 255)}`;

  /** A new seller's three key pairs, as headers (made on the unlimited app). */
  async function threePairs(): Promise<Array<Record<string, string>>> {
    const seller: TestSeller = await createSeller(setup);
    const pairs = [seller.headers];
    for (let i = 0; i < 2; i += 1) {
      const { body } = await setup.http.post(`/admin/sellers/${seller.id}/api-keys`).set(adminHeaders).expect(201);
      pairs.push({ 'X-Api-Public-Key': body.publicKey, 'X-Api-Private-Key': body.privateKey });
    }
    return pairs;
  }

  it('counts /ADMIN/... (routing ignores case) in the caller\'s address budget, even with a different key pair on each request', async () => {
    const pairs = await threePairs();
    const address = newAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 9; i += 1) {
      const response = await limited.http
        .get(i % 2 ? '/ADMIN/settings' : '/Admin/Settings')
        .set({ ...pairs[i % 3], 'X-Admin-Token': 'wrong-token-0123456789', 'X-Forwarded-For': address });
      statuses.push(response.status);
    }
    expect(statuses[0]).toBe(401); // the route matched: the operator API's answer
    expect(statuses).toContain(429);
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(6); // at most two windows of 3
  });

  it('counts /metrics per client address, not per key pair', async () => {
    const pairs = await threePairs();
    const address = newAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 9; i += 1) {
      statuses.push((await limited.http.get('/metrics').set({ ...pairs[i % 3], 'X-Admin-Token': 'wrong-token-0123456789', 'X-Forwarded-For': address })).status);
    }
    expect(statuses[0]).toBe(401);
    expect(statuses).toContain(429);
  });

  it('gives a seller one budget across all its key pairs (another pair is no new budget)', async () => {
    const pairs = await threePairs();
    const statuses: number[] = [];
    for (let i = 0; i < 9; i += 1) {
      // A new address each time: the budget is the seller's, wherever the requests come from.
      statuses.push((await limited.http.get('/api/public/balance').set({ ...pairs[i % 3], 'X-Forwarded-For': newAddress() })).status);
    }
    expect(statuses[0]).toBe(200);
    expect(statuses).toContain(429);
    expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(6);
    const other = await createSeller(setup);
    await limited.http.get('/api/public/balance').set(other.headers).expect(200); // another seller has its own budget
  });

  it('limits /health per client address in a budget of its own: API traffic does not spend it', async () => {
    const address = newAddress();
    const anonymous: number[] = [];
    for (let i = 0; i < 6; i += 1) anonymous.push((await limited.http.get('/api/seller').set('X-Forwarded-For', address)).status);
    expect(anonymous).toContain(429);
    const probes: number[] = [];
    for (let i = 0; i < 9; i += 1) probes.push((await limited.http.get(i % 2 ? '/health' : '/health/live').set('X-Forwarded-For', address)).status);
    expect(probes[0]).toBe(200); // the address's API budget is spent, its probes' is not
    expect(probes).toContain(429);
    const refused = await limited.http.get('/health').set('X-Forwarded-For', address);
    if (refused.status === 429) expect(refused.body).toEqual({ error: 'RATE_LIMITED', message: expect.any(String) });
    expect((await limited.http.get('/health').set('X-Forwarded-For', newAddress())).status).toBe(200); // another address probes freely
  });

  it('answers /health with a generic message while Redis is down, never Redis\'s own error text', async () => {
    const redis = await TestRedis.start();
    const app = await startApp({ REDIS_URL: redis.url });
    try {
      await redis.down();
      const { body } = await app.http.get('/health').expect(200);
      expect(body.info.redis).toEqual({ status: 'down', degraded: true, message: 'Redis does not answer' });
      expect(body.details.redis).toEqual(body.info.redis);
      expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|enableOfflineQueue|Stream|Connection/);
      await redis.up(); // the app's queues close cleanly only with Redis back
    } finally {
      await app.close();
      await redis.down();
    }
  });
});
