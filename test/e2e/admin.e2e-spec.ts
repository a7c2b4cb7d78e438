import request from 'supertest';
import { adminHeaders, createSeller } from './setup/factories';
import { startApp, TestApp } from './setup/test-app';

/** The operator API of platform.md §2. */
describe('Operator API', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  describe('X-Admin-Token', () => {
    it.each([
      ['missing', {}],
      ['wrong', { 'X-Admin-Token': 'not-the-admin-token-at-all' }],
    ])('answers 401 when %s', async (_name, headers) => {
      const response = await t.http.post('/admin/sellers').set(headers).send({ name: 'X', email: 'x@example.com' }).expect(401);
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: expect.any(String) });
      await t.http.get('/admin/settings').set(headers).expect(401);
    });

    it('answers 404 on every /admin route when ADMIN_TOKEN is unset', async () => {
      const off = await startApp({ ADMIN_TOKEN: undefined });
      try {
        const calls = [
          off.http.post('/admin/sellers').send({ name: 'X', email: 'x@example.com' }),
          off.http.get('/admin/sellers/1'),
          off.http.patch('/admin/sellers/1').send({ blocked: true }),
          off.http.post('/admin/sellers/1/api-keys'),
          off.http.delete('/admin/api-keys/pk_whatever'),
          off.http.post('/admin/sellers/1/webhooks').send({ url: 'https://example.com', type: 'WITHDRAWAL' }),
          off.http.get('/admin/sellers/1/webhooks'),
          off.http.delete('/admin/sellers/1/webhooks/1'),
          off.http.get('/admin/settings'),
          off.http.put('/admin/settings').send({ apiWithdrawalsEnabled: false }),
        ];
        for (const call of calls) {
          const response = await call.set(adminHeaders);
          expect(response.status).toBe(404);
          expect(response.body).toEqual({ error: 'NOT_FOUND', message: expect.any(String) });
        }
      } finally {
        await off.close();
      }
    });
  });

  describe('POST /admin/sellers', () => {
    it('creates a seller and answers its account, its first key pair, its postback secret and its dashboard invitation once', async () => {
      const response = await t.http
        .post('/admin/sellers')
        .set(adminHeaders)
        .send({ name: 'Maria Silva', email: 'maria.silva@example.com', document: { type: 'cpf', number: '52998224725' } })
        .expect(201);
      expect(response.body).toEqual({
        seller: expect.objectContaining({ id: expect.any(Number), legalName: 'Maria Silva', blocked: false }),
        credentials: { publicKey: expect.stringMatching(/^pk_/), privateKey: expect.stringMatching(/^sk_/) },
        postbackSecret: expect.stringMatching(/^whsec_/),
        invitation: { url: expect.stringMatching(/^http:\/\/localhost:3000\/dashboard\/invitation\/[A-Za-z0-9_-]{43}$/), expiresAt: expect.stringMatching(/Z$/), revokedInvitations: 0 },
      });
      expect(response.body.seller.document).toEqual({ id: response.body.seller.id, number: '52998224725', type: 'cpf' });
      const [row] = await t.db.query('SELECT postback_secret_encrypted FROM sellers WHERE id = $1', [response.body.seller.id]);
      expect(row.postback_secret_encrypted).not.toContain(response.body.postbackSecret.slice(6));
    });

    // Issue 19, finding 3: an operator re-issues a link because the old one leaked; the old one must die at once.
    it('issues a new invitation link that revokes the earlier unused ones at once, and says how many', async () => {
      const seller = await createSeller(t);
      const firstPath = new URL((seller.body.invitation as { url: string }).url).pathname;
      expect((await t.http.get(firstPath)).status).toBe(200);
      const second = await t.http.post(`/admin/sellers/${seller.id}/invitation`).set(adminHeaders).expect(201);
      expect(second.body).toEqual({ url: expect.stringMatching(/\/dashboard\/invitation\/[A-Za-z0-9_-]{43}$/), expiresAt: expect.any(String), revokedInvitations: 1 });
      expect(second.body.url).not.toBe((seller.body.invitation as { url: string }).url);
      const secondPath = new URL(second.body.url).pathname;
      expect((await t.http.get(firstPath)).status).toBe(404);
      // The revoked link cannot set a password either, even with a valid form of its own.
      const leaked = request.agent(t.app.getHttpServer());
      const login = await leaked.get('/dashboard/login').expect(200);
      const leakedCsrf = /name="_csrf" value="([^"]+)"/.exec(login.text)?.[1];
      expect((await leaked.post(firstPath).type('form').send({ _csrf: leakedCsrf, password: 'senha-vazada-123', passwordConfirmation: 'senha-vazada-123' })).status).toBe(404);

      const agent = request.agent(t.app.getHttpServer());
      const form = await agent.get(secondPath).expect(200);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(form.text)?.[1];
      await agent.post(secondPath).type('form').send({ _csrf: csrf, password: 'senha-nova-123', passwordConfirmation: 'senha-nova-123' }).expect(303);
      expect((await t.http.get(secondPath)).status).toBe(404);
      const third = await t.http.post(`/admin/sellers/${seller.id}/invitation`).set(adminHeaders).expect(201);
      expect(third.body.revokedInvitations).toBe(0); // the second was used, nothing left to revoke
      await t.http.post(`/admin/sellers/999999/invitation`).set(adminHeaders).expect(404);
    });

    it('leaves exactly one usable link after 8 invitations issued at once', async () => {
      const seller = await createSeller(t);
      const issued = await Promise.all(Array.from({ length: 8 }, () => t.http.post(`/admin/sellers/${seller.id}/invitation`).set(adminHeaders).expect(201)));
      const usable = [];
      for (const { body } of issued) if ((await t.http.get(new URL(body.url).pathname)).status === 200) usable.push(body.url);
      expect(usable).toHaveLength(1);
      expect(issued.reduce((sum, { body }) => sum + body.revokedInvitations, 0)).toBe(8);
    });

    it('refuses a second seller with the same e-mail, whatever its case, with 409', async () => {
      await createSeller(t, { email: 'dup@example.com' });
      const response = await t.http.post('/admin/sellers').set(adminHeaders).send({ name: 'Dup', email: 'DUP@example.com' }).expect(409);
      expect(response.body).toEqual({ error: 'CONFLICT', message: expect.stringContaining('DUP@example.com') });
    });

    it('lists the missing fields', async () => {
      const response = await t.http.post('/admin/sellers').set(adminHeaders).send({}).expect(400);
      expect(response.body).toEqual({
        error: 'MISSING_FIELDS',
        message: expect.any(String),
        details: { missingFields: ['name', 'email'] },
      });
    });

    it.each([
      [{ name: 'A', email: 'not-an-email' }, 'email'],
      [{ name: 'A', email: 'a@example.com', phone: '(11) 98765-4321' }, 'phone'],
      [{ name: 'A', email: 'a@example.com', document: { type: 'cpf', number: '12345678900' } }, 'document.number'],
      [{ name: 'A', email: 'a@example.com', document: { type: 'cnpj', number: '11222333000180' } }, 'document.number'],
      [{ name: 'A', email: 'a@example.com', document: { type: 'rg', number: '52998224725' } }, 'document.type'],
      [{ name: 'A', email: 'a@example.com', permissions: { isPixAvailable: 'yes' } }, 'permissions.isPixAvailable'],
      [{ name: 42, email: 'a@example.com' }, 'name'],
    ])('refuses %j naming the field %s', async (body, field) => {
      const response = await t.http.post('/admin/sellers').set(adminHeaders).send(body).expect(400);
      expect(response.body.error).toBe('VALIDATION_ERROR');
      expect(response.body.details.field).toBe(field);
      expect(typeof response.body.details.message).toBe('string');
    });
  });

  describe('PATCH /admin/sellers/{id}', () => {
    it('changes permissions, fees and blocked, and answers the account with its fee schedule', async () => {
      const seller = await createSeller(t);
      const response = await t.http
        .patch(`/admin/sellers/${seller.id}`)
        .set(adminHeaders)
        .send({
          blocked: true,
          permissions: { isPixAvailable: false, transferEnabled: false, transferPriceCents: 350 },
          fees: { pixPercentBps: 150, chargebackFineCents: 2000 },
        })
        .expect(200);
      expect(response.body).toMatchObject({
        id: seller.id,
        blocked: true,
        permissions: { isPixAvailable: false, transferEnabled: false, transferPriceCents: 350 },
        fees: { pixPercentBps: 150, chargebackFineCents: 2000, cashoutFixedCents: 350, creditCardPercentBps: 399 },
      });
      const again = await t.http.get(`/admin/sellers/${seller.id}`).set(adminHeaders).expect(200);
      expect(again.body.fees.pixPercentBps).toBe(150);
      expect(again.body.permissions.isCreditCardAvailable).toBe(true);
    });

    it.each([
      [{ fees: { pixPercentBps: -1 } }, 'fees.pixPercentBps'],
      [{ fees: { pixPercentBps: 10001 } }, 'fees.pixPercentBps'],
      [{ fees: { boletoFixedCents: 1.5 } }, 'fees.boletoFixedCents'],
      [{ blocked: 'yes' }, 'blocked'],
      [{ permissions: { anticipationPricePercent: 101 } }, 'permissions.anticipationPricePercent'],
    ])('refuses %j', async (body, field) => {
      const seller = await createSeller(t);
      const response = await t.http.patch(`/admin/sellers/${seller.id}`).set(adminHeaders).send(body).expect(400);
      expect(response.body.details.field).toBe(field);
    });

    it('answers 404 for an unknown seller and 400 for an id that is not a number', async () => {
      const missing = await t.http.patch('/admin/sellers/999999').set(adminHeaders).send({ blocked: true }).expect(404);
      expect(missing.body.error).toBe('NOT_FOUND');
      const bad = await t.http.patch('/admin/sellers/abc').set(adminHeaders).send({ blocked: true }).expect(400);
      expect(bad.body.error).toBe('INVALID_ID');
    });
  });

  describe('key pairs', () => {
    it('issues a new pair for a seller; 404 for an unknown seller', async () => {
      const seller = await createSeller(t);
      const response = await t.http.post(`/admin/sellers/${seller.id}/api-keys`).set(adminHeaders).expect(201);
      expect(response.body).toEqual({ publicKey: expect.stringMatching(/^pk_/), privateKey: expect.stringMatching(/^sk_/) });
      expect(response.body.publicKey).not.toBe(seller.publicKey);
      await t.http.post('/admin/sellers/999999/api-keys').set(adminHeaders).expect(404);
    });

    it('answers 404 when revoking a key that does not exist or is already revoked', async () => {
      const seller = await createSeller(t);
      await t.http.delete(`/admin/api-keys/${seller.publicKey}`).set(adminHeaders).expect(204);
      const again = await t.http.delete(`/admin/api-keys/${seller.publicKey}`).set(adminHeaders).expect(404);
      expect(again.body.error).toBe('NOT_FOUND');
      await t.http.delete('/admin/api-keys/pk_nope').set(adminHeaders).expect(404);
    });
  });

  describe('withdrawal webhooks', () => {
    it('adds, lists and removes a seller webhook', async () => {
      const seller = await createSeller(t);
      const created = await t.http
        .post(`/admin/sellers/${seller.id}/webhooks`)
        .set(adminHeaders)
        .send({ url: 'http://127.0.0.1:9/hooks/withdrawals', type: 'WITHDRAWAL' })
        .expect(201);
      expect(created.body).toEqual({ id: expect.any(Number), url: 'http://127.0.0.1:9/hooks/withdrawals', type: 'WITHDRAWAL' });

      const listed = await t.http.get(`/admin/sellers/${seller.id}/webhooks`).set(adminHeaders).expect(200);
      expect(listed.body).toEqual([created.body]);

      await t.http.delete(`/admin/sellers/${seller.id}/webhooks/${created.body.id}`).set(adminHeaders).expect(204);
      expect((await t.http.get(`/admin/sellers/${seller.id}/webhooks`).set(adminHeaders).expect(200)).body).toEqual([]);
      await t.http.delete(`/admin/sellers/${seller.id}/webhooks/${created.body.id}`).set(adminHeaders).expect(404);
    });

    it.each([
      [{ url: 'ftp://example.com/x', type: 'WITHDRAWAL' }, 'url'],
      [{ url: 'not a url', type: 'WITHDRAWAL' }, 'url'],
      [{ url: 'https://example.com/x', type: 'SALE' }, 'type'],
    ])('refuses %j', async (body, field) => {
      const seller = await createSeller(t);
      const response = await t.http.post(`/admin/sellers/${seller.id}/webhooks`).set(adminHeaders).send(body).expect(400);
      expect(response.body.details.field).toBe(field);
    });

    it('answers 404 for the webhooks of an unknown seller, and for a webhook of another seller', async () => {
      await t.http.get('/admin/sellers/999999/webhooks').set(adminHeaders).expect(404);
      const a = await createSeller(t);
      const b = await createSeller(t);
      const hook = await t.http
        .post(`/admin/sellers/${a.id}/webhooks`)
        .set(adminHeaders)
        .send({ url: 'http://127.0.0.1:9/hook', type: 'WITHDRAWAL' })
        .expect(201);
      await t.http.delete(`/admin/sellers/${b.id}/webhooks/${hook.body.id}`).set(adminHeaders).expect(404);
    });
  });

  describe('settings', () => {
    it('switches API withdrawals off and on', async () => {
      const off = await t.http.put('/admin/settings').set(adminHeaders).send({ apiWithdrawalsEnabled: false }).expect(200);
      expect(off.body).toEqual({ apiWithdrawalsEnabled: false, updatedAt: expect.any(String) });
      expect((await t.http.get('/admin/settings').set(adminHeaders).expect(200)).body.apiWithdrawalsEnabled).toBe(false);
      await t.http.put('/admin/settings').set(adminHeaders).send({ apiWithdrawalsEnabled: true }).expect(200);
      expect((await t.http.get('/admin/settings').set(adminHeaders).expect(200)).body.apiWithdrawalsEnabled).toBe(true);
    });

    it('refuses a body without a boolean apiWithdrawalsEnabled', async () => {
      const missing = await t.http.put('/admin/settings').set(adminHeaders).send({}).expect(400);
      expect(missing.body.details).toEqual({ missingFields: ['apiWithdrawalsEnabled'] });
      const wrong = await t.http.put('/admin/settings').set(adminHeaders).send({ apiWithdrawalsEnabled: 'no' }).expect(400);
      expect(wrong.body.details.field).toBe('apiWithdrawalsEnabled');
    });
  });
});
