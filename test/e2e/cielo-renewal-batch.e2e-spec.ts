import { rm } from 'node:fs/promises';
import { PixCertificates } from './setup/api-pix';
import { CieloSimulator, makeCertificates, sandboxCard } from './setup/cielo';
import { createSeller } from './setup/factories';
import { saleBody } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const MERCHANT_ID = '5d2e9a41-5b3d-4e8f-9a10-b2c3d4e5f607';
const MERCHANT_KEY = 'CIELOBATCHE2EKEY0123456789ABCDEFGHIJKLM';
const ORDER_PREFIX = 'GWBAT';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * Issue 39: a renewal batch through Cielo sends no POST so long after its sale was written that the
 * recovery job could already have taken "none found" as no charge (CIELO_NOT_FOUND_AFTER_SECONDS counts from
 * the sale's write, and a batch's sales are written before its first POST): here 4 s, less the 1.5 s
 * timeout, halved: a POST leaves within 1.25 s of its sale's write or never. Cielo answering each POST in
 * 1 s, the batch's third renewal is not sent: FALHA, retried by dunning, never charged.
 */
describe('Cielo renewal batches never send a charge the recovery job may already have failed (issue 39)', () => {
  let certs: PixCertificates;
  let cielo: CieloSimulator;
  let t: TestApp;

  beforeAll(async () => {
    certs = await makeCertificates();
    cielo = await CieloSimulator.start({ certs, merchantId: MERCHANT_ID, merchantKey: MERCHANT_KEY });
    t = await startApp({
      ...cielo.gatewayEnv(),
      CIELO_ORDER_ID_PREFIX: ORDER_PREFIX,
      CIELO_TIMEOUT_MS: '1500',
      CIELO_NOT_FOUND_AFTER_SECONDS: '4',
      SANDBOX_CLOCK_MOVES_REAL_RECORDS: 'true',
      JANITOR_SECONDS: '3600',
      BILLING_CONCURRENCY: '1',
    });
  });

  afterAll(async () => {
    await t.close();
    await cielo.close();
    await rm(certs.dir, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(cielo.violations).toEqual([]);
  });

  it('three renewals due together, Cielo taking 1 s a POST: two are sent and paid, the third is never sent (FALHA), nothing charged twice', async () => {
    const seller = await createSeller(t);
    const subscriptions: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const body = saleBody('CREDIT_CARD', {
        amount: 4990,
        card: { number: sandboxCard(1, 'Visa', 7000 + i), holderName: 'Ana Souza', expirationMonth: '12', expirationYear: '2035', cvv: '4821' },
        items: [{ title: 'Plano Pro', unitPrice: 4990, quantity: 1, tangible: false }],
        subscription: { enabled: true, billingCycle: 'MONTHLY' },
      });
      const sale = (await t.http.post('/api/sales').set(seller.headers).send(body).expect(201)).body.sale as Json;
      expect(sale).toMatchObject({ status: 'PAGO' });
      subscriptions.push(sale.subscription.id as number);
    }
    const [{ due }] = await t.db.query(`SELECT max(next_billing_date) AS due FROM subscriptions WHERE id = ANY($1::int[])`, [subscriptions]);
    cielo.delayNext(3, 1_000, { method: 'POST', path: /^\/1\/sales\/?$/ });
    const ran = (await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({ now: new Date(new Date(due).getTime() + 60_000).toISOString() }).expect(200)).body as Json;
    expect(ran.subscriptions.renewals).toBe(3);
    const renewals = (await t.db.query(
      `SELECT id, status FROM sales WHERE subscription_id = ANY($1::int[]) AND billing_period = 1 ORDER BY id`,
      [subscriptions],
    )) as Json[];
    expect(renewals.map((sale) => sale.status)).toEqual(['PAGO', 'PAGO', 'FALHA']);
    expect(renewals.map((sale) => cielo.postsFor(`${ORDER_PREFIX}${sale.id}`))).toEqual([1, 1, 0]);
  }, 60_000);
});
