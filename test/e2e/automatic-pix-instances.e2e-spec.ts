import { randomBytes, randomUUID } from 'node:crypto';
import { ApiPixSimulator, makeCertificates, PixCertificates } from './setup/api-pix';
import { createSeller, TestSeller } from './setup/factories';
import { eventually, freePort, ServiceProcess, startServiceProcess } from './setup/processes';
import { customer } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const RECEIVER_KEY = randomUUID();
const CLIENT_ID = 'gateway-e2e';
const CLIENT_SECRET = randomBytes(16).toString('hex');
const DAY = 86_400_000;
const HOUR = 3_600_000;
const SUBSCRIPTIONS = 20;

/** What the test reads of the answers: a created sale, or the scheduler's summary. */
interface Answer {
  sale: { id: number; subscription: { id: number } };
  subscriptions: { renewals: number };
}

/**
 * Issue 22: two processes of the service on one database, both on the same PSP (the API Pix simulator),
 * run the billing and the Pix Automático jobs at the same simulated moment: each period's renewal is
 * one sale and one recurring charge at the PSP, collected once.
 */
describe('Pix Automático with two instances on one PSP (issue 22)', () => {
  let certs: PixCertificates;
  let psp: ApiPixSimulator;
  let t: TestApp;
  let seller: TestSeller;
  const instances: ServiceProcess[] = [];

  beforeAll(async () => {
    certs = await makeCertificates();
    psp = await ApiPixSimulator.start({ certs, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, receiverKey: RECEIVER_KEY });
    const ports = [await freePort(), await freePort()];
    const webhookPath = `/psp/notifications/${randomBytes(16).toString('hex')}`;
    const env = (port: number) => ({
      DATABASE_URL: process.env.E2E_DATABASE_URL,
      LOG_LEVEL: 'warn',
      PORT: String(port),
      PIX_PROVIDER: 'api-pix',
      API_PIX_BASE_URL: psp.baseUrl,
      API_PIX_TOKEN_URL: psp.tokenUrl,
      API_PIX_CLIENT_ID: CLIENT_ID,
      API_PIX_CLIENT_SECRET: CLIENT_SECRET,
      API_PIX_CERT_FILE: certs.clientCertFile,
      API_PIX_KEY_FILE: certs.clientKeyFile,
      API_PIX_CA_FILE: certs.caFile,
      API_PIX_RECEIVER_KEY: RECEIVER_KEY,
      // The PSP notifies one URL: the first instance's.
      API_PIX_WEBHOOK_URL: `http://127.0.0.1:${ports[0]}${webhookPath}`,
      API_PIX_RECEIVER_ACCOUNT: '12345678',
      API_PIX_TIMEOUT_MS: '3000',
      // The sandbox's clock drives the jobs on the simulator's records (a test environment).
      SANDBOX_CLOCK_MOVES_REAL_RECORDS: 'true',
    });
    t = await startApp();
    seller = await createSeller(t);
    instances.push(...(await Promise.all(ports.map((port) => startServiceProcess(env(port))))));
    await eventually(async () => psp.automaticWebhookUrl('cobr'), Boolean, 'the webhooks registered', 30_000);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await t.close();
    await psp.close();
  });

  const call = (index: number, method: string, path: string, body?: unknown) =>
    fetch(`${instances[index].base}${path}`, {
      method,
      headers: { ...seller.headers, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as Answer }));

  it('sends and collects each subscription’s renewal once when both instances run at the same moment', async () => {
    const ids: number[] = [];
    for (let n = 0; n < SUBSCRIPTIONS; n += 1) {
      const created = await call(n % 2, 'POST', '/api/sales', {
        amount: 1590,
        paymentMethod: 'PIX',
        customer,
        pix: {},
        items: [{ title: 'Clube', unitPrice: 1590, quantity: 1, tangible: false }],
        subscription: { enabled: true, billingCycle: 'MONTHLY', automaticPix: true },
      });
      expect(created.status).toBe(201);
      await psp.pay(`GWSALE${String(created.body.sale.id).padStart(20, '0')}`);
      ids.push(created.body.sale.subscription.id);
    }
    await eventually(
      async () => (await t.db.query(`SELECT count(*)::int AS n FROM subscriptions WHERE id = ANY($1::int[]) AND automatic_pix_status = 'AUTHORIZED' AND status = 'ACTIVE'`, [ids]))[0].n,
      (n) => n === SUBSCRIPTIONS,
      'every subscription active and authorized',
    ).catch(async (error) => {
      console.log(JSON.stringify(await t.db.query(`SELECT s.id, s.status, s.automatic_pix_status, (SELECT string_agg(status, ',') FROM sales WHERE subscription_id = s.id) AS sales FROM subscriptions s WHERE s.id = ANY($1::int[])`, [ids])));
      console.log(instances[0].output().slice(-3000));
      throw error;
    });
    const [{ due }] = await t.db.query(`SELECT max(next_billing_date) AS due FROM subscriptions WHERE id = ANY($1::int[])`, [ids]);
    const dueAt = new Date(due).getTime();
    const both = async (at: number) => {
      psp.setNow(new Date(at));
      const runs = await Promise.all([0, 1].map((index) => call(index, 'POST', '/api/sandbox/scheduler/run', { now: new Date(at).toISOString() })));
      expect(runs.map((run) => run.status)).toEqual([200, 200]);
      return runs;
    };

    const sent = await both(dueAt - 4 * DAY + HOUR);
    expect(sent[0].body.subscriptions.renewals + sent[1].body.subscriptions.renewals).toBe(SUBSCRIPTIONS);
    const renewals: Array<{ id: number }> = await t.db.query(`SELECT id FROM sales WHERE subscription_id = ANY($1::int[]) AND billing_period = 1 ORDER BY id`, [ids]);
    expect(renewals).toHaveLength(SUBSCRIPTIONS);
    const txids = renewals.map(({ id }) => `GWREC${String(id).padStart(21, '0')}`);
    expect(psp.cobrs().filter((cobr) => txids.includes(cobr.txid))).toHaveLength(SUBSCRIPTIONS);
    // Each sent by one instance only (a claim on the sale), not twice and merged by the PSP's txid idempotency.
    const puts = txids.map((txid) => psp.requests.filter((r) => r.method === 'PUT' && r.path === `/v2/cobr/${txid}`).length);
    expect(puts).toEqual(txids.map(() => 1));

    psp.setNow(new Date(dueAt + HOUR));
    for (const txid of txids) await psp.payRecurringCharge(txid);
    await both(dueAt + HOUR);
    await eventually(
      async () => (await t.db.query(`SELECT count(*)::int AS n FROM sales WHERE id = ANY($1::int[]) AND status = 'PAGO'`, [renewals.map(({ id }) => id)]))[0].n,
      (n) => n === SUBSCRIPTIONS,
      'every renewal paid',
    );
    const [counters] = await t.db.query(`SELECT count(*)::int AS n FROM subscriptions WHERE id = ANY($1::int[]) AND successful_billings = 2 AND total_billings = 2`, [ids]);
    expect(counters.n).toBe(SUBSCRIPTIONS);
    // Nothing of it was returned to a payer (the Pix is the sale's, applied once whichever path saw it).
    const [returned] = await t.db.query(`SELECT count(*)::int AS n FROM pix_receipts WHERE txid = ANY($1::varchar[]) AND outcome <> 'APPLIED'`, [txids]);
    expect(returned.n).toBe(0);
    expect(psp.violations).toEqual([]);
  }, 180_000);
});
