import { ApiPixSimulator } from './setup/api-pix';
import { createSeller, TestSeller } from './setup/factories';
import { eventually } from './setup/processes';
import { GatewayOnPsp, startGatewayOnPsp } from './setup/psp-gateway';
import { createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';
import { pixTxid } from '../../src/providers/pix-provider.port';

/**
 * Issue 37: the provider is a fact of each record. Two instances on one database, one with
 * PIX_PROVIDER=sandbox and one with PIX_PROVIDER=api-pix against the API Pix simulator (a rail's provider
 * changed): a sale keeps working with the provider that made it, new sales go to the rail's provider now,
 * the ledger books each sale's money with its own provider, and a record whose provider is not configured
 * on an instance is refused there with 409 naming it.
 */
describe('providers: every record keeps the provider that made it (issue 37)', () => {
  let sandbox: TestApp;
  let gateway: GatewayOnPsp;
  let psp: ApiPixSimulator;
  let t: TestApp;
  let seller: TestSeller;

  beforeAll(async () => {
    sandbox = await startApp({ PIX_PROVIDER: 'sandbox' });
    gateway = await startGatewayOnPsp();
    ({ psp, t } = gateway);
    seller = await createSeller(t);
    await eventually(async () => psp.webhookUrl(gateway.receiverKey), (url) => url !== undefined, 'the webhook registration');
  });

  afterAll(async () => {
    await gateway?.close();
    await sandbox?.close();
  });

  afterEach(() => expect(psp.violations).toEqual([]));

  const transaction = async (app: TestApp, id: number) => (await app.http.get(`/api/transactions/${id}`).set(seller.headers).expect(200)).body;
  const refundsOf = async (app: TestApp, id: number) => (await app.http.get(`/api/sales/${id}/refunds`).set(seller.headers).expect(200)).body;
  /** The provider named by each provider account a sale's postings moved, by account. */
  const providerAccounts = async (saleId: number) =>
    Object.fromEntries(
      (
        (await t.db.query(
          `SELECT account, array_agg(DISTINCT provider ORDER BY provider) AS providers FROM ledger_entries e JOIN ledger_postings p ON p.id = e.posting_id
            WHERE p.reference_type = 'SALE' AND p.reference_id = $1 AND e.provider IS NOT NULL GROUP BY account`,
          [saleId],
        )) as Array<{ account: string; providers: string[] }>
      ).map((row) => [row.account, row.providers]),
    );

  it('a PIX sale made under the sandbox is confirmed and refunded through the sandbox after the rail moved to the PSP, while new sales go to the PSP; each sale’s money is booked with its own provider', async () => {
    const old = await createSale(sandbox, seller, saleBody('PIX', { amount: 5000 }));
    expect((await transaction(sandbox, old.id)).externalTransactionId).toMatch(/^sbx_pix_/);

    // The instance whose PIX rail is the PSP: a new sale is the PSP's charge…
    const fresh = await createSale(t, seller, saleBody('PIX', { amount: 7000 }));
    const freshTx = await transaction(t, fresh.id);
    expect(freshTx.externalTransactionId).toBe(pixTxid(fresh.id));
    expect(psp.cob(pixTxid(fresh.id))).toMatchObject({ status: 'ATIVA', valor: { original: '70.00' } });
    // …and the sandbox's sale is confirmed there by the sandbox, which holds it.
    expect((await sendEvent(t, seller, old.id, 'PAYMENT_CONFIRMED')).status).toBe(200);
    expect((await transaction(t, old.id)).status).toBe('PAGO');
    await psp.pay(freshTx.externalTransactionId);
    await eventually(() => transaction(t, fresh.id), (tx) => tx.status === 'PAGO', 'the PSP’s sale paid');

    // The sandbox's sale is refunded through the sandbox: the PSP is asked for nothing.
    const refundsAtPspBefore = psp.refunds().length;
    await t.http.post(`/api/sales/${old.id}/refunds`).set(seller.headers).send({ amount: 20 }).expect(201);
    const settled = await eventually(() => refundsOf(t, old.id), (body) => body.refunds[0]?.status !== 'PENDING', 'the sandbox refund settled');
    expect(settled).toMatchObject({ refundedAmount: 20, refunds: [{ status: 'COMPLETED', amount: 20 }] });
    expect(psp.refunds()).toHaveLength(refundsAtPspBefore);
    // The PSP's sale is refunded through the PSP.
    await t.http.post(`/api/sales/${fresh.id}/refunds`).set(seller.headers).send({ amount: 10 }).expect(201);
    await eventually(async () => psp.refunds().filter((one) => one.e2eid === psp.cob(pixTxid(fresh.id))?.pix?.[0]?.endToEndId), (found) => found.length === 1, 'the devolução asked of the PSP');

    // The ledger names each sale's own provider on its provider accounts.
    expect(await providerAccounts(old.id)).toEqual({ PSP_HOLDINGS: ['sandbox'], REFUNDS_IN_TRANSIT: ['sandbox'] });
    expect(await providerAccounts(fresh.id)).toEqual({ PSP_HOLDINGS: ['api-pix'], REFUNDS_IN_TRANSIT: ['api-pix'] });
    const stored: Array<{ id: number; provider: string }> = await t.db.query(`SELECT id, provider FROM sales WHERE id = ANY($1::int[]) ORDER BY id`, [[old.id, fresh.id]]);
    expect(stored).toEqual([
      { id: old.id, provider: 'sandbox' },
      { id: fresh.id, provider: 'api-pix' },
    ]);
    const refunds: Array<{ sale_id: number; provider: string }> = await t.db.query(`SELECT sale_id, provider FROM sale_refunds WHERE sale_id = ANY($1::int[]) ORDER BY sale_id`, [[old.id, fresh.id]]);
    expect(refunds).toEqual([
      { sale_id: old.id, provider: 'sandbox' },
      { sale_id: fresh.id, provider: 'api-pix' },
    ]);
  });

  it('an instance where the sale’s provider is not configured refuses to act on it (409 naming the provider) and changes nothing', async () => {
    const sale = await createSale(t, seller, saleBody('PIX', { amount: 4000 }));
    await psp.pay((await transaction(t, sale.id)).externalTransactionId);
    await eventually(() => transaction(t, sale.id), (tx) => tx.status === 'PAGO', 'the PSP’s sale paid');
    const refused = await sandbox.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 100 });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: 'CONFLICT', message: expect.stringMatching(/^Sale \d+ is held by the provider api-pix, which is not configured for PIX on this gateway/) });
    expect(await refundsOf(t, sale.id)).toMatchObject({ refunds: [], refundedAmount: 0, refundableAmount: 4000 });
  });

  it('a notification through the API Pix intake naming a sandbox sale changes nothing (the Pix is returned as no sale’s), and the sandbox’s routes refuse a PSP’s sale', async () => {
    const sandboxSale = await createSale(sandbox, seller, saleBody('PIX', { amount: 2500 }));
    const pix = await psp.receiveUnknownPix('25.00', { txid: pixTxid(sandboxSale.id) });
    await eventually(
      async () => (await t.db.query(`SELECT outcome, sale_id FROM pix_receipts WHERE end_to_end_id = $1`, [pix.endToEndId]))[0],
      (row) => row !== undefined,
      'the notified Pix checked',
    );
    const [receipt] = await t.db.query(`SELECT outcome, sale_id, provider FROM pix_receipts WHERE end_to_end_id = $1`, [pix.endToEndId]);
    expect(receipt).toEqual({ outcome: 'UNMATCHED', sale_id: null, provider: 'api-pix' });
    expect((await transaction(t, sandboxSale.id)).status).toBe('PENDENTE');

    const pspSale = await createSale(t, seller, saleBody('PIX', { amount: 2600 }));
    const answer = await sendEvent(sandbox, seller, pspSale.id, 'PAYMENT_CONFIRMED');
    expect(answer.status).toBe(422);
    expect(answer.body.message).toContain('held by the provider api-pix');
    expect((await transaction(t, pspSale.id)).status).toBe('PENDENTE');
  });
});
