import { createSeller, TestSeller } from './setup/factories';
import { balanceOf, createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

/**
 * Issue 35, M2 and L1: a MED or a chargeback closes on what its opening covered, recorded on the sale,
 * whatever refunds do meanwhile. The sales are the sandbox's (a PIX sale's MED comes through the sandbox
 * events route, which acts only on the sandbox's own records); a refund of an amount whose cents are 13
 * is held PENDING by the sandbox until POST /api/sandbox/refunds/{id}/events settles it.
 */
describe('disputes computed from what they blocked (issue 35, M2 and L1)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });

  afterAll(async () => {
    await t.close();
  });

  const transaction = async (seller: TestSeller, id: number) => (await t.http.get(`/api/transactions/${id}`).set(seller.headers).expect(200)).body;
  const refunds = async (seller: TestSeller, id: number) => (await t.http.get(`/api/sales/${id}/refunds`).set(seller.headers).expect(200)).body;
  const paidPixSale = async (seller: TestSeller, amount: number) => {
    const sale = await createSale(t, seller, saleBody('PIX', { amount }));
    expect((await sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED')).body.status).toBe('PAGO');
    return sale;
  };
  const settleRefund = (seller: TestSeller, id: number, event: 'COMPLETED' | 'FAILED') =>
    t.http.post(`/api/sandbox/refunds/${id}/events`).set(seller.headers).send({ event }).expect(200);
  const event = async (seller: TestSeller, id: number, name: string) => {
    const answer = await sendEvent(t, seller, id, name);
    expect({ event: name, status: answer.status }).toEqual({ event: name, status: 200 });
    return answer.body;
  };

  /**
   * A seller, with other holds when asked (a card sale's reserve, another PIX sale in MED), then a PIX
   * sale of 100.00 (net 99.01) with a refund of 40.13 held pending (39.73 of the seller's), a MED opened on
   * it (blocking the 59.28 left), and the refund refused: 39.73 back to available.
   */
  const medWithFailedRefund = async (otherHolds: boolean) => {
    const seller = await createSeller(t);
    let other: { id: number } | null = null;
    if (otherHolds) {
      await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 20000 }));
      other = await paidPixSale(seller, 5000);
      await event(seller, other.id, 'MED_OPENED');
    }
    const sale = await paidPixSale(seller, 10000);
    const before = await balanceOf(t, seller);

    const refund = await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 4013 }).expect(201);
    expect(refund.body).toMatchObject({ amount: 4013, status: 'PENDING' });
    await event(seller, sale.id, 'MED_OPENED');
    expect(await balanceOf(t, seller)).toMatchObject({ available: before.available - 3973 - 5928, blocked: before.blocked + 5928 });

    expect((await settleRefund(seller, refund.body.id, 'FAILED')).body).toMatchObject({ id: refund.body.id, status: 'FAILED' });
    expect((await refunds(seller, sale.id)).refunds[0].status).toBe('FAILED');
    expect(await balanceOf(t, seller)).toMatchObject({ available: before.available - 5928, blocked: before.blocked + 5928 });
    return { seller, sale, other, before };
  };

  it('M2: a refund refused during a MED, then MED_WON: 200 (not 500), PAGO, blocked back to what it was before the MED and all 99.01 available', async () => {
    const { seller, sale, before } = await medWithFailedRefund(false);
    const won = await sendEvent(t, seller, sale.id, 'MED_WON');
    expect(won.status).toBe(200);
    expect(won.body.status).toBe('PAGO');
    expect(await balanceOf(t, seller)).toEqual(before);
    // Nothing was refunded in the end: all of it can be refunded again.
    expect(await refunds(seller, sale.id)).toMatchObject({ refundedAmount: 0, refundableAmount: 10000 });
    const sales = await t.db.query(`SELECT dispute_amount_cents, dispute_net_cents FROM sales WHERE id = $1`, [sale.id]);
    expect(sales).toEqual([{ dispute_amount_cents: null, dispute_net_cents: null }]);
  });

  it('M2: a refund refused during a MED, then MED_LOST: ESTORNADO, only the 59.28 it blocked leaves blocked, the other sales’ holds stay', async () => {
    const { seller, sale, other, before } = await medWithFailedRefund(true);
    const lost = await sendEvent(t, seller, sale.id, 'MED_LOST');
    expect(lost.status).toBe(200);
    expect(lost.body.status).toBe('ESTORNADO');
    // The MED took what it blocked; the refused refund's 39.73 stayed with the seller, in available.
    expect(await balanceOf(t, seller)).toEqual({ available: before.available - 5928, blocked: before.blocked, total: before.total - 5928 });
    const [posting] = await t.db.query(`SELECT blocked_delta_cents::int AS blocked FROM ledger_postings WHERE reference_type = 'SALE' AND reference_id = $1 AND kind = 'MED_LOST'`, [sale.id]);
    expect(posting).toEqual({ blocked: -5928 });
    // The other MED still holds its own net, and releases exactly it.
    const otherNet = Number((await t.db.query(`SELECT net_amount_cents FROM sales WHERE id = $1`, [other?.id]))[0].net_amount_cents);
    const released = await balanceOf(t, seller);
    await event(seller, (other as { id: number }).id, 'MED_WON');
    const after = await balanceOf(t, seller);
    expect([after.blocked - released.blocked, after.available - released.available]).toEqual([-otherNet, otherNet]);
  });

  it('L1: a card sale refunded in full while its chargeback is open ends ESTORNADO when the chargeback is reversed, its reserve back to available', async () => {
    const seller = await createSeller(t);
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 10013 }));
    expect(sale.status).toBe('PAGO');
    const paid = await balanceOf(t, seller);
    const { net_amount_cents: net, reserve_amount_cents: reserve } = (
      await t.db.query(`SELECT net_amount_cents::int, reserve_amount_cents::int FROM sales WHERE id = $1`, [sale.id])
    )[0];
    expect(paid).toMatchObject({ available: net - reserve, blocked: reserve });

    // A full refund of 100.13: the sandbox acquirer holds it PENDING.
    const refund = await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({}).expect(201);
    expect(refund.body).toMatchObject({ amount: 10013, status: 'PENDING' });

    const fined = (await event(seller, sale.id, 'CHARGEBACK_OPENED')).status;
    expect(fined).toBe('CHARGEBACK');
    const fine = (await balanceOf(t, seller)).available - (paid.available - net);
    // The acquirer makes the refund: the sale stays in its chargeback.
    expect((await settleRefund(seller, refund.body.id, 'COMPLETED')).body).toMatchObject({ status: 'COMPLETED' });
    expect((await refunds(seller, sale.id)).refunds.map((r: { status: string }) => r.status)).toEqual(['COMPLETED']);
    expect((await transaction(seller, sale.id)).status).toBe('CHARGEBACK');

    const reversed = await sendEvent(t, seller, sale.id, 'CHARGEBACK_REVERSED');
    expect(reversed.status).toBe(200);
    expect(reversed.body.status).toBe('ESTORNADO');
    expect(await refunds(seller, sale.id)).toMatchObject({ refundedAmount: 10013, refundableAmount: 0 });
    // The seller lost exactly the net it was credited and the fine; its reserve is no longer held.
    expect(await balanceOf(t, seller)).toEqual({ available: paid.total - net + fine, blocked: 0, total: paid.total - net + fine });
    expect(fine).toBeLessThan(0);
  });

  it('COMPLETED and FAILED sent at once on a refund the sandbox acquirer held: settled once, and the refund agrees with the acquirer’s record', async () => {
    const seller = await createSeller(t);
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 5013 }));
    const paid = await balanceOf(t, seller);
    const refund = (await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({}).expect(201)).body;
    const events = ['COMPLETED', 'FAILED', 'COMPLETED', 'FAILED', 'FAILED', 'COMPLETED', 'FAILED', 'COMPLETED'];
    const answers = await Promise.all(events.map((event) => t.http.post(`/api/sandbox/refunds/${refund.id}/events`).set(seller.headers).send({ event })));
    expect(answers.map((answer) => answer.status).filter((status) => status !== 200 && status !== 409)).toEqual([]);
    const [{ status, provider_refund_id: providerRefundId }] = await t.db.query(`SELECT status, provider_refund_id FROM sale_refunds WHERE id = $1`, [refund.id]);
    const records: Array<{ refused: boolean }> = await t.db.query(`SELECT refused FROM sandbox_card_refunds WHERE refund_id = $1`, [providerRefundId]);
    expect(records).toHaveLength(1);
    expect(status).toBe(records[0].refused ? 'FAILED' : 'COMPLETED');
    // Refused: the seller has back what the refund took; made: the sale is refunded in full.
    if (status === 'FAILED') expect(await balanceOf(t, seller)).toEqual(paid);
    else expect((await transaction(seller, sale.id)).status).toBe('ESTORNADO');
  });

  it('a refund failing between two others leaves no rounding drift: refunded in full, the seller loses exactly the net', async () => {
    const seller = await createSeller(t);
    const sale = await paidPixSale(seller, 10000);
    const paid = await balanceOf(t, seller);
    const net = Number((await t.db.query(`SELECT net_amount_cents FROM sales WHERE id = $1`, [sale.id]))[0].net_amount_cents);
    const first = (await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 4013 }).expect(201)).body;
    await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 5987 }).expect(201);
    await settleRefund(seller, first.id, 'FAILED');
    const again = (await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 4013 }).expect(201)).body;
    await settleRefund(seller, again.id, 'COMPLETED');
    expect((await transaction(seller, sale.id)).status).toBe('ESTORNADO');
    expect(paid.available - (await balanceOf(t, seller)).available).toBe(net);
  });
});
