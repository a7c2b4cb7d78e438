import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ApiPixSimulator } from './setup/api-pix';
import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { balanceOf, createSale, saleBody, sendEvent } from './setup/sales';
import { eventually } from './setup/processes';
import { GatewayOnPsp, startGatewayOnPsp } from './setup/psp-gateway';
import { TestApp } from './setup/test-app';

const run = promisify(execFile);

/**
 * Issue 35: on the real PIX rail, money moves only on the PSP's evidence. The sandbox's routes cannot move
 * a sale the PSP holds; a return the PSP makes on its own (a MED) reverses its part of the sale, whether
 * notified or found by reconciliation alone; reconciliation reports every sale held as paid whose Pix the
 * PSP does not have; ledger:verify proves every paid sale backed by its provider's record.
 */
describe('PIX rail: money moves only on the PSP’s evidence (issue 35)', () => {
  let gateway: GatewayOnPsp;
  let psp: ApiPixSimulator;
  let t: TestApp;
  let seller: TestSeller;

  beforeAll(async () => {
    gateway = await startGatewayOnPsp({ API_PIX_RETURNS_SWEEP_SECONDS: '1' });
    ({ psp, t } = gateway);
    seller = await createSeller(t);
    await eventually(async () => psp.webhookUrl(gateway.receiverKey), (url) => url !== undefined, 'the webhook registration');
  });

  afterAll(() => gateway.close());

  afterEach(() => expect(psp.violations).toEqual([]));

  const transaction = async (id: number) => (await t.http.get(`/api/transactions/${id}`).set(seller.headers).expect(200)).body;
  const refundsOf = async (id: number) => (await t.http.get(`/api/sales/${id}/refunds`).set(seller.headers).expect(200)).body;
  const paidPixSale = async (amount: number) => {
    const sale = await createSale(t, seller, saleBody('PIX', { amount }));
    const pix = await psp.pay((await transaction(sale.id)).externalTransactionId);
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'PAGO', 'the sale paid');
    return { sale, pix };
  };
  const report = async () =>
    (
      await t.http
        .get('/admin/reconciliation')
        .query({ from: new Date(Date.now() - 3600_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() })
        .set(adminHeaders)
        .expect(200)
    ).body as { differences: Array<{ kind: string; saleId: number | null; endToEndId: string | null; amount: number; detail: string | null }> };
  const verify = () =>
    run(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/ledger/ledger-verify.ts'], { env: { ...process.env, DATABASE_URL: process.env.E2E_DATABASE_URL, LOG_FILE: undefined } }).then(
      ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );

  it('the sandbox’s events route refuses every event on a sale the PSP holds (422 naming api-pix) and moves neither the sale nor the balance', async () => {
    const unpaid = await createSale(t, seller, saleBody('PIX', { amount: 5000 }));
    const before = await balanceOf(t, seller);
    const answer = await sendEvent(t, seller, unpaid.id, 'PAYMENT_CONFIRMED');
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({ message: expect.stringContaining('held by the provider api-pix'), error: 'NOT_SUPPORTED' });
    expect((await transaction(unpaid.id)).status).toBe('PENDENTE');
    expect(await balanceOf(t, seller)).toEqual(before);
    // No cashout of money nobody paid: the balance is what it was.
    const { sale: paid } = await paidPixSale(3000);
    const afterPaid = await balanceOf(t, seller);
    for (const event of ['REFUNDED', 'MED_OPENED', 'MED_LOST', 'CHARGEBACK_OPENED']) {
      const refused = await sendEvent(t, seller, paid.id, event);
      expect({ event, status: refused.status, error: refused.body.error }).toEqual({ event, status: 422, error: 'NOT_SUPPORTED' });
    }
    expect((await transaction(paid.id)).status).toBe('PAGO');
    expect(await balanceOf(t, seller)).toEqual(afterPaid);
    // A plain PIX subscription does not become ACTIVE on a first charge nobody paid.
    const subscribed = await t.http
      .post('/api/sales')
      .set(seller.headers)
      .send(saleBody('PIX', { amount: 4990, subscription: { enabled: true, billingCycle: 'MONTHLY' } }))
      .expect(201);
    expect((await sendEvent(t, seller, subscribed.body.sale.id, 'PAYMENT_CONFIRMED')).status).toBe(422);
    const subscription = (await t.http.get(`/api/subscriptions/${subscribed.body.sale.subscription.id}`).set(seller.headers).expect(200)).body.data;
    expect(subscription.status).toBe('PENDING');
    // The sandbox still plays the records it holds: a card sale under PAYMENT_PROVIDER=sandbox.
    const cardSale = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 2000 }));
    expect((await sendEvent(t, seller, cardSale.id, 'CHARGEBACK_OPENED')).status).toBe(200);
  });

  it('a burst of 30 sandbox confirmations: all refused on the PSP’s sale; on the sandbox’s own, paid once, one record, one posting', async () => {
    const real = await createSale(t, seller, saleBody('PIX', { amount: 2200 }));
    const own = await createSale(t, seller, saleBody('BOLETO', { amount: 2300 }));
    const before = await balanceOf(t, seller);
    const burst = (id: number) => Promise.all(Array.from({ length: 30 }, () => sendEvent(t, seller, id, 'PAYMENT_CONFIRMED')));
    const [onReal, onOwn] = await Promise.all([burst(real.id), burst(own.id)]);
    expect(onReal.map((answer) => answer.status)).toEqual(Array(30).fill(422));
    expect(onOwn.map((answer) => answer.status).sort()).toEqual([200, ...Array(29).fill(409)]);
    expect((await transaction(real.id)).status).toBe('PENDENTE');
    const records = await t.db.query(`SELECT sale_id FROM sandbox_payments WHERE sale_id = ANY($1) ORDER BY sale_id`, [[real.id, own.id]]);
    expect(records).toEqual([{ sale_id: own.id }]);
    const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM ledger_postings WHERE reference_type = 'SALE' AND reference_id = ANY($1) AND kind = 'SALE_PAID'`, [[real.id, own.id]]);
    expect(n).toBe(1);
    const net = Number((await t.db.query(`SELECT net_amount_cents FROM sales WHERE id = $1`, [own.id]))[0].net_amount_cents);
    expect((await balanceOf(t, seller)).available - before.available).toBe(net);
  });

  it('the sandbox’s refund route refuses what is not a held refund of the seller’s: a bad id, an unknown one, another event, a body that is not JSON', async () => {
    const refunds = (id: string) => t.http.post(`/api/sandbox/refunds/${id}/events`).set(seller.headers);
    expect((await refunds('abc').send({ event: 'FAILED' })).body.error).toBe('INVALID_ID');
    expect((await refunds('999999999').send({ event: 'FAILED' })).status).toBe(404);
    expect((await refunds('1').send({ event: 'REFUNDED' })).status).toBe(400);
    expect((await refunds('1').set('Content-Type', 'text/plain').send('{"event":"FAILED"}')).status).toBe(415);
    // A refund of the PSP's sale is not the sandbox's to settle.
    const { sale } = await paidPixSale(3013);
    psp.autoSettleRefunds(null);
    const pending = (await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({}).expect(201)).body;
    const answer = await refunds(String(pending.id)).send({ event: 'COMPLETED' });
    expect(answer.status).toBe(422);
    expect(answer.body.error).toBe('NOT_SUPPORTED');
    expect((await refundsOf(sale.id)).refunds[0].status).toBe('PENDING');
  });

  it('the sandbox’s clock does not run ahead over the PSP’s records: a future `now` is refused (422) and the real PIX sale stays payable', async () => {
    const sale = await createSale(t, seller, saleBody('PIX', { amount: 1500, pix: { expiresInDays: 1 } }));
    const ahead = await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({ now: new Date(Date.now() + 31 * 86_400_000).toISOString() });
    expect(ahead.status).toBe(422);
    expect(ahead.body).toEqual({ error: 'NOT_SUPPORTED', message: expect.stringContaining('api-pix') });
    expect((await transaction(sale.id)).status).toBe('PENDENTE');
    // The real clock still runs the jobs: nothing of this sale is due yet.
    expect((await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({}).expect(200)).body.expiredSales).toBe(0);
    expect((await transaction(sale.id)).status).toBe('PENDENTE');
  });

  it('a MED return the PSP makes on its own, notified, reverses the whole sale: ESTORNADO, the net taken back, nothing left to refund', async () => {
    const { sale, pix } = await paidPixSale(10000);
    const before = await balanceOf(t, seller);
    const net = Number((await t.db.query(`SELECT net_amount_cents FROM sales WHERE id = $1`, [sale.id]))[0].net_amount_cents);
    const returned = await psp.returnOnItsOwn(pix.endToEndId, '100.00', { natureza: 'MED_FRAUDE' });
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'ESTORNADO', 'the sale reversed');
    expect(before.available - (await balanceOf(t, seller)).available).toBe(net);
    const refunds = await refundsOf(sale.id);
    expect(refunds).toMatchObject({ refundedAmount: 10000, refundableAmount: 0 });
    expect(refunds.refunds).toEqual([expect.objectContaining({ amount: 10000, status: 'COMPLETED', initiatedBy: 'PSP', nature: 'MED_FRAUDE' })]);
    const refused = await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 100 });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('SALE_NOT_REFUNDABLE');
    expect((await report()).differences).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'PSP_RETURN', saleId: sale.id, endToEndId: pix.endToEndId, amount: 10000 })]));
    expect((await report()).differences.find((d) => d.kind === 'PSP_RETURN' && d.saleId === sale.id)?.detail).toContain(returned.id);
    const metrics = await t.http.get('/metrics').set(adminHeaders).expect(200);
    expect(metrics.text).toMatch(/pix_reconciliation_differences_total\{kind="PSP_RETURN"\} [1-9]/);
    // Notified again and reconciled again: booked once.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await refundsOf(sale.id)).refunds).toHaveLength(1);
    expect(before.available - (await balanceOf(t, seller)).available).toBe(net);
  });

  it('a partial MED return found only by reconciliation (never notified) takes back its share and lowers what the seller may refund', async () => {
    const { sale, pix } = await paidPixSale(10000);
    const before = await balanceOf(t, seller);
    const net = Number((await t.db.query(`SELECT net_amount_cents FROM sales WHERE id = $1`, [sale.id]))[0].net_amount_cents);
    await psp.returnOnItsOwn(pix.endToEndId, '40.00', { natureza: 'MED_OPERACIONAL', notify: false });
    await eventually(() => refundsOf(sale.id), (body) => body.refunds.length === 1, 'reconciliation to book the return');
    expect(await refundsOf(sale.id)).toMatchObject({ refundedAmount: 4000, refundableAmount: 6000, refunds: [{ amount: 4000, initiatedBy: 'PSP', nature: 'MED_OPERACIONAL' }] });
    expect((await transaction(sale.id)).status).toBe('PAGO');
    expect(before.available - (await balanceOf(t, seller)).available).toBe(Math.floor((net * 4000) / 10000));
    // The seller may refund what is left, and no more (the PSP would refuse more).
    const tooMuch = await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 6001 });
    expect(tooMuch.status).toBe(422);
    psp.autoSettleRefunds('DEVOLVIDO');
    try {
      await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 6000 }).expect(201);
      await eventually(() => transaction(sale.id), (tx) => tx.status === 'ESTORNADO', 'the rest refunded');
    } finally {
      psp.autoSettleRefunds(null);
    }
    expect(before.available - (await balanceOf(t, seller)).available).toBe(net);
  });

  it('a MED return of the whole Pix while a seller refund never reached the PSP: the seller loses exactly the net, the refund is refused and gives back what it took', async () => {
    const { sale, pix } = await paidPixSale(10000);
    const before = await balanceOf(t, seller);
    const net = Number((await t.db.query(`SELECT net_amount_cents FROM sales WHERE id = $1`, [sale.id]))[0].net_amount_cents);
    // The refund's request does not get through (three tries, 503): it stays PENDING, unknown to the PSP.
    psp.failNext(3, { method: 'PUT', path: /\/devolucao\// });
    const pending = await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 4000 }).expect(201);
    expect(pending.body.status).toBe('PENDING');
    await psp.returnOnItsOwn(pix.endToEndId, '100.00', { natureza: 'MED_FRAUDE' });
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'ESTORNADO', 'the sale reversed by the PSP');
    expect((await refundsOf(sale.id)).refundableAmount).toBe(0);
    // The retry pass sends the refund again: the PSP refuses it (the Pix is returned in full already).
    await eventually(() => refundsOf(sale.id), (body) => body.refunds[0].status === 'FAILED', 'the pending refund refused', 45_000);
    expect(before.available - (await balanceOf(t, seller)).available).toBe(net);
    expect(await refundsOf(sale.id)).toMatchObject({ refundedAmount: 10000, refundableAmount: 0 });
  }, 60_000);

  it('reconciliation reports a sale held as paid whose Pix the PSP does not have, and ledger:verify fails on it, naming it', async () => {
    const planted = await createSale(t, seller, saleBody('PIX', { amount: 2500 }));
    const fake = await createSale(t, seller, saleBody('PIX', { amount: 2600 }));
    // Marked PAGO around the gateway's code, as the sandbox route could before: no Pix, or a Pix the PSP never had.
    await t.db.query(`UPDATE sales SET status = 'PAGO', completed_at = now() WHERE id = $1`, [planted.id]);
    await t.db.query(`UPDATE sales SET status = 'PAGO', completed_at = now(), pix_end_to_end_id = $2 WHERE id = $1`, [fake.id, `E${'9'.repeat(31)}`]);
    try {
      const differences = (await report()).differences;
      expect(differences).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ kind: 'NOT_AT_PSP', saleId: planted.id, endToEndId: null, amount: 2500 }),
          expect.objectContaining({ kind: 'NOT_AT_PSP', saleId: fake.id, endToEndId: `E${'9'.repeat(31)}`, amount: 2600 }),
        ]),
      );
      const failure = await verify();
      expect(failure.code).toBe(1);
      expect(failure.stderr).toContain(`sale ${planted.id} (api-pix): held as paid with no Pix named`);
      expect(failure.stderr).toContain(`sale ${fake.id} (api-pix): no Pix confirmed by the PSP with its end-to-end id and amount`);
    } finally {
      await t.db.query(`UPDATE sales SET status = 'PENDENTE', completed_at = NULL, pix_end_to_end_id = NULL WHERE id = ANY($1)`, [[planted.id, fake.id]]);
    }
    const ok = await verify();
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toMatch(/sales held as paid, by provider: .*api-pix \d+/);
    expect(ok.stdout).toMatch(/returns of PSP sales compared with the ledger: [1-9]\d* returns/);
    expect(ok.code).toBe(0);
  }, 90_000);
});
