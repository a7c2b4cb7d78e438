import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { eventually } from './setup/processes';
import { createSale, saleBody } from './setup/sales';
import { SecondAcquirer, secondAcquirer } from './setup/second-acquirer/second-acquirer';
import { startApp, TestApp } from './setup/test-app';

const RECOVERY_AFTER_SECONDS = 2;

/**
 * Issue 37: a provider is a plug-in. A second sandbox acquirer (test/e2e/setup/second-acquirer), known
 * only to this test, is registered with createApp's `providers` and named by CARD_PROVIDER: it takes the
 * card sales, their refunds, the recovery of a charge whose answer was lost, and a notification through
 * the one intake, with no code of the gateway written for it.
 */
describe('a provider plugs in: a second acquirer registered only by the test (issue 37)', () => {
  let t: TestApp;
  let acquirer: SecondAcquirer;
  let seller: TestSeller;
  const secret = randomBytes(16).toString('hex');

  beforeAll(async () => {
    const plugin = secondAcquirer(secret);
    acquirer = plugin.acquirer;
    t = await startApp({ CARD_PROVIDER: 'acquirer-b', PROVIDER_RECOVERY_AFTER_SECONDS: String(RECOVERY_AFTER_SECONDS) }, { providers: [plugin.adapters] });
    seller = await createSeller(t);
  });

  afterAll(() => t?.close());

  const transaction = async (id: number) => (await t.http.get(`/api/transactions/${id}`).set(seller.headers).expect(200)).body;
  const stored = async (id: number) => (await t.db.query(`SELECT provider FROM sales WHERE id = $1`, [id]))[0].provider as string;

  it('takes a card sale and its refund: the sale, the refund and the ledger’s acquirer account name acquirer-b', async () => {
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 8000 }));
    expect(sale.status).toBe('PAGO');
    expect(await stored(sale.id)).toBe('acquirer-b');
    expect(acquirer.charge(String(sale.id))).toMatchObject({ outcome: 'APPROVED', amountCents: 8000 });
    expect((await transaction(sale.id)).externalTransactionId).toBe(acquirer.charge(String(sale.id))?.externalId);

    const refund = await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 3000 }).expect(201);
    const settled = await eventually(
      async () => (await t.http.get(`/api/sales/${sale.id}/refunds`).set(seller.headers).expect(200)).body,
      (body) => body.refunds[0]?.status === 'COMPLETED',
      'the refund completed by acquirer-b',
    );
    expect(settled).toMatchObject({ refundedAmount: 3000, refundableAmount: 5000, refunds: [{ id: refund.body.id, status: 'COMPLETED', amount: 3000 }] });
    expect(acquirer.calls).toContain(`refund ${sale.id} 3000`);
    const [row] = await t.db.query(`SELECT provider FROM sale_refunds WHERE id = $1`, [refund.body.id]);
    expect(row.provider).toBe('acquirer-b');
    const accounts: Array<{ provider: string }> = await t.db.query(
      `SELECT DISTINCT e.provider FROM ledger_entries e JOIN ledger_postings p ON p.id = e.posting_id WHERE p.reference_type = 'SALE' AND p.reference_id = $1 AND e.provider IS NOT NULL`,
      [sale.id],
    );
    expect(accounts).toEqual([{ provider: 'acquirer-b' }]);
    // A card it refuses is RECUSADO, as any acquirer's.
    expect((await createSale(t, seller, saleBody('CREDIT_CARD', { card: { ...saleBody('CREDIT_CARD').card as object, number: '4000000000000002' } }))).status).toBe('RECUSADO');
  });

  it('a charge whose answer was lost stays EM_PROCESSAMENTO until the recovery job asks acquirer-b, and is charged once', async () => {
    acquirer.loseAnswers(1);
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 4200 }));
    expect(sale.status).toBe('EM_PROCESSAMENTO');
    await sleep(RECOVERY_AFTER_SECONDS * 1000 + 300);
    const run = (await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({}).expect(200)).body;
    expect(run.recoveredCharges).toBeLessThanOrEqual(1); // the every-minute job may have done it first
    expect((await transaction(sale.id)).status).toBe('PAGO');
    expect(acquirer.calls.filter((call) => call === `charge ${sale.id}`)).toHaveLength(1);
    expect(acquirer.calls).toContain(`find ${sale.id}`);
  });

  it('a notification through the one intake settles a charge at once by asking acquirer-b; one naming another provider’s sale or not a notification changes nothing', async () => {
    acquirer.loseAnswers(1);
    const created = Date.now();
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 5100 }));
    expect(sale.status).toBe('EM_PROCESSAMENTO');
    await t.http.post(`/acquirer-b/notifications/${secret}`).send({ payments: [{ reference: String(sale.id) }] }).expect(200);
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'PAGO', 'the notified charge applied', 1500);
    // Settled before the recovery job could have taken it.
    expect(Date.now() - created).toBeLessThan(RECOVERY_AFTER_SECONDS * 1000);

    const pix = await createSale(t, seller, saleBody('PIX', { amount: 900 }));
    await t.http.post(`/acquirer-b/notifications/${secret}`).send({ payments: [{ reference: String(pix.id) }] }).expect(200);
    await sleep(500);
    expect((await transaction(pix.id)).status).toBe('PENDENTE');
    expect(acquirer.calls).not.toContain(`find ${pix.id}`);
    const refused = await t.http.post(`/acquirer-b/notifications/${secret}`).send({ payments: 'all' }).expect(400);
    expect(refused.body).toMatchObject({ status: 400, title: 'Not an acquirer-b notification' });
    await t.http.post(`/acquirer-b/notifications/not-the-secret`).send({ payments: [] }).expect(404);

    // Its secret path segment is never written: not in a metric label, not in a log line.
    expect((await t.http.get('/metrics').set(adminHeaders).expect(200)).text).not.toContain(secret);
    const logFile = process.env.LOG_FILE as string;
    const lines = await eventually(
      async () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '').split('\n').filter((line) => line.includes('/acquirer-b/notifications/')),
      (found) => found.length >= 3,
      'the notification requests in the log file',
    );
    expect(lines.filter((line) => line.includes(secret))).toEqual([]);
    expect(lines.some((line) => line.includes('/acquirer-b/notifications/[redacted]'))).toBe(true);
  });

  it('a burst: 40 notifications of one charge at once apply it once; 30 refunds at once take exactly what is refundable; malformed notifications are 400 and kept nowhere', async () => {
    acquirer.loseAnswers(1);
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 2000 }));
    expect(sale.status).toBe('EM_PROCESSAMENTO');
    const notified = await Promise.all(Array.from({ length: 40 }, () => t.http.post(`/acquirer-b/notifications/${secret}`).send({ payments: [{ reference: String(sale.id) }] })));
    expect(notified.map((answer) => answer.status).filter((status) => status !== 200)).toEqual([]);
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'PAGO', 'the notified charge applied');
    const paid: Array<{ n: number }> = await t.db.query(`SELECT count(*)::int AS n FROM ledger_postings WHERE reference_type = 'SALE' AND reference_id = $1 AND kind = 'SALE_PAID'`, [sale.id]);
    expect(paid[0].n).toBe(1);
    expect(acquirer.calls.filter((call) => call === `charge ${sale.id}`)).toHaveLength(1);

    const refunds = await Promise.all(Array.from({ length: 30 }, () => t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 100 })));
    const statuses = refunds.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(20);
    expect(statuses.filter((status) => status !== 201 && status !== 409 && status !== 422)).toEqual([]);
    const listed = (await t.http.get(`/api/sales/${sale.id}/refunds`).set(seller.headers).expect(200)).body;
    expect({ refunded: listed.refundedAmount, count: listed.refunds.length }).toEqual({ refunded: 2000, count: 20 });
    const atAcquirer = acquirer.calls.filter((call) => call.startsWith(`refund ${sale.id} `));
    expect(atAcquirer).toHaveLength(20);

    const malformed = [{}, { payments: 'x' }, { payments: [{ reference: 'abc' }] }, { payments: [{ reference: 12 }] }, { payments: Array.from({ length: 21 }, () => ({ reference: '1' })) }, []];
    for (const body of malformed) await t.http.post(`/acquirer-b/notifications/${secret}`).send(body).expect(400);
    // The inbox holds nothing of them: the one reference kept (40 times notified) is settled and dropped.
    await eventually(
      async () => ((await t.db.query(`SELECT count(*)::int AS n FROM provider_inbox WHERE provider = 'acquirer-b'`)) as Array<{ n: number }>)[0].n,
      (n) => n === 0,
      'the inbox emptied',
    );
  });
});
