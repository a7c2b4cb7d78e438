import { adminHeaders, createSeller } from './setup/factories';
import { startApp, TestApp } from './setup/test-app';

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

  it('another seller blocked leaves this seller\'s cached pair working', async () => {
    const seller = await createSeller(a);
    const other = await createSeller(a);
    await b.http.get('/api/seller').set(seller.headers).expect(200);
    await a.http.patch(`/admin/sellers/${other.id}`).set(adminHeaders).send({ blocked: true }).expect(200);
    await b.http.get('/api/seller').set(seller.headers).expect(200);
    await b.http.get('/api/seller').set(other.headers).expect(403);
  });
});
