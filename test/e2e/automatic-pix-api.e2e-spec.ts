import { randomBytes, randomUUID } from 'node:crypto';
import { brazilDate } from '../../src/domain/dates';
import { ApiPixSimulator, makeCertificates, PixCertificates } from './setup/api-pix';
import { createSeller, TestSeller } from './setup/factories';
import { customer } from './setup/sales';
import { eventually, freePort } from './setup/processes';
import { startApp, TestApp } from './setup/test-app';

const RECEIVER_KEY = randomUUID();
const CLIENT_ID = 'gateway-e2e';
const CLIENT_SECRET = randomBytes(16).toString('hex');
const DAY = 86_400_000;
const HOUR = 3_600_000;
/**
 * Noon, Brazil time, of the day an instant falls on there: where the PSP's clock stands for a failed attempt
 * on a due date. `due + HOUR` is the next Brazilian day when the subscription was created in the last hour
 * before Brazil's midnight, and the PSP then refuses the retry date as not in the future.
 */
const brazilNoon = (instant: number) => Date.parse(`${brazilDate(new Date(instant))}T12:00:00-03:00`);
const CYCLE_DAYS = { WEEKLY: 7, MONTHLY: 30, QUARTERLY: 90, SEMIANNUAL: 180, YEARLY: 365 } as const;
type Cycle = keyof typeof CYCLE_DAYS;

const txidOfRenewal = (saleId: number) => `GWREC${String(saleId).padStart(21, '0')}`;
const txidOfSale = (saleId: number) => `GWSALE${String(saleId).padStart(20, '0')}`;

/**
 * Issue 22 against a simulated PSP speaking the BCB's API Pix (mutual TLS, OAuth, every request and
 * answer checked against the document): recurrences created with their QR, authorized by the payer,
 * renewals sent as recurring charges and collected, retries, revocation and fallback, the PSP's
 * /rec and /cobr notifications fetched and applied. The simulator's clock follows the simulated `now`
 * the tests give the scheduler, so the BCB's date rules (the charge window, retries in the future) hold.
 */
describe('Pix Automático through API Pix (issue 22)', () => {
  let certs: PixCertificates;
  let psp: ApiPixSimulator;
  let t: TestApp;
  let seller: TestSeller;
  let webhookPath: string;

  beforeAll(async () => {
    certs = await makeCertificates();
    psp = await ApiPixSimulator.start({ certs, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, receiverKey: RECEIVER_KEY });
    const port = await freePort();
    webhookPath = `/psp/notifications/${randomBytes(16).toString('hex')}`;
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
      API_PIX_WEBHOOK_URL: `http://127.0.0.1:${port}${webhookPath}`,
      API_PIX_RECEIVER_ACCOUNT: '12345678',
      API_PIX_RECEIVER_ACCOUNT_TYPE: 'CORRENTE',
      API_PIX_RECEIVER_BRANCH: '0001',
      API_PIX_RECONCILE_SECONDS: '1',
      // The sandbox's clock drives the jobs on the simulator's records (a test environment).
      SANDBOX_CLOCK_MOVES_REAL_RECORDS: 'true',
      API_PIX_TIMEOUT_MS: '1500',
    });
    await t.app.listen(port, '127.0.0.1');
    seller = await createSeller(t);
    await eventually(async () => [psp.automaticWebhookUrl('rec'), psp.automaticWebhookUrl('cobr')], (urls) => urls.every(Boolean), 'the Pix Automático webhooks registered');
  });

  afterAll(async () => {
    await t.close();
    await psp.close();
  });

  afterEach(() => {
    psp.setNow(null);
    expect(psp.violations).toEqual([]);
  });

  const create = async (billingCycle: string, subscription: Record<string, unknown> = {}) => {
    const response = await t.http
      .post('/api/sales')
      .set(seller.headers)
      .send({
        amount: 2990,
        paymentMethod: 'PIX',
        customer,
        pix: {},
        items: [{ title: 'Clube do Livro', unitPrice: 2990, quantity: 1, tangible: false }],
        subscription: { enabled: true, billingCycle, automaticPix: true, ...subscription },
      })
      .expect(201);
    return response.body.sale as { id: number; status: string; payment: { pix: { key: string } }; subscription: { id: number } };
  };
  const subscription = async (id: number) => (await t.http.get(`/api/subscriptions/${id}`).set(seller.headers).expect(200)).body.data;
  /** The scheduler at `at`, the PSP's clock with it. */
  const run = async (at: number) => {
    psp.setNow(new Date(at));
    return (await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({ now: new Date(at).toISOString() }).expect(200)).body;
  };
  const lastSale = async (subscriptionId: number) =>
    (await t.db.query(`SELECT id, status, pix_code, automatic_pix_sent_at, automatic_pix_retries FROM sales WHERE subscription_id = $1 ORDER BY id DESC LIMIT 1`, [subscriptionId]))[0] as {
      id: number;
      status: string;
      pix_code: string | null;
      automatic_pix_sent_at: Date | null;
      automatic_pix_retries: number;
    };
  const statusOf = async (saleId: number) => (await t.db.query(`SELECT status FROM sales WHERE id = $1`, [saleId]))[0].status as string;
  const authorized = (id: number) => eventually(() => subscription(id), (s) => s.automaticPix?.status === 'AUTHORIZED', 'the authorization');

  /** The next renewal sent 4 days before it is due (a recurring charge at the PSP), then paid by the payer's bank on its date. */
  const collectNext = async (id: number) => {
    const due = Date.parse((await subscription(id)).nextBillingDate);
    await run(due - 4 * DAY + HOUR);
    const renewal = await lastSale(id);
    expect(renewal).toMatchObject({ status: 'PENDENTE', pix_code: null, automatic_pix_sent_at: expect.any(Date) });
    expect(psp.cobr(txidOfRenewal(renewal.id))).toMatchObject({ status: 'ATIVA', valor: { original: '29.90' } });
    psp.setNow(new Date(due + HOUR));
    await psp.payRecurringCharge(txidOfRenewal(renewal.id));
    await eventually(() => statusOf(renewal.id), (status) => status === 'PAGO', `renewal ${renewal.id} paid`);
    return due;
  };

  for (const cycle of Object.keys(CYCLE_DAYS) as Cycle[]) {
    it(`journey 3, ${cycle}: the composite QR pays and authorizes; a year of renewals collected as recurring charges`, async () => {
      const start = Date.now();
      const sale = await create(cycle);
      const id = sale.subscription.id;
      const rec = (await subscription(id)).automaticPix;
      expect(rec).toMatchObject({ status: 'PENDING', journey: 'JOURNEY_3', recurrenceId: expect.stringMatching(/^RR[a-zA-Z0-9]{27}$/) });
      expect(psp.rec(rec.recurrenceId)).toMatchObject({ status: 'CRIADA', ativacao: { dadosJornada: { txid: txidOfSale(sale.id) } } });
      expect(sale.payment.pix.key).toContain('/rec/');

      await psp.pay(txidOfSale(sale.id));
      await eventually(() => statusOf(sale.id), (status) => status === 'PAGO', 'the first charge paid');
      await authorized(id);

      let renewals = 0;
      for (let due = Date.parse((await subscription(id)).nextBillingDate); due < start + 365 * DAY + HOUR; due = Date.parse((await subscription(id)).nextBillingDate)) {
        await collectNext(id);
        renewals += 1;
      }
      expect(renewals).toBe(Math.floor(365 / CYCLE_DAYS[cycle]));
      expect(await subscription(id)).toMatchObject({ status: 'ACTIVE', successfulBillings: renewals + 1, failedBillings: 0 });
    }, 120_000);
  }

  for (const cycle of Object.keys(CYCLE_DAYS) as Cycle[]) {
    it(`journey 2, ${cycle}: a trial, the QR only authorizes; the first charge is collected at its end, then a year of renewals`, async () => {
      const sale = await create(cycle, { trialDays: 10 });
      const id = sale.subscription.id;
      const { recurrenceId } = (await subscription(id)).automaticPix;
      expect(sale.payment.pix.key).toContain('/rec/');
      expect(psp.rec(recurrenceId)).toMatchObject({ status: 'CRIADA' });
      await psp.approveRecurrence(recurrenceId);
      const trialing = await eventually(() => subscription(id), (s) => s.status === 'TRIALING', 'the trial started');
      const trialEnd = Date.parse(trialing.trialEndsAt);
      await run(trialEnd - 4 * DAY + HOUR);
      expect(psp.cobr(txidOfRenewal(sale.id))).toMatchObject({ status: 'ATIVA' });
      psp.setNow(new Date(trialEnd + HOUR));
      await psp.payRecurringCharge(txidOfRenewal(sale.id));
      await eventually(() => subscription(id), (s) => s.status === 'ACTIVE' && s.successfulBillings === 1, 'the first charge collected');
      const renewals = Math.floor(365 / CYCLE_DAYS[cycle]);
      for (let n = 0; n < renewals; n += 1) await collectNext(id);
      expect(await subscription(id)).toMatchObject({ status: 'ACTIVE', successfulBillings: renewals + 1 });
    }, 120_000);
  }

  it('a failed charge is retried through the retry endpoint and then paid', async () => {
    const sale = await create('MONTHLY');
    const id = sale.subscription.id;
    await psp.pay(txidOfSale(sale.id));
    await authorized(id);
    const due = Date.parse((await subscription(id)).nextBillingDate);
    await run(due - 4 * DAY + HOUR);
    const renewal = await lastSale(id);
    psp.setNow(new Date(brazilNoon(due)));
    await psp.failRecurringCharge(txidOfRenewal(renewal.id));
    await eventually(() => lastSale(id), (s) => s.automatic_pix_retries === 1, 'the retry asked');
    expect(psp.cobr(txidOfRenewal(renewal.id))?.tentativas?.map((a) => `${a.tipo} ${a.status}`)).toEqual(['AGND REJEITADA', 'NTAG AGENDADA']);

    await run(due + DAY + HOUR);
    expect((await subscription(id)).status).toBe('PAST_DUE');
    const pix = await psp.payRecurringCharge(txidOfRenewal(renewal.id));
    await eventually(() => subscription(id), (s) => s.status === 'ACTIVE' && s.successfulBillings === 2, 'paid by the retry');

    // The same Pix seen again as a received Pix (the key's /pix notification, or reconciliation): recorded as
    // the renewal's, nothing moved twice, nothing returned to the payer.
    const balanceBefore = (await t.http.get('/api/public/balance').set(seller.headers).expect(200)).body;
    await t.http.post(`${webhookPath}/pix`).send({ pix: [{ endToEndId: pix.endToEndId, txid: pix.txid, valor: pix.valor, horario: pix.horario }] }).expect(200);
    const receipt = await eventually(
      async () => (await t.db.query(`SELECT outcome, sale_id, return_status FROM pix_receipts WHERE end_to_end_id = $1`, [pix.endToEndId]))[0],
      Boolean,
      'the notification checked',
    );
    expect(receipt).toEqual({ outcome: 'APPLIED', sale_id: renewal.id, return_status: null });
    expect((await t.http.get('/api/public/balance').set(seller.headers).expect(200)).body).toEqual(balanceBefore);
    expect(psp.refunds().filter(({ e2eid }) => e2eid === pix.endToEndId)).toEqual([]);
  }, 60_000);

  it('a charge never paid: PAST_DUE, then CANCELLED on the grace rules, the recurrence cancelled at the PSP', async () => {
    const sale = await create('MONTHLY');
    const id = sale.subscription.id;
    await psp.pay(txidOfSale(sale.id));
    await authorized(id);
    const { recurrenceId } = (await subscription(id)).automaticPix;
    const due = Date.parse((await subscription(id)).nextBillingDate);
    await run(due - 4 * DAY + HOUR);
    const renewal = await lastSale(id);
    for (const day of [0, 1, 3, 5]) {
      psp.setNow(new Date(brazilNoon(due) + day * DAY));
      await psp.failRecurringCharge(txidOfRenewal(renewal.id));
      await eventually(() => lastSale(id), (s) => s.automatic_pix_retries === Math.min(3, [0, 1, 3, 5].indexOf(day) + 1), `retry after day ${day}`);
    }
    await run(due + DAY + HOUR);
    expect((await subscription(id)).status).toBe('PAST_DUE');
    await run(due + 7 * DAY + HOUR);
    expect(await subscription(id)).toMatchObject({ status: 'CANCELLED', automaticPix: { status: 'CANCELLED' } });
    expect(psp.rec(recurrenceId)).toMatchObject({ status: 'CANCELADA', encerramento: { cancelamento: { solicitante: 'USUARIO_RECEBEDOR' } } });
  }, 60_000);

  const waiting = async (resourceId: string) =>
    (await t.db.query(`SELECT attempts FROM provider_inbox WHERE object_id = $1`, [resourceId]))[0] as { attempts: number } | undefined;

  it('a /rec notification is kept before its 200 and applied from the store: the PSP failing every check of it loses nothing, it is retried', async () => {
    const sale = await create('MONTHLY');
    const id = sale.subscription.id;
    const { recurrenceId } = (await subscription(id)).automaticPix;
    // Every try of the first check after the notification fails: before, that lost it until a poll.
    psp.failNext(3, { status: 503, method: 'GET', path: /^\/v2\/rec\// });
    await psp.pay(txidOfSale(sale.id), { notify: 'twice' });
    await eventually(() => waiting(recurrenceId), (row) => (row?.attempts ?? 0) >= 1, 'the notification kept after its check failed');
    await authorized(id);
    await eventually(() => waiting(recurrenceId), (row) => row === undefined, 'the notification done');
    expect(await subscription(id)).toMatchObject({ status: 'ACTIVE', automaticPix: { status: 'AUTHORIZED' } });
    expect(psp.requests.filter((r) => r.method === 'GET' && r.path.startsWith(`/v2/rec/${recurrenceId}`) && r.status === 503)).toHaveLength(3);
  }, 60_000);

  it('a /cobr notification kept but never handled in its process (the process died after the 200) is applied by the inbox worker', async () => {
    const sale = await create('MONTHLY');
    const id = sale.subscription.id;
    await psp.pay(txidOfSale(sale.id));
    await authorized(id);
    const due = Date.parse((await subscription(id)).nextBillingDate);
    await run(due - 4 * DAY + HOUR);
    const renewal = await lastSale(id);
    psp.setNow(new Date(due + HOUR));
    // The payer's bank pays, the PSP's notification never comes: what it would have stored is stored by hand.
    await psp.payRecurringCharge(txidOfRenewal(renewal.id), { notify: 'never' });
    // (An earlier notification of the charge, its activation, may still be waiting, or under a check that read the
    // PSP before the payment: the row is bumped as the intake bumps it, so that check does not drop it.)
    await t.db.query(
      `INSERT INTO provider_inbox (provider, kind, object_id) VALUES ('api-pix', 'cobr', $1)
       ON CONFLICT (provider, kind, object_id) DO UPDATE SET notifications = provider_inbox.notifications + 1, next_attempt_at = now()`,
      [txidOfRenewal(renewal.id)],
    );
    await eventually(() => statusOf(renewal.id), (status) => status === 'PAGO', 'the renewal paid from the stored notification');
    await eventually(() => waiting(txidOfRenewal(renewal.id)), (row) => row === undefined, 'the notification done');
  }, 60_000);

  it('the payer revoking in their bank cancels the subscription; a rejected authorization falls back to a QR per cycle', async () => {
    const sale = await create('WEEKLY');
    const id = sale.subscription.id;
    await psp.pay(txidOfSale(sale.id));
    await authorized(id);
    await psp.revokeRecurrence((await subscription(id)).automaticPix.recurrenceId);
    await eventually(() => subscription(id), (s) => s.status === 'CANCELLED', 'the revocation applied');
    expect((await subscription(id)).automaticPix).toMatchObject({ status: 'CANCELLED', endReason: expect.stringContaining('payer') });

    const rejected = await create('MONTHLY');
    const other = rejected.subscription.id;
    await psp.rejectRecurrence((await subscription(other)).automaticPix.recurrenceId);
    await eventually(() => subscription(other), (s) => s.automaticPix.status === 'REJECTED', 'the rejection applied');
    await psp.pay(txidOfSale(rejected.id));
    await eventually(() => statusOf(rejected.id), (status) => status === 'PAGO', 'the first charge paid');
    const due = Date.parse((await subscription(other)).nextBillingDate);
    await run(due + HOUR);
    const renewal = await lastSale(other);
    expect(renewal).toMatchObject({ status: 'PENDENTE', pix_code: expect.stringMatching(/^000201/), automatic_pix_sent_at: null });
    expect(psp.cob(txidOfSale(renewal.id))).toMatchObject({ status: 'ATIVA' });
  }, 60_000);
});
