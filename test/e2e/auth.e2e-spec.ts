import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { startApp, TestApp } from './setup/test-app';

/** Spec §5: both keys, of one pair, of an account that is not blocked. */
describe('API key authentication (spec §5)', () => {
  let t: TestApp;
  let seller: TestSeller;
  let other: TestSeller;

  beforeAll(async () => {
    t = await startApp();
    seller = await createSeller(t);
    other = await createSeller(t);
  });
  afterAll(() => t.close());

  const routes = ['/api/seller', '/api/public/balance'];

  it.each(routes)('%s answers 200 with the pair', async (route) => {
    await t.http.get(route).set(seller.headers).expect(200);
  });

  describe.each(routes)('%s refuses', (route) => {
    const cases: Array<[string, () => Record<string, string>]> = [
      ['no keys', () => ({})],
      ['only the public key', () => ({ 'X-Api-Public-Key': seller.publicKey })],
      ['only the private key', () => ({ 'X-Api-Private-Key': seller.privateKey })],
      ['an unknown public key', () => ({ ...seller.headers, 'X-Api-Public-Key': 'pk_unknownunknownunknownunknown00' })],
      ['a wrong private key', () => ({ ...seller.headers, 'X-Api-Private-Key': 'sk_wrongwrongwrongwrongwrongwrong00' })],
      ['keys of two different sellers', () => ({ 'X-Api-Public-Key': seller.publicKey, 'X-Api-Private-Key': other.privateKey })],
      ['keys swapped between the headers', () => ({ 'X-Api-Public-Key': seller.privateKey, 'X-Api-Private-Key': seller.publicKey })],
      ['an empty private key', () => ({ 'X-Api-Public-Key': seller.publicKey, 'X-Api-Private-Key': '' })],
    ];
    it.each(cases)('%s with 401 {error, message}', async (_name, headers) => {
      const response = await t.http.get(route).set(headers()).expect(401);
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: expect.any(String) });
    });
  });

  it('stores private keys only as hashes', async () => {
    const rows: Array<{ private_key_hash: string }> = await t.db.query('SELECT private_key_hash FROM api_keys WHERE seller_id = $1', [
      seller.id,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0].private_key_hash).not.toContain(seller.privateKey);
    expect(rows[0].private_key_hash).toMatch(/^[0-9a-f]{64}$/);
    const dump = JSON.stringify(await t.db.query('SELECT * FROM api_keys'));
    expect(dump).not.toContain(seller.privateKey);
  });

  it('answers 401 at once for a revoked pair while a newer pair keeps working', async () => {
    const own = await createSeller(t);
    const second = await t.http.post(`/admin/sellers/${own.id}/api-keys`).set(adminHeaders).expect(201);
    const secondHeaders = { 'X-Api-Public-Key': second.body.publicKey, 'X-Api-Private-Key': second.body.privateKey };
    await t.http.get('/api/seller').set(own.headers).expect(200);
    await t.http.get('/api/seller').set(secondHeaders).expect(200);

    await t.http.delete(`/admin/api-keys/${own.publicKey}`).set(adminHeaders).expect(204);

    const refused = await t.http.get('/api/seller').set(own.headers).expect(401);
    expect(refused.body.error).toBe('UNAUTHORIZED');
    await t.http.get('/api/public/balance').set(own.headers).expect(401);
    const still = await t.http.get('/api/seller').set(secondHeaders).expect(200);
    expect(still.body.id).toBe(own.id);
  });

  it('answers 403 FORBIDDEN to a blocked seller, and 200 again once unblocked', async () => {
    const own = await createSeller(t);
    await t.http.patch(`/admin/sellers/${own.id}`).set(adminHeaders).send({ blocked: true }).expect(200);
    for (const route of routes) {
      const response = await t.http.get(route).set(own.headers).expect(403);
      expect(response.body).toEqual({ error: 'FORBIDDEN', message: expect.any(String) });
    }
    await t.http.patch(`/admin/sellers/${own.id}`).set(adminHeaders).send({ blocked: false }).expect(200);
    await t.http.get('/api/seller').set(own.headers).expect(200);
  });
});
