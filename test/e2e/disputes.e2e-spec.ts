import { randomBytes, randomUUID } from 'node:crypto';
import { RefundsService } from '../../src/payments/refunds.service';
import { ApiPixSimulator, makeCertificates, PixCertificates } from './setup/api-pix';
import { createSeller, TestSeller } from './setup/factories';
import { eventually, freePort } from './setup/processes';
import { balanceOf, createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const RECEIVER_KEY = randomUUID();
const CLIENT_ID = 'gateway-e2e';
const CLIENT_SECRET = randomBytes(16).toString('hex');

/**
 * Issue 35, M2 and L1: a MED or a chargeback closes on what its opening covered, recorded on the sale,
 * whatever refunds do meanwhile. The PIX refund fails at the API Pix simulator (NAO_REALIZADO); the MED
 * events come through the sandbox route (on an api-pix sale they would come from the PSP once the
 * sandbox acts only on its own records). The card refund is held PENDING by the sandbox acquirer being
 * unreachable (its charge row locked past the lock timeout), then completed by the retry pass.
 */
describe('disputes computed from what they blocked (issue 35, M2 and L1)', () => {
  let certs: PixCertificates;
  let psp: ApiPixSimulator;
  let t: TestApp;

  beforeAll(async () => {
    certs = await makeCertificates();
    psp = await ApiPixSimulator.start({ certs, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, receiverKey: RECEIVER_KEY });
    const port = await freePort();
    t = await startApp({
      PIX_PROVIDER: 'api-pix',
      API_PIX_BASE_URL: psp.baseUrl,
      API_PIX_TOKEN_URL: psp.tokenUrl,
      API_PIX_CLIENT_ID: CLIENT_ID,
      API_PIX_CLIENT_SECRET: CLIENT_SECRET,
      API_PIX_CERT_FILE: certs.clientCertFile,
      API_PIX_KEY_FILE: certs.clientKeyFile,
      API_PIX_CA_FILE: certs.caFile,
      API_PIX_RECEIVER_KEY: RECEIVER_KEY,
      API_PIX_WEBHOOK_URL: `http://127.0.0.1:${port}/psp/notifications/${randomBytes(16).toString('hex')}`,
      API_PIX_RECONCILE_SECONDS: '1',
      API_PIX_TIMEOUT_MS: '1500',
      DB_LOCK_TIMEOUT_MS: '1000',
    });
    await t.app.listen(port, '127.0.0.1');
  });

  afterAll(async () => {
    await t.close();
    await psp.close();
  });

  afterEach(() => expect(psp.violations).toEqual([]));

  const transaction = async (seller: TestSeller, id: number) => (await t.http.get(`/api/transactions/${id}`).set(seller.headers).expect(200)).body;
  const refunds = async (seller: TestSeller, id: number) => (await t.http.get(`/api/sales/${id}/refunds`).set(seller.headers).expect(200)).body;
  const paidPixSale = async (seller: TestSeller, amount: number) => {
    const sale = await createSale(t, seller, saleBody('PIX', { amount }));
    await psp.pay((await transaction(seller, sale.id)).externalTransactionId);
    await eventually(() => transaction(seller, sale.id), (tx) => tx.status === 'PAGO', 'the PIX sale paid');
    return sale;
  };
  const event = async (seller: TestSeller, id: number, name: string) => {
    const answer = await sendEvent(t, seller, id, name);
    expect({ event: name, status: answer.status }).toEqual({ event: name, status: 200 });
    return answer.body;
  };

  /**
   * A seller, with other holds when asked (a card sale's reserve, another PIX sale in MED), then a PIX
   * sale of 100.00 (net 99.01) with a refund of 40.00 pending at the PSP, a MED opened on it (blocking
   * 59.41), and the refund refused by the PSP: 39.60 back to available.
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

    const refund = await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 4000 }).expect(201);
    expect(refund.body).toMatchObject({ amount: 4000, status: 'PENDING' });
    await event(seller, sale.id, 'MED_OPENED');
    expect(await balanceOf(t, seller)).toMatchObject({ available: before.available - 3960 - 5941, blocked: before.blocked + 5941 });

    await psp.settleRefunds('NAO_REALIZADO', { motivo: 'Conta do pagador encerrada' });
    await eventually(() => refunds(seller, sale.id), (body) => body.refunds[0].status === 'FAILED', 'the refund refused by the PSP');
    expect(await balanceOf(t, seller)).toMatchObject({ available: before.available - 5941, blocked: before.blocked + 5941 });
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

  it('M2: a refund refused during a MED, then MED_LOST: ESTORNADO, only the 59.41 it blocked leaves blocked, the other sales’ holds stay', async () => {
    const { seller, sale, other, before } = await medWithFailedRefund(true);
    const lost = await sendEvent(t, seller, sale.id, 'MED_LOST');
    expect(lost.status).toBe(200);
    expect(lost.body.status).toBe('ESTORNADO');
    // The MED took what it blocked; the refused refund's 39.60 stayed with the seller, in available.
    expect(await balanceOf(t, seller)).toEqual({ available: before.available - 5941, blocked: before.blocked, total: before.total - 5941 });
    const [posting] = await t.db.query(`SELECT blocked_delta_cents::int AS blocked FROM ledger_postings WHERE reference_type = 'SALE' AND reference_id = $1 AND kind = 'MED_LOST'`, [sale.id]);
    expect(posting).toEqual({ blocked: -5941 });
    // The other MED still holds its own net, and releases exactly it.
    const otherNet = Number((await t.db.query(`SELECT net_amount_cents FROM sales WHERE id = $1`, [other?.id]))[0].net_amount_cents);
    const released = await balanceOf(t, seller);
    await event(seller, (other as { id: number }).id, 'MED_WON');
    const after = await balanceOf(t, seller);
    expect([after.blocked - released.blocked, after.available - released.available]).toEqual([-otherNet, otherNet]);
  });

  it('L1: a card sale refunded in full while its chargeback is open ends ESTORNADO when the chargeback is reversed, its reserve back to available', async () => {
    const seller = await createSeller(t);
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 10000 }));
    expect(sale.status).toBe('PAGO');
    const paid = await balanceOf(t, seller);
    const { net_amount_cents: net, reserve_amount_cents: reserve } = (
      await t.db.query(`SELECT net_amount_cents::int, reserve_amount_cents::int FROM sales WHERE id = $1`, [sale.id])
    )[0];
    expect(paid).toMatchObject({ available: net - reserve, blocked: reserve });

    // The acquirer does not answer (its charge row held): the full refund stays PENDING.
    const acquirer = t.db.createQueryRunner();
    await acquirer.startTransaction();
    await acquirer.query(`SELECT 1 FROM sandbox_card_charges WHERE reference = $1 FOR UPDATE`, [String(sale.id)]);
    const refund = await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({}).expect(201);
    await acquirer.rollbackTransaction();
    await acquirer.release();
    expect(refund.body).toMatchObject({ amount: 10000, status: 'PENDING' });

    const fined = (await event(seller, sale.id, 'CHARGEBACK_OPENED')).status;
    expect(fined).toBe('CHARGEBACK');
    const fine = (await balanceOf(t, seller)).available - (paid.available - net);
    // The retry pass, 30 s later, completes the refund: the sale stays in its chargeback.
    await t.db.query(`UPDATE sale_refunds SET updated_at = now() - interval '1 minute' WHERE id = $1`, [refund.body.id]);
    await t.app.get(RefundsService).retryPending();
    expect((await refunds(seller, sale.id)).refunds.map((r: { status: string }) => r.status)).toEqual(['COMPLETED']);
    expect((await transaction(seller, sale.id)).status).toBe('CHARGEBACK');

    const reversed = await sendEvent(t, seller, sale.id, 'CHARGEBACK_REVERSED');
    expect(reversed.status).toBe(200);
    expect(reversed.body.status).toBe('ESTORNADO');
    expect(await refunds(seller, sale.id)).toMatchObject({ refundedAmount: 10000, refundableAmount: 0 });
    // The seller lost exactly the net it was credited and the fine; its reserve is no longer held.
    expect(await balanceOf(t, seller)).toEqual({ available: paid.total - net + fine, blocked: 0, total: paid.total - net + fine });
    expect(fine).toBeLessThan(0);
  });
});
