import { randomUUID } from 'node:crypto';
import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { Receiver } from './setup/receiver';
import { balanceOf, createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const CPF_KEY = '52998224725';

describe('Cashouts (spec 2.10, 4.5, 4.6, 7.4, 8)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ OUTBOX_POLL_MS: '100' });
  });
  afterAll(() => t.close());

  /** A seller whose available balance is exactly `cents`, earned through a paid PIX sale with no fee. */
  async function fundedSeller(cents: number): Promise<TestSeller> {
    const seller = await createSeller(t);
    await t.http.patch(`/admin/sellers/${seller.id}`).set(adminHeaders).send({ fees: { pixPercentBps: 0, pixFixedCents: 0 } }).expect(200);
    const sale = await createSale(t, seller, saleBody('PIX', { amount: cents }));
    expect((await sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED')).status).toBe(200);
    expect(await balanceOf(t, seller)).toEqual({ available: cents, blocked: 0, total: cents });
    return seller;
  }

  const cashout = (seller: TestSeller, body: Record<string, unknown>) => t.http.post('/api/public/cashout').set(seller.headers).send(body);

  it('answers 201 with the withdrawal, PENDING, fees in reais, and moves the amount to blocked', async () => {
    const seller = await fundedSeller(50_000);
    const response = await cashout(seller, { amount: 150.5, pixKey: CPF_KEY }).expect(201);
    expect(response.body).toEqual({
      id: expect.any(Number),
      amount: '150.50',
      netAmount: '148.50',
      pixKey: CPF_KEY,
      pixKeyType: 'CPF',
      status: 'PENDING',
      createdAt: expect.stringMatching(/Z$/),
      fees: { fixed: '2.00', variable: '0.00', total: '2.00' },
    });
    expect(await balanceOf(t, seller)).toEqual({ available: 50_000 - 15_050, blocked: 15_050, total: 50_000 });

    const lookup = await t.http.get(`/api/public/cashout/${response.body.id}`).set(seller.headers).expect(200);
    expect(lookup.body).toEqual({ ...response.body, updatedAt: expect.stringMatching(/Z$/) });
  });

  it('applies the seller fee schedule: fixed and variable parts', async () => {
    const seller = await fundedSeller(50_000);
    await t.http.patch(`/admin/sellers/${seller.id}`).set(adminHeaders).send({ fees: { cashoutFixedCents: 150, cashoutPercentBps: 100 } }).expect(200);
    const response = await cashout(seller, { amount: 200, pixKey: 'loja@example.com', pixKeyType: 'EMAIL' }).expect(201);
    expect(response.body).toMatchObject({ amount: '200.00', netAmount: '196.50', fees: { fixed: '1.50', variable: '2.00', total: '3.50' } });
  });

  describe('refusals', () => {
    let seller: TestSeller;
    beforeAll(async () => {
      seller = await fundedSeller(20_000);
    });

    it.each<[Record<string, unknown>, string]>([
      [{ pixKey: CPF_KEY }, 'missing amount'],
      [{ amount: 0, pixKey: CPF_KEY }, 'zero'],
      [{ amount: -150, pixKey: CPF_KEY }, 'negative'],
      [{ amount: '150', pixKey: CPF_KEY }, 'a string'],
      [{ amount: 150.555, pixKey: CPF_KEY }, 'three decimals'],
    ])('answers 400 {message, error} for an amount that is not a positive number (%j, %s)', async (body, _name) => {
      const response = await cashout(seller, body).expect(400);
      expect(response.body).toMatchObject({ message: expect.any(String), error: expect.stringMatching(/VALIDATION_ERROR|MISSING_FIELDS/) });
      expect(response.body.errorType).toBeUndefined();
    });

    it.each([
      [{ amount: 150, pixKey: '1234567' }, 'pixKey'],
      [{ amount: 150, pixKey: 'x'.repeat(78), pixKeyType: 'RANDOM' }, 'pixKey'],
      [{ amount: 150, pixKey: '52998224724' }, 'pixKey'],
      [{ amount: 150, pixKey: '11222333000180', pixKeyType: 'CNPJ' }, 'pixKey'],
      [{ amount: 150, pixKey: 'not-an-email', pixKeyType: 'EMAIL' }, 'pixKey'],
      [{ amount: 150, pixKey: '11987654321', pixKeyType: 'PHONE' }, 'pixKey'],
      [{ amount: 150, pixKey: 'not-a-uuid-value', pixKeyType: 'RANDOM' }, 'pixKey'],
      [{ amount: 150, pixKey: CPF_KEY, pixKeyType: 'IBAN' }, 'pixKeyType'],
    ])('answers 400 for %j', async (body, field) => {
      const response = await cashout(seller, body).expect(400);
      expect(response.body.details.field).toBe(field);
    });

    it('accepts every valid key type', async () => {
      for (const [pixKey, pixKeyType] of [
        ['11222333000181', 'CNPJ'],
        ['+5511987654321', 'PHONE'],
        ['7f6d9a3e-2c41-4b8e-9d0a-5e3f1c2b4a69', 'RANDOM'],
      ]) {
        const own = await fundedSeller(10_000);
        await cashout(own, { amount: 100, pixKey, pixKeyType }).expect(201);
      }
    });

    it('answers 422 MINIMUM_VALUE below 100.00 and MAXIMUM_VALUE above 100000.00', async () => {
      expect((await cashout(seller, { amount: 99.99, pixKey: CPF_KEY }).expect(422)).body).toEqual({ message: expect.any(String), errorType: 'MINIMUM_VALUE' });
      expect((await cashout(seller, { amount: 100000.01, pixKey: CPF_KEY }).expect(422)).body).toEqual({ message: expect.any(String), errorType: 'MAXIMUM_VALUE' });
    });

    it('answers 422 MINIMUM_VALUE when the fees would take the whole amount', async () => {
      const own = await fundedSeller(20_000);
      await t.http.patch(`/admin/sellers/${own.id}`).set(adminHeaders).send({ fees: { cashoutFixedCents: 10_000 } }).expect(200);
      expect((await cashout(own, { amount: 100, pixKey: CPF_KEY }).expect(422)).body).toEqual({ message: expect.any(String), errorType: 'MINIMUM_VALUE' });
      expect(await balanceOf(t, own)).toEqual({ available: 20_000, blocked: 0, total: 20_000 });
    });

    it('answers 422 INSUFFICIENT_BALANCE when available does not cover the amount, and changes nothing', async () => {
      const response = await cashout(seller, { amount: 200.01, pixKey: CPF_KEY }).expect(422);
      expect(response.body).toEqual({ message: expect.any(String), errorType: 'INSUFFICIENT_BALANCE' });
      expect(await balanceOf(t, seller)).toEqual({ available: 20_000, blocked: 0, total: 20_000 });
    });

    it('answers 403 TRANSFER_NOT_ALLOWED when the seller may not cash out', async () => {
      const own = await fundedSeller(20_000);
      await t.http.patch(`/admin/sellers/${own.id}`).set(adminHeaders).send({ permissions: { transferEnabled: false } }).expect(200);
      expect((await cashout(own, { amount: 150, pixKey: CPF_KEY }).expect(403)).body).toEqual({ message: expect.any(String), errorType: 'TRANSFER_NOT_ALLOWED' });
    });

    it('answers 403 API_WITHDRAWAL_DISABLED_GLOBALLY while the operator switch is off', async () => {
      await t.http.put('/admin/settings').set(adminHeaders).send({ apiWithdrawalsEnabled: false }).expect(200);
      try {
        expect((await cashout(seller, { amount: 150, pixKey: CPF_KEY }).expect(403)).body).toEqual({
          message: expect.any(String),
          errorType: 'API_WITHDRAWAL_DISABLED_GLOBALLY',
        });
      } finally {
        await t.http.put('/admin/settings').set(adminHeaders).send({ apiWithdrawalsEnabled: true }).expect(200);
      }
    });

    it('answers 401 {message, error} without keys', async () => {
      expect((await t.http.post('/api/public/cashout').send({ amount: 150, pixKey: CPF_KEY }).expect(401)).body).toEqual({ message: expect.any(String), error: 'UNAUTHORIZED' });
    });

    it('answers the lookup 400 for a bad id, 403 for another seller’s withdrawal, 404 unknown', async () => {
      const own = await fundedSeller(20_000);
      const created = await cashout(own, { amount: 100, pixKey: CPF_KEY }).expect(201);
      expect((await t.http.get('/api/public/cashout/abc').set(seller.headers).expect(400)).body).toEqual({ message: expect.any(String), error: 'INVALID_ID', details: { field: 'id', message: expect.any(String) } });
      expect((await t.http.get(`/api/public/cashout/${created.body.id}`).set(seller.headers).expect(403)).body).toEqual({ message: expect.any(String), error: 'FORBIDDEN' });
      expect((await t.http.get('/api/public/cashout/99999999').set(seller.headers).expect(404)).body).toEqual({ message: expect.any(String), error: 'NOT_FOUND' });
    });

    it('refuses a cashout while available is negative after a dispute', async () => {
      const own = await fundedSeller(20_000);
      const pix = await createSale(t, own, saleBody('PIX', { amount: 30_000 }));
      await sendEvent(t, own, pix.id, 'PAYMENT_CONFIRMED');
      await cashout(own, { amount: 500, pixKey: CPF_KEY }).expect(201);
      await sendEvent(t, own, pix.id, 'MED_OPENED');
      expect((await balanceOf(t, own)).available).toBe(-30_000);
      expect((await cashout(own, { amount: 100, pixKey: CPF_KEY }).expect(422)).body.errorType).toBe('INSUFFICIENT_BALANCE');
    });
  });

  describe('lifecycle and withdrawal webhook (spec 3.3, 6.2)', () => {
    let receiver: Receiver;
    beforeEach(async () => {
      receiver = await Receiver.start();
    });
    afterEach(() => receiver.close());

    async function sellerWithWebhook(): Promise<TestSeller> {
      const seller = await fundedSeller(100_000);
      await t.http.post(`/admin/sellers/${seller.id}/webhooks`).set(adminHeaders).send({ url: `${receiver.url}/withdrawals`, type: 'WITHDRAWAL' }).expect(201);
      return seller;
    }
    const event = (seller: TestSeller, id: number, name: string) => t.http.post(`/api/sandbox/cashouts/${id}/events`).set(seller.headers).send({ event: name });

    it('PROCESSING then COMPLETED: the blocked amount leaves; each move sends the webhook with every 6.2 field and no signature', async () => {
      const seller = await sellerWithWebhook();
      const created = await cashout(seller, { amount: 300, pixKey: CPF_KEY }).expect(201);
      expect((await event(seller, created.body.id, 'PROCESSING').expect(200)).body.status).toBe('PROCESSING');
      expect(await balanceOf(t, seller)).toEqual({ available: 70_000, blocked: 30_000, total: 100_000 });
      const done = await event(seller, created.body.id, 'COMPLETED').expect(200);
      expect(done.body).toMatchObject({ id: created.body.id, status: 'COMPLETED', updatedAt: expect.any(String) });
      expect(await balanceOf(t, seller)).toEqual({ available: 70_000, blocked: 0, total: 70_000 });

      const received = await receiver.waitFor((r) => r.length >= 2);
      expect(received.map((r) => r.body.status)).toEqual(['PROCESSING', 'COMPLETED']);
      for (const request of received) {
        expect(request.path).toBe('/withdrawals');
        expect(request.headers['x-signature']).toBeUndefined();
        expect(request.body).toEqual({
          id: created.body.id,
          userId: seller.id,
          amount: '300.00',
          pixKey: CPF_KEY,
          pixKeyType: 'CPF',
          status: expect.any(String),
          externalId: `sbx_po_${created.body.id}`,
          createdAt: created.body.createdAt,
          updatedAt: expect.stringMatching(/Z$/),
          processedAt: request.body.status === 'COMPLETED' ? expect.stringMatching(/Z$/) : null,
          user: { id: seller.id, name: 'Loja Teste', email: expect.stringMatching(/@example\.com$/) },
          type: 'WITHDRAWAL',
        });
      }
    });

    it('REJECTED: stored and looked up as FAILED, announced as REJECTED, the money returned', async () => {
      const seller = await sellerWithWebhook();
      const created = await cashout(seller, { amount: 300, pixKey: CPF_KEY }).expect(201);
      await event(seller, created.body.id, 'PROCESSING').expect(200);
      expect((await event(seller, created.body.id, 'REJECTED').expect(200)).body.status).toBe('FAILED');
      expect((await t.http.get(`/api/public/cashout/${created.body.id}`).set(seller.headers).expect(200)).body.status).toBe('FAILED');
      expect(await balanceOf(t, seller)).toEqual({ available: 100_000, blocked: 0, total: 100_000 });
      const received = await receiver.waitFor((r) => r.length >= 2);
      expect(received.map((r) => r.body.status)).toEqual(['PROCESSING', 'REJECTED']);
    });

    it('CANCELLED: the money returned and the webhook sent to every configured webhook', async () => {
      const seller = await sellerWithWebhook();
      const second = await Receiver.start();
      try {
        await t.http.post(`/admin/sellers/${seller.id}/webhooks`).set(adminHeaders).send({ url: second.url, type: 'WITHDRAWAL' }).expect(201);
        const created = await cashout(seller, { amount: 300, pixKey: CPF_KEY }).expect(201);
        expect((await event(seller, created.body.id, 'CANCELLED').expect(200)).body.status).toBe('CANCELLED');
        expect(await balanceOf(t, seller)).toEqual({ available: 100_000, blocked: 0, total: 100_000 });
        for (const r of [receiver, second]) expect((await r.waitFor((got) => got.length >= 1))[0].body.status).toBe('CANCELLED');
      } finally {
        await second.close();
      }
    });

    it.each([
      [['COMPLETED'], 'PENDING cannot complete'],
      [['PROCESSING', 'CANCELLED'], 'PROCESSING cannot be cancelled'],
      [['PROCESSING', 'COMPLETED', 'REJECTED'], 'COMPLETED is final'],
      [['CANCELLED', 'PROCESSING'], 'CANCELLED is final'],
      [['REJECTED', 'COMPLETED'], 'FAILED is final'],
    ])('answers 409 for %j (%s) and changes nothing', async (events) => {
      const seller = await fundedSeller(20_000);
      const created = await cashout(seller, { amount: 100, pixKey: CPF_KEY }).expect(201);
      for (const name of events.slice(0, -1)) await event(seller, created.body.id, name).expect(200);
      const before = await balanceOf(t, seller);
      const refused = await event(seller, created.body.id, events[events.length - 1]).expect(409);
      expect(refused.body).toEqual({ message: expect.any(String), error: 'INVALID_TRANSITION' });
      expect(await balanceOf(t, seller)).toEqual(before);
    });

    it('sends no webhook when the seller configured none', async () => {
      const seller = await fundedSeller(20_000);
      const created = await cashout(seller, { amount: 100, pixKey: CPF_KEY }).expect(201);
      await event(seller, created.body.id, 'CANCELLED').expect(200);
      expect((await t.http.get(`/admin/sellers/${seller.id}/deliveries`).set(adminHeaders).expect(200)).body).toEqual([]);
    });
  });

  describe('Idempotency-Key and concurrency (platform.md §6)', () => {
    it('replays a cashout for the same key and body, 422 for another body', async () => {
      const seller = await fundedSeller(50_000);
      const key = randomUUID();
      const first = await t.http.post('/api/public/cashout').set(seller.headers).set('Idempotency-Key', key).send({ amount: 100, pixKey: CPF_KEY }).expect(201);
      const again = await t.http.post('/api/public/cashout').set(seller.headers).set('Idempotency-Key', key).send({ amount: 100, pixKey: CPF_KEY }).expect(201);
      expect(again.body).toEqual(first.body);
      expect(await balanceOf(t, seller)).toEqual({ available: 40_000, blocked: 10_000, total: 50_000 });
      const other = await t.http.post('/api/public/cashout').set(seller.headers).set('Idempotency-Key', key).send({ amount: 101, pixKey: CPF_KEY }).expect(422);
      expect(other.body).toEqual({ message: expect.any(String), error: 'IDEMPOTENCY_KEY_REUSED' });
    });

    it('accepts exactly 10 of 50 parallel cashouts against a balance that covers 10, never below zero', async () => {
      const seller = await fundedSeller(100_000);
      const responses = await Promise.all(Array.from({ length: 50 }, () => cashout(seller, { amount: 100, pixKey: CPF_KEY })));
      const statuses = responses.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(10);
      expect(statuses.filter((s) => s === 422)).toHaveLength(40);
      expect(responses.filter((r) => r.status === 422).every((r) => r.body.errorType === 'INSUFFICIENT_BALANCE')).toBe(true);
      expect(await balanceOf(t, seller)).toEqual({ available: 0, blocked: 100_000, total: 100_000 });
      const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM withdrawals WHERE seller_id = $1`, [seller.id]);
      expect(count).toBe(10);
    });

    it('holds the same line when requests with an Idempotency-Key (a transaction) and without (one statement) race for the balance, and books each hold once', async () => {
      const seller = await fundedSeller(100_000);
      const responses = await Promise.all(
        Array.from({ length: 40 }, (_, i) => {
          const request = t.http.post('/api/public/cashout').set(seller.headers);
          return (i % 2 === 0 ? request.set('Idempotency-Key', `race-${seller.id}-${i}`) : request).send({ amount: 100, pixKey: CPF_KEY });
        }),
      );
      const accepted = responses.filter((r) => r.status === 201);
      expect(accepted).toHaveLength(10);
      expect(responses.filter((r) => r.status === 422).every((r) => r.body.errorType === 'INSUFFICIENT_BALANCE')).toBe(true);
      expect(await balanceOf(t, seller)).toEqual({ available: 0, blocked: 100_000, total: 100_000 });
      const rows: Array<{ id: number; postings: number; history: number }> = await t.db.query(
        `SELECT w.id,
                (SELECT count(*)::int FROM ledger_postings p WHERE p.reference_type = 'WITHDRAWAL' AND p.reference_id = w.id) AS postings,
                (SELECT count(*)::int FROM withdrawal_status_changes h WHERE h.withdrawal_id = w.id) AS history
           FROM withdrawals w WHERE w.seller_id = $1 ORDER BY w.id`,
        [seller.id],
      );
      expect(rows.map((row) => row.id).sort()).toEqual(accepted.map((r) => r.body.id as number).sort());
      expect(rows.every((row) => row.postings === 1 && row.history === 1)).toBe(true);
    });
  });
});
