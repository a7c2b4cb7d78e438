import { verifySignature } from '../../src/domain/postback-signature';
import { createSeller, TestSeller } from './setup/factories';
import { eventually } from './setup/processes';
import { Receiver } from './setup/receiver';
import { balanceOf, createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

/**
 * Issue 21: refunds sellers make, through the sandbox acquirer and the sandbox PIX provider. Full and
 * partial, several partials up to the sale, never more than the sale under concurrent requests, the
 * seller's part proportional with no rounding drift, and the sales family's refusals.
 */
describe('POST/GET /api/sales/{id}/refunds (issue 21)', () => {
  let t: TestApp;
  let seller: TestSeller;

  beforeAll(async () => {
    t = await startApp();
    seller = await createSeller(t);
  });
  afterAll(() => t.close());

  const refund = (saleId: number, body: Record<string, unknown> = {}, who = seller) => t.http.post(`/api/sales/${saleId}/refunds`).set(who.headers).send(body);
  const netOf = async (saleId: number) => Number((await t.db.query(`SELECT net_amount_cents FROM sales WHERE id = $1`, [saleId]))[0].net_amount_cents);
  const statusOf = async (saleId: number) => (await t.http.get(`/api/transactions/${saleId}`).set(seller.headers).expect(200)).body.status;

  it('refunds a card sale in three partials whose debits add up to exactly its net amount, then ESTORNADO', async () => {
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 9999, postbackUrl: 'https://example.com/hooks' }));
    expect(sale.status).toBe('PAGO');
    const net = await netOf(sale.id);
    const before = await balanceOf(t, seller);

    const first = await refund(sale.id, { amount: 3333 }).expect(201);
    expect(first.body).toMatchObject({ saleId: sale.id, amount: 3333, status: 'COMPLETED', failureReason: null });
    expect(await statusOf(sale.id)).toBe('PAGO');
    await refund(sale.id, { amount: 3333 }).expect(201);
    const last = await refund(sale.id).expect(201);
    expect(last.body.amount).toBe(3333);

    const after = await balanceOf(t, seller);
    expect(before.total - after.total).toBe(net);
    expect(await statusOf(sale.id)).toBe('ESTORNADO');
    const list = await t.http.get(`/api/sales/${sale.id}/refunds`).set(seller.headers).expect(200);
    expect(list.body).toMatchObject({ refundedAmount: 9999, refundableAmount: 0 });
    expect(list.body.refunds.map((r: { status: string }) => r.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    // Each refund's change is a signed postback on the sale's key, before the sale's own move to ESTORNADO.
    const events: Array<{ type: string; status: string }> = await t.db.query(
      `SELECT payload->>'type' AS type, payload->>'status' AS status FROM outbox_events WHERE aggregate_key = $1 ORDER BY id`,
      [`sale:${sale.id}`],
    );
    expect(events.filter((e) => e.type === 'refund.status_changed').map((e) => e.status)).toEqual(['PENDING', 'COMPLETED', 'PENDING', 'COMPLETED', 'PENDING', 'COMPLETED']);
    expect(events[events.length - 1]).toEqual({ type: 'transaction.status_changed', status: 'ESTORNADO' });
    await refund(sale.id, { amount: 1 }).expect(409).expect(({ body }) => expect(body.error).toBe('SALE_NOT_REFUNDABLE'));
  });

  it('never refunds more than the sale when refunds are asked for at once', async () => {
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 10000 }));
    const answers = await Promise.all(Array.from({ length: 8 }, () => refund(sale.id, { amount: 2500 })));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([201, 201, 201, 201, 422, 422, 422, 422]);
    for (const answer of answers.filter((a) => a.status === 422)) expect(answer.body.error).toBe('REFUND_EXCEEDS_REMAINING');
    const charged: Array<{ sum: string }> = await t.db.query(`SELECT sum(amount_cents) AS sum FROM sandbox_card_refunds WHERE reference = $1`, [String(sale.id)]);
    expect(Number(charged[0].sum)).toBe(10000);
    expect(await statusOf(sale.id)).toBe('ESTORNADO');
  });

  it('refunds a PIX sale through the PIX provider to COMPLETED with a signed postback, and replays a refund asked again with its Idempotency-Key', async () => {
    const receiver = await Receiver.start();
    const sale = await createSale(t, seller, saleBody('PIX', { amount: 5000, postbackUrl: `${receiver.url}/refunds` }));
    expect((await sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED')).status).toBe(200);
    const first = await refund(sale.id, { amount: 2000 }).set('Idempotency-Key', `rf-${sale.id}`).expect(201);
    const again = await refund(sale.id, { amount: 2000 }).set('Idempotency-Key', `rf-${sale.id}`).expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    await refund(sale.id, { amount: 2500 }).set('Idempotency-Key', `rf-${sale.id}`).expect(422).expect(({ body }) => expect(body.error).toBe('IDEMPOTENCY_KEY_REUSED'));
    const list = await t.http.get(`/api/sales/${sale.id}/refunds`).set(seller.headers).expect(200);
    expect(list.body).toMatchObject({ refundedAmount: 2000, refundableAmount: 3000 });
    expect(list.body.refunds).toHaveLength(1);
    const settled = await eventually(
      () => t.http.get(`/api/sales/${sale.id}/refunds`).set(seller.headers).expect(200).then((r) => r.body.refunds[0]),
      (r) => r.status !== 'PENDING',
      'the PIX refund settled',
    );
    expect(settled).toMatchObject({ id: first.body.id, status: 'COMPLETED', failureReason: null, completedAt: expect.any(String) });
    // Its postbacks reach the sale's receiver, signed: PENDING then COMPLETED.
    try {
      const delivered = await receiver.waitFor((r) => r.some((one) => one.body.type === 'refund.status_changed' && one.body.status === 'COMPLETED'));
      const refundEvents = delivered.filter((one) => one.body.type === 'refund.status_changed');
      expect(refundEvents.map((one) => [one.body.previousStatus, one.body.status])).toEqual([
        [null, 'PENDING'],
        ['PENDING', 'COMPLETED'],
      ]);
      for (const one of refundEvents) {
        expect(one.body.data).toMatchObject({ id: first.body.id, saleId: sale.id, amount: 2000 });
        expect(verifySignature(seller.postbackSecret, one.rawBody, String(one.headers['x-signature']), Math.floor(Date.now() / 1000))).toBe(true);
      }
    } finally {
      await receiver.close();
    }
  });

  it('refunds a PIX sale 89 days after its payment and refuses it REFUND_WINDOW_EXPIRED at 91 (the BCB’s 90-day window, not the card’s 180)', async () => {
    const sale = await createSale(t, seller, saleBody('PIX', { amount: 3000 }));
    expect((await sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED')).status).toBe(200);
    await t.db.query(`UPDATE sales SET completed_at = now() - interval '91 days' WHERE id = $1`, [sale.id]);
    await refund(sale.id, { amount: 1000 })
      .expect(422)
      .expect(({ body }) => expect(body).toEqual({ error: 'REFUND_WINDOW_EXPIRED', message: expect.stringContaining('90 days') }));
    expect(await statusOf(sale.id)).toBe('PAGO');
    await t.db.query(`UPDATE sales SET completed_at = now() - interval '89 days' WHERE id = $1`, [sale.id]);
    await refund(sale.id, { amount: 1000 }).expect(201);
  });

  it('refuses what cannot be refunded, in the sales family shape', async () => {
    const pending = await createSale(t, seller, saleBody('PIX'));
    await refund(pending.id).expect(409).expect(({ body }) => expect(body).toMatchObject({ error: 'SALE_NOT_REFUNDABLE', message: expect.stringContaining('PENDENTE') }));
    const paid = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 4000 }));
    await refund(paid.id, { amount: 4001 }).expect(422).expect(({ body }) => expect(body.error).toBe('REFUND_EXCEEDS_REMAINING'));
    for (const amount of [0, -5, 1.5, '100']) await refund(paid.id, { amount }).expect(400).expect(({ body }) => expect(body.error).toBe('VALIDATION_ERROR'));
    const stranger = await createSeller(t);
    await refund(paid.id, {}, stranger).expect(403);
    await refund(2_000_000_000).expect(404);
    await t.db.query(`UPDATE sales SET completed_at = now() - interval '181 days' WHERE id = $1`, [paid.id]);
    await refund(paid.id).expect(422).expect(({ body }) => expect(body.error).toBe('REFUND_WINDOW_EXPIRED'));
    const boleto = await createSale(t, seller, saleBody('BOLETO'));
    expect((await sendEvent(t, seller, boleto.id, 'PAYMENT_CONFIRMED')).status).toBe(200);
    await refund(boleto.id).expect(409).expect(({ body }) => expect(body.error).toBe('SALE_NOT_REFUNDABLE'));
  });

  it('gives the seller its money back when the acquirer refuses the refund', async () => {
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 6000 }));
    const before = await balanceOf(t, seller);
    // The acquirer already refunded part of the charge on its own: it refuses a refund of the whole.
    await t.db.query(`INSERT INTO sandbox_card_refunds (refund_id, reference, amount_cents) VALUES ($1, $2, 1000)`, [`OUTSIDE${sale.id}`, String(sale.id)]);
    const failed = await refund(sale.id).expect(201);
    expect(failed.body).toMatchObject({ status: 'FAILED', failureReason: expect.stringContaining('sandbox acquirer') });
    expect(await balanceOf(t, seller)).toEqual(before);
    const list = await t.http.get(`/api/sales/${sale.id}/refunds`).set(seller.headers).expect(200);
    expect(list.body).toMatchObject({ refundedAmount: 0, refundableAmount: 6000 });
    expect(await statusOf(sale.id)).toBe('PAGO');
  });
});
