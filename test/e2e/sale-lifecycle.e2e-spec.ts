import { createSeller, TestSeller } from './setup/factories';
import { balanceOf, card, createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';
import { ChargesService } from '../../src/payments/charges.service';

type Step = [event: string, status: string, available: number, blocked: number];

/**
 * Spec 3.1 through the sandbox events route, with the balance after each move (default fees:
 * PIX 0.99 %, credit card 3.99 % + 39 cents with a 10 % reserve, boleto 3.49, chargeback fine 15.00).
 */
describe('Sale lifecycle and its ledger (spec 3.1, platform.md §3-§4)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  async function walk(seller: TestSeller, saleId: number, steps: Step[]) {
    for (const [event, status, available, blocked] of steps) {
      const response = await sendEvent(t, seller, saleId, event);
      expect({ event, status: response.status, body: response.body.status }).toEqual({ event, status: 200, body: status });
      expect({ event, balance: await balanceOf(t, seller) }).toEqual({ event, balance: { available, blocked, total: available + blocked } });
    }
  }

  it('PIX: paid, MED opened and won, MED opened and lost', async () => {
    const seller = await createSeller(t);
    const sale = await createSale(t, seller, saleBody('PIX'));
    await walk(seller, sale.id, [
      ['PAYMENT_CONFIRMED', 'PAGO', 9901, 0],
      ['MED_OPENED', 'MED', 0, 9901],
      ['MED_WON', 'PAGO', 9901, 0],
      ['MED_OPENED', 'MED', 0, 9901],
      ['MED_LOST', 'ESTORNADO', 0, 0],
    ]);
    const tx = await t.http.get(`/api/transactions/${sale.id}`).set(seller.headers).expect(200);
    expect(tx.body).toMatchObject({ amount: 10000, netAmount: 9901, systemFee: 99, reserveAmount: 0, status: 'ESTORNADO' });
  });

  it('PIX: a MED opened takes available below zero when it was already withdrawn', async () => {
    const seller = await createSeller(t);
    const paid = await createSale(t, seller, saleBody('PIX'));
    await sendEvent(t, seller, paid.id, 'PAYMENT_CONFIRMED');
    const refunded = await createSale(t, seller, saleBody('PIX', { amount: 20000 }));
    await walk(seller, refunded.id, [
      ['PAYMENT_CONFIRMED', 'PAGO', 9901 + 19802, 0],
      ['REFUNDED', 'ESTORNADO', 9901, 0],
    ]);
    await walk(seller, paid.id, [['MED_OPENED', 'MED', 0, 9901]]);
  });

  it('PIX: processing failure, then the retry pays it', async () => {
    const seller = await createSeller(t);
    const sale = await createSale(t, seller, saleBody('PIX'));
    await walk(seller, sale.id, [
      ['PROCESSING_FAILED', 'FALHA', 0, 0],
      ['PAYMENT_CONFIRMED', 'PAGO', 9901, 0],
    ]);
  });

  it('PIX: failure then cancellation; cancellation and expiry before payment', async () => {
    const seller = await createSeller(t);
    const failed = await createSale(t, seller, saleBody('PIX'));
    await walk(seller, failed.id, [
      ['PROCESSING_FAILED', 'FALHA', 0, 0],
      ['CANCELLED', 'CANCELADO', 0, 0],
    ]);
    const cancelled = await createSale(t, seller, saleBody('PIX'));
    await walk(seller, cancelled.id, [['CANCELLED', 'CANCELADO', 0, 0]]);
    const expired = await createSale(t, seller, saleBody('PIX'));
    await walk(seller, expired.id, [['EXPIRED', 'CANCELADO', 0, 0]]);
  });

  it('BOLETO and TRANSFER: paid by confirmation', async () => {
    const seller = await createSeller(t);
    const boleto = await createSale(t, seller, saleBody('BOLETO'));
    await walk(seller, boleto.id, [['PAYMENT_CONFIRMED', 'PAGO', 9651, 0]]);
    const transfer = await createSale(t, seller, saleBody('TRANSFER'));
    await walk(seller, transfer.id, [['PAYMENT_CONFIRMED', 'PAGO', 9651 + 9901, 0]]);
    const expired = await createSale(t, seller, saleBody('BOLETO'));
    await walk(seller, expired.id, [['EXPIRED', 'CANCELADO', 9651 + 9901, 0]]);
  });

  it('CREDIT_CARD: paid at creation with its reserve; chargeback opened, reversed, opened and confirmed', async () => {
    const seller = await createSeller(t);
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD'));
    expect(sale.status).toBe('PAGO');
    expect(await balanceOf(t, seller)).toEqual({ available: 8606, blocked: 956, total: 9562 });
    await walk(seller, sale.id, [
      ['CHARGEBACK_OPENED', 'CHARGEBACK', 7106, 956],
      ['CHARGEBACK_REVERSED', 'PAGO', 7106, 956],
      ['CHARGEBACK_OPENED', 'CHARGEBACK', 5606, 956],
      ['CHARGEBACK_CONFIRMED', 'ESTORNADO', -3000, 0],
    ]);
  });

  it('CREDIT_CARD: refunded before and after its reserve is released', async () => {
    const seller = await createSeller(t);
    const early = await createSale(t, seller, saleBody('CREDIT_CARD'));
    await walk(seller, early.id, [['REFUNDED', 'ESTORNADO', 0, 0]]);

    const late = await createSale(t, seller, saleBody('CREDIT_CARD'));
    const run = await t.http
      .post('/api/sandbox/scheduler/run')
      .set(seller.headers)
      .send({ now: new Date(Date.now() + 31 * 86_400_000).toISOString() })
      .expect(200);
    expect(run.body).toMatchObject({ releasedReserves: 1 });
    expect(await balanceOf(t, seller)).toEqual({ available: 9562, blocked: 0, total: 9562 });
    await walk(seller, late.id, [['REFUNDED', 'ESTORNADO', 0, 0]]);
  });

  it('reserves of several sellers due together are released in one run, each to its own seller, entry by entry', async () => {
    const sellers = [await createSeller(t), await createSeller(t)];
    const sales: Array<{ seller: TestSeller; id: number }> = [];
    for (let i = 0; i < 6; i += 1) {
      const seller = sellers[i % 2]; // interleaved, so the run meets the sellers in turn
      sales.push({ seller, id: (await createSale(t, seller, saleBody('CREDIT_CARD'))).id });
    }
    for (const seller of sellers) expect(await balanceOf(t, seller)).toEqual({ available: 3 * 8606, blocked: 3 * 956, total: 3 * 9562 });
    const transitions = t.app.get(ChargesService);
    const summary = await transitions.runDueWork(new Date(Date.now() + 31 * 86_400_000), null);
    expect(summary.releasedReserves).toBeGreaterThanOrEqual(6); // other tests' sellers may have reserves due too
    for (const seller of sellers) expect(await balanceOf(t, seller)).toEqual({ available: 3 * 9562, blocked: 0, total: 3 * 9562 });
    const releases: Array<{ reference_id: string; seller_id: number; account: string; amount_cents: string }> = await t.db.query(
      `SELECT reference_id, seller_id, account, amount_cents FROM ledger_entries
        WHERE reference_type = 'SALE' AND reference_id = ANY($1) AND kind = 'RESERVE_RELEASED' ORDER BY reference_id::bigint, account`,
      [sales.map((sale) => String(sale.id))],
    );
    expect(releases.map((row) => ({ ...row, amount_cents: Number(row.amount_cents) }))).toEqual(
      sales.flatMap(({ seller, id }) => [
        { reference_id: String(id), seller_id: seller.id, account: 'AVAILABLE', amount_cents: 956 },
        { reference_id: String(id), seller_id: seller.id, account: 'BLOCKED', amount_cents: -956 },
      ]),
    );
    expect((await transitions.runDueWork(new Date(Date.now() + 31 * 86_400_000), null)).releasedReserves).toBe(0); // released once
  });

  it('CREDIT_CARD: a failed charge (test card …0119) can be paid by the retry; a refused one is final', async () => {
    const seller = await createSeller(t);
    const failed = await createSale(t, seller, saleBody('CREDIT_CARD', { card: card('4000000000000119') }));
    expect(failed.status).toBe('FALHA');
    await walk(seller, failed.id, [['PAYMENT_CONFIRMED', 'PAGO', 8606, 956]]);
    const refused = await createSale(t, seller, saleBody('CREDIT_CARD', { card: card('4000000000000002') }));
    expect(refused.status).toBe('RECUSADO');
    const response = await sendEvent(t, seller, refused.id, 'PAYMENT_CONFIRMED');
    expect(response.status).toBe(409);
  });

  it('DEBIT_CARD: chargeback applies to debit cards too', async () => {
    const seller = await createSeller(t);
    const sale = await createSale(t, seller, saleBody('DEBIT_CARD'));
    expect(await balanceOf(t, seller)).toEqual({ available: 8786, blocked: 976, total: 9762 });
    await walk(seller, sale.id, [['CHARGEBACK_OPENED', 'CHARGEBACK', 7286, 976]]);
  });

  describe('refused moves answer 409 INVALID_TRANSITION and change nothing', () => {
    const cases: Array<[string, string, string[], string]> = [
      ['PIX', 'PIX', ['PAYMENT_CONFIRMED'], 'CHARGEBACK_OPENED'],
      ['card', 'CREDIT_CARD', [], 'MED_OPENED'],
      ['boleto', 'BOLETO', ['PAYMENT_CONFIRMED'], 'MED_OPENED'],
      ['transfer', 'TRANSFER', ['PAYMENT_CONFIRMED'], 'CHARGEBACK_OPENED'],
      ['PAGO', 'PIX', ['PAYMENT_CONFIRMED'], 'PAYMENT_CONFIRMED'],
      ['PAGO', 'PIX', ['PAYMENT_CONFIRMED'], 'EXPIRED'],
      ['PENDENTE', 'PIX', [], 'REFUNDED'],
      ['PENDENTE', 'PIX', [], 'MED_WON'],
      ['CANCELADO (final)', 'PIX', ['CANCELLED'], 'PAYMENT_CONFIRMED'],
      ['ESTORNADO (final)', 'PIX', ['PAYMENT_CONFIRMED', 'REFUNDED'], 'REFUNDED'],
      ['ESTORNADO (final)', 'CREDIT_CARD', ['REFUNDED'], 'CHARGEBACK_OPENED'],
      ['MED', 'PIX', ['PAYMENT_CONFIRMED', 'MED_OPENED'], 'REFUNDED'],
      ['CHARGEBACK', 'CREDIT_CARD', ['CHARGEBACK_OPENED'], 'MED_LOST'],
    ];
    it.each(cases)('%s (%s) after %j refuses %s', async (_name, method, before, refused) => {
      const seller = await createSeller(t);
      const sale = await createSale(t, seller, saleBody(method as 'PIX'));
      for (const event of before) expect((await sendEvent(t, seller, sale.id, event)).status).toBe(200);
      const balance = await balanceOf(t, seller);
      const statusBefore = (await t.http.get(`/api/transactions/${sale.id}`).set(seller.headers)).body.status;

      const response = await sendEvent(t, seller, sale.id, refused);

      expect(response.status).toBe(409);
      expect(response.body).toEqual({ message: expect.any(String), error: 'INVALID_TRANSITION' });
      expect(await balanceOf(t, seller)).toEqual(balance);
      expect((await t.http.get(`/api/transactions/${sale.id}`).set(seller.headers)).body.status).toBe(statusBefore);
    });
  });

  it('answers the events route 403 for another seller’s sale, 404 unknown, 400 for an unknown event', async () => {
    const seller = await createSeller(t);
    const other = await createSeller(t);
    const sale = await createSale(t, seller, saleBody('PIX'));
    expect((await sendEvent(t, other, sale.id, 'PAYMENT_CONFIRMED')).status).toBe(403);
    expect((await sendEvent(t, seller, 99999999, 'PAYMENT_CONFIRMED')).status).toBe(404);
    const bad = await sendEvent(t, seller, sale.id, 'PAID');
    expect(bad.status).toBe(400);
    expect(bad.body.details.field).toBe('event');
  });

  it('expires PIX and boletos through the scheduler at a given now, for this seller only', async () => {
    const seller = await createSeller(t);
    const other = await createSeller(t);
    const pix = await createSale(t, seller, saleBody('PIX', { pix: { expiresInDays: 1 } }));
    const forever = await createSale(t, seller, saleBody('PIX'));
    const boleto = await createSale(t, seller, saleBody('BOLETO', { boleto: { expiresInDays: 1 } }));
    const othersPix = await createSale(t, other, saleBody('PIX', { pix: { expiresInDays: 1 } }));

    const soon = await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({ now: new Date().toISOString() }).expect(200);
    expect(soon.body.expiredSales).toBe(0);

    const later = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const run = await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({ now: later }).expect(200);
    expect(run.body).toEqual({ now: later, expiredSales: 2, releasedReserves: 0, recoveredCharges: 0, refundedCharges: 0, sentPayouts: 0, recoveredPayouts: 0, subscriptions: { renewals: 0, retries: 0, cancelled: 0, pastDue: 0 }, automaticPix: { chargesSent: 0, chargesSettled: 0, retriesAsked: 0, authorizationsChanged: 0 } });

    const status = async (who: TestSeller, id: number) => (await t.http.get(`/api/transactions/${id}`).set(who.headers)).body.status;
    expect(await status(seller, pix.id)).toBe('CANCELADO');
    expect(await status(seller, boleto.id)).toBe('CANCELADO');
    expect(await status(seller, forever.id)).toBe('PENDENTE');
    expect(await status(other, othersPix.id)).toBe('PENDENTE');
  });

  it('refuses a scheduler run with a bad now', async () => {
    const seller = await createSeller(t);
    const response = await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({ now: 'tomorrow' }).expect(400);
    expect(response.body.details.field).toBe('now');
  });
});
