import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createSeller, TestSeller } from './setup/factories';
import { customer, saleBody } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const CYCLE_DAYS = { WEEKLY: 7, MONTHLY: 30, QUARTERLY: 90, SEMIANNUAL: 180, YEARLY: 365 } as const;
type Cycle = keyof typeof CYCLE_DAYS;

const plan = { title: 'Clube do Café', unitPrice: 3990, quantity: 1, tangible: false };
const automaticSale = (billingCycle: string, subscription: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  amount: 3990,
  paymentMethod: 'PIX',
  customer,
  items: [plan],
  pix: {},
  subscription: { enabled: true, billingCycle, automaticPix: true, ...subscription },
  postbackUrl: 'http://127.0.0.1:9/postbacks',
  ...extra,
});

interface SaleRow {
  id: number;
  status: string;
  billing_period: number;
  pix_code: string | null;
  automatic_pix_due_date: string | null;
  automatic_pix_sent_at: Date | null;
  automatic_pix_retries: number;
}

/**
 * Pix Automático on the sandbox (issue 22): the payer's bank is played by the sandbox routes
 * (authorize, reject, revoke, an attempt refused for insufficient funds) and the scheduler route, which
 * pays every attempt due by its `now`.
 */
describe('Subscriptions by Pix Automático (sandbox)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const create = async (seller: TestSeller, body: Record<string, unknown>) => {
    const response = await t.http.post('/api/sales').set(seller.headers).send(body);
    expect(response.status).toBe(201);
    return response.body.sale as { id: number; status: string; payment: { pix: { key: string } }; subscription: { id: number; status: string } };
  };
  const subscription = async (seller: TestSeller, id: number) => (await t.http.get(`/api/subscriptions/${id}`).set(seller.headers).expect(200)).body.data;
  const run = async (seller: TestSeller, at: Date | number) =>
    (await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({ now: new Date(at).toISOString() }).expect(200)).body;
  const payer = (seller: TestSeller, subscriptionId: number, event: string) => t.http.post(`/api/sandbox/subscriptions/${subscriptionId}/automatic-pix`).set(seller.headers).send({ event });
  const attempt = (seller: TestSeller, saleId: number, outcome: string) => t.http.post(`/api/sandbox/sales/${saleId}/automatic-pix`).set(seller.headers).send({ outcome });
  const pay = (seller: TestSeller, saleId: number) => t.http.post(`/api/sandbox/sales/${saleId}/events`).set(seller.headers).send({ event: 'PAYMENT_CONFIRMED' }).expect(200);
  const salesOf = async (subscriptionId: number): Promise<SaleRow[]> =>
    t.db.query(
      `SELECT id, status, billing_period, pix_code, automatic_pix_due_date, automatic_pix_sent_at, automatic_pix_retries FROM sales WHERE subscription_id = $1 ORDER BY id`,
      [subscriptionId],
    );
  const recurrence = async (subscriptionId: number) =>
    (
      await t.db.query(
        `SELECT r.status, r.cancelled_by FROM sandbox_recurrences r JOIN subscriptions s ON s.automatic_pix_recurrence_id = r.id WHERE s.id = $1`,
        [subscriptionId],
      )
    )[0] as { status: string; cancelled_by: string | null };
  /** The subscription's postbacks (subscription.status_changed) as written to the outbox, in order. */
  const postbacks = async (id: number) =>
    (
      (await t.db.query(`SELECT payload FROM outbox_events WHERE aggregate_key = $1 AND event_type = 'subscription.status_changed' ORDER BY id`, [`subscription:${id}`])) as Array<{
        payload: { previousStatus: string; data: { status: string } };
      }>
    ).map(({ payload }) => `${payload.previousStatus}→${payload.data.status}`);
  const nextBilling = async (seller: TestSeller, id: number) => Date.parse((await subscription(seller, id)).nextBillingDate as string);

  /** Each renewal until a year after `start`: sent 4 days before its due date, collected on it. How many. */
  const billYear = async (seller: TestSeller, id: number, start: number) => {
    let renewals = 0;
    for (let due = await nextBilling(seller, id); due < start + 365 * DAY + HOUR; due = await nextBilling(seller, id)) {
      await run(seller, due - 4 * DAY + HOUR);
      const sent = (await salesOf(id)).at(-1) as SaleRow;
      expect(sent).toMatchObject({ status: 'PENDENTE', pix_code: null, automatic_pix_sent_at: expect.any(Date) });
      await run(seller, due + HOUR);
      expect((await salesOf(id)).at(-1)).toMatchObject({ id: sent.id, status: 'PAGO' });
      renewals += 1;
    }
    return renewals;
  };

  for (const cycle of Object.keys(CYCLE_DAYS) as Cycle[]) {
    it(`journey 3, ${cycle}: the QR pays the first charge and authorizes; a year of renewals is collected without a QR`, async () => {
      const seller = await createSeller(t);
      const start = Date.now();
      const sale = await create(seller, automaticSale(cycle));
      expect(sale.payment.pix.key).toMatch(/^000201/);
      const id = sale.subscription.id;
      expect((await subscription(seller, id)).automaticPix).toMatchObject({ status: 'PENDING', journey: 'JOURNEY_3', renewals: 'AWAITING_AUTHORIZATION', retryPolicy: 'PERMITE_3R_7D', maxAmount: 3990 });

      await pay(seller, sale.id);
      const active = await subscription(seller, id);
      expect(active).toMatchObject({ status: 'ACTIVE', automaticPix: { status: 'AUTHORIZED', renewals: 'AUTOMATIC', authorizedAt: expect.any(String) } });

      const renewals = await billYear(seller, id, start);
      expect(renewals).toBe(Math.floor(365 / CYCLE_DAYS[cycle]));
      const after = await subscription(seller, id);
      expect(after).toMatchObject({ status: 'ACTIVE', totalBillings: renewals + 1, successfulBillings: renewals + 1, failedBillings: 0 });
      const sales = await salesOf(id);
      expect(sales.filter((s) => s.status === 'PAGO')).toHaveLength(renewals + 1);
      expect(new Set(sales.map((s) => s.billing_period)).size).toBe(sales.length);
      const balance = (await t.http.get('/api/public/balance').set(seller.headers).expect(200)).body;
      expect(balance.total).toBeGreaterThan(0);
    });
  }

  for (const cycle of Object.keys(CYCLE_DAYS) as Cycle[]) {
    it(`journey 2, ${cycle}: with a trial the QR only authorizes; the first charge is collected when the trial ends, then a year of renewals`, async () => {
      const seller = await createSeller(t);
      const start = Date.now();
      const sale = await create(seller, automaticSale(cycle, { trialDays: 14 }));
      const id = sale.subscription.id;
      expect(sale.status).toBe('PENDENTE');
      expect((await subscription(seller, id)).automaticPix).toMatchObject({ status: 'PENDING', journey: 'JOURNEY_2' });

      const authorized = (await payer(seller, id, 'AUTHORIZE').expect(200)).body;
      expect(authorized).toMatchObject({ status: 'TRIALING', automaticPix: { status: 'AUTHORIZED', renewals: 'AUTOMATIC' } });
      const trialEnd = Date.parse(authorized.trialEndsAt);
      expect(trialEnd - start).toBeGreaterThanOrEqual(14 * DAY);

      // Nothing is collected during the trial; the first charge goes to the PSP 4 days before it ends.
      await run(seller, trialEnd - 5 * DAY);
      expect((await salesOf(id))[0]).toMatchObject({ id: sale.id, status: 'PENDENTE', automatic_pix_sent_at: null });
      await run(seller, trialEnd - 4 * DAY + HOUR);
      expect((await salesOf(id))[0].automatic_pix_sent_at).not.toBeNull();
      await run(seller, trialEnd + HOUR);
      expect((await salesOf(id))[0]).toMatchObject({ id: sale.id, status: 'PAGO' });
      expect(await subscription(seller, id)).toMatchObject({ status: 'ACTIVE', successfulBillings: 1 });

      const renewals = await billYear(seller, id, trialEnd);
      expect(renewals).toBe(Math.floor(365 / CYCLE_DAYS[cycle]));
      expect(await subscription(seller, id)).toMatchObject({ status: 'ACTIVE', successfulBillings: renewals + 1, failedBillings: 0 });
    });
  }

  it('a failed charge is retried on the policy date and then paid: PAST_DUE, then ACTIVE', async () => {
    const seller = await createSeller(t);
    const sale = await create(seller, automaticSale('MONTHLY'));
    const id = sale.subscription.id;
    await pay(seller, sale.id);
    const due = await nextBilling(seller, id);
    await run(seller, due - 4 * DAY + HOUR);
    const renewal = (await salesOf(id)).at(-1) as SaleRow;

    const failed = (await attempt(seller, renewal.id, 'INSUFFICIENT_FUNDS').expect(200)).body;
    expect(failed.status).toBe('PENDENTE');
    expect((await salesOf(id)).at(-1)).toMatchObject({ id: renewal.id, automatic_pix_retries: 1 });
    const charge = (await t.db.query(`SELECT attempts FROM sandbox_recurring_charges WHERE txid = $1`, [`GWREC${String(renewal.id).padStart(21, '0')}`]))[0];
    expect(charge.attempts.map((a: { kind: string; status: string }) => `${a.kind} ${a.status}`)).toEqual(['AGND REJEITADA', 'NTAG AGENDADA']);

    // The day after the due date it is PAST_DUE; the retry settles that day and the subscription is ACTIVE again.
    await run(seller, due + DAY + HOUR);
    expect((await salesOf(id)).at(-1)).toMatchObject({ id: renewal.id, status: 'PAGO' });
    expect(await subscription(seller, id)).toMatchObject({ status: 'ACTIVE', successfulBillings: 2 });
    expect(await postbacks(id)).toEqual(['PENDING→ACTIVE', 'ACTIVE→PAST_DUE', 'PAST_DUE→ACTIVE']);
  });

  it('a failed charge never paid ends CANCELLED on the grace rules, and the authorization is cancelled at the PSP', async () => {
    const seller = await createSeller(t);
    const sale = await create(seller, automaticSale('MONTHLY'));
    const id = sale.subscription.id;
    await pay(seller, sale.id);
    const due = await nextBilling(seller, id);
    await run(seller, due - 4 * DAY + HOUR);
    const renewal = (await salesOf(id)).at(-1) as SaleRow;
    for (let n = 0; n < 4; n += 1) await attempt(seller, renewal.id, 'INSUFFICIENT_FUNDS').expect(200);
    expect((await salesOf(id)).at(-1)).toMatchObject({ automatic_pix_retries: 3 });
    await attempt(seller, renewal.id, 'INSUFFICIENT_FUNDS').expect(409);

    await run(seller, due + DAY + HOUR);
    expect((await subscription(seller, id)).status).toBe('PAST_DUE');
    await run(seller, due + 7 * DAY + HOUR);
    const cancelled = await subscription(seller, id);
    expect(cancelled).toMatchObject({ status: 'CANCELLED', automaticPix: { status: 'CANCELLED' } });
    expect(await recurrence(id)).toEqual({ status: 'CANCELADA', cancelled_by: 'USUARIO_RECEBEDOR' });
  });

  it('the payer revoking the authorization cancels the subscription, its open renewal with it', async () => {
    const seller = await createSeller(t);
    const sale = await create(seller, automaticSale('WEEKLY'));
    const id = sale.subscription.id;
    await pay(seller, sale.id);
    const due = await nextBilling(seller, id);
    await run(seller, due - 4 * DAY + HOUR);
    const revoked = (await payer(seller, id, 'REVOKE').expect(200)).body;
    expect(revoked).toMatchObject({ status: 'CANCELLED', cancelledAt: expect.any(String), automaticPix: { status: 'CANCELLED', endReason: expect.stringContaining('payer') } });
    expect((await salesOf(id)).at(-1)).toMatchObject({ status: 'CANCELADO' });
    expect(await postbacks(id)).toEqual(['PENDING→ACTIVE', 'ACTIVE→CANCELLED']);
    await payer(seller, id, 'REVOKE').expect(409);
  });

  it('a rejected authorization falls back to a QR per cycle (journey 3) or a QR for the first charge (journey 2)', async () => {
    const seller = await createSeller(t);
    const sale = await create(seller, automaticSale('MONTHLY'));
    const id = sale.subscription.id;
    expect((await payer(seller, id, 'REJECT').expect(200)).body.automaticPix).toMatchObject({ status: 'REJECTED', renewals: 'QR_PER_CYCLE', endedAt: expect.any(String) });
    await pay(seller, sale.id);
    expect(await subscription(seller, id)).toMatchObject({ status: 'ACTIVE', automaticPix: { status: 'REJECTED' } });
    const due = await nextBilling(seller, id);
    await run(seller, due - 4 * DAY + HOUR);
    expect(await salesOf(id)).toHaveLength(1);
    await run(seller, due + HOUR);
    expect((await salesOf(id)).at(-1)).toMatchObject({ status: 'PENDENTE', pix_code: expect.stringMatching(/^000201/), automatic_pix_due_date: null });

    const trial = await create(seller, automaticSale('MONTHLY', { trialDays: 7 }));
    const authorizationQr = trial.payment.pix.key;
    await payer(seller, trial.subscription.id, 'EXPIRE').expect(200);
    const [opening] = await salesOf(trial.subscription.id);
    expect(opening.pix_code).toMatch(/^000201/);
    expect(opening.pix_code).not.toBe(authorizationQr);
    expect(opening.automatic_pix_due_date).toBeNull();
    await pay(seller, trial.id);
    expect(await subscription(seller, trial.subscription.id)).toMatchObject({ status: 'TRIALING', automaticPix: { status: 'EXPIRED', renewals: 'QR_PER_CYCLE' } });
  });

  it('pausing cancels the charge at the PSP and collects nothing; resuming restarts the schedule; cancelling cancels the authorization', async () => {
    const seller = await createSeller(t);
    const sale = await create(seller, automaticSale('MONTHLY'));
    const id = sale.subscription.id;
    await pay(seller, sale.id);
    const due = await nextBilling(seller, id);
    await run(seller, due - 4 * DAY + HOUR);
    const renewal = (await salesOf(id)).at(-1) as SaleRow;
    await t.http.post(`/api/subscriptions/${id}/pause`).set(seller.headers).expect(200);
    expect((await salesOf(id)).at(-1)).toMatchObject({ id: renewal.id, status: 'CANCELADO' });
    const charge = (await t.db.query(`SELECT status FROM sandbox_recurring_charges WHERE txid = $1`, [`GWREC${String(renewal.id).padStart(21, '0')}`]))[0];
    expect(charge.status).toBe('CANCELADA');
    await run(seller, due + HOUR);
    expect(await salesOf(id)).toHaveLength(2);
    expect(await recurrence(id)).toMatchObject({ status: 'APROVADA' });

    // Resumed: the schedule restarts from the resume (one calendar month later), collected automatically again.
    const resumed = (await t.http.post(`/api/subscriptions/${id}/resume`).set(seller.headers).expect(200)).body.data;
    const next = Date.parse(resumed.nextBillingDate);
    expect(next - Date.now()).toBeGreaterThan(27 * DAY);
    await run(seller, next - 4 * DAY + HOUR);
    await run(seller, next + HOUR);
    expect((await salesOf(id)).at(-1)).toMatchObject({ status: 'PAGO', billing_period: 2 });
    expect(await subscription(seller, id)).toMatchObject({ status: 'ACTIVE', successfulBillings: 2 });

    await t.http.post(`/api/subscriptions/${id}/cancel`).set(seller.headers).send({ immediately: true }).expect(200);
    expect(await recurrence(id)).toEqual({ status: 'CANCELADA', cancelled_by: 'USUARIO_RECEBEDOR' });
    expect((await subscription(seller, id)).automaticPix).toMatchObject({ status: 'CANCELLED' });
  });

  it('a cancellation scheduled for the period end sends no renewal for the period it never gives', async () => {
    const seller = await createSeller(t);
    const sale = await create(seller, automaticSale('MONTHLY'));
    const id = sale.subscription.id;
    await pay(seller, sale.id);
    const due = await nextBilling(seller, id);
    const scheduled = (await t.http.post(`/api/subscriptions/${id}/cancel`).set(seller.headers).send({ cancelImmediately: false }).expect(200)).body.data;
    expect(Date.parse(scheduled.scheduledCancellationDate)).toBe(due);
    await run(seller, due - 4 * DAY + HOUR);
    expect(await salesOf(id)).toHaveLength(1);
    await run(seller, due + HOUR);
    expect(await salesOf(id)).toHaveLength(1);
    expect(await subscription(seller, id)).toMatchObject({ status: 'CANCELLED', successfulBillings: 1, automaticPix: { status: 'CANCELLED' } });
    expect(await recurrence(id)).toEqual({ status: 'CANCELADA', cancelled_by: 'USUARIO_RECEBEDOR' });
  });

  it('a renewal billed in one batch with a card renewal before it keeps its due date and is sent to the PSP', async () => {
    const seller = await createSeller(t);
    // The card subscription first: its renewal is the batch's first row, and the sales of a batch are one
    // insert. Weekly, it is due (a week after it began) when the monthly renewal is sent, 4 days early.
    const byCard = await t.http
      .post('/api/sales')
      .set(seller.headers)
      .send({ ...saleBody('CREDIT_CARD', { items: [plan], amount: 3990 }), subscription: { enabled: true, billingCycle: 'WEEKLY' } })
      .expect(201);
    const sale = await create(seller, automaticSale('MONTHLY'));
    await pay(seller, sale.id);
    const id = sale.subscription.id;
    const summary = await run(seller, (await nextBilling(seller, id)) - 4 * DAY + HOUR);
    expect(summary.subscriptions.renewals).toBe(2);

    const [cardRenewal] = (await salesOf(byCard.body.sale.subscription.id)).filter((s) => s.billing_period === 1);
    const [renewal] = (await salesOf(id)).filter((s) => s.billing_period === 1);
    expect(cardRenewal).toMatchObject({ status: 'PAGO', automatic_pix_due_date: null });
    expect(renewal).toMatchObject({ pix_code: null, automatic_pix_due_date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), automatic_pix_sent_at: expect.any(Date) });
    expect(renewal.id).toBeGreaterThan(cardRenewal.id);
  });

  it('a first QR never paid: the subscription never starts and its recurrence is cancelled at the PSP', async () => {
    const seller = await createSeller(t);
    const sale = await create(seller, automaticSale('MONTHLY', {}, { pix: { expiresInDays: 1 } }));
    const id = sale.subscription.id;
    await run(seller, Date.now() + 2 * DAY);
    expect(await subscription(seller, id)).toMatchObject({ status: 'CANCELLED', automaticPix: { status: 'CANCELLED' } });
    expect(await recurrence(id)).toEqual({ status: 'CANCELADA', cancelled_by: 'USUARIO_RECEBEDOR' });
    await payer(seller, id, 'AUTHORIZE').expect(409);
  });

  it('refuses what Pix Automático cannot do, naming the field', async () => {
    const seller = await createSeller(t);
    const refused = async (body: Record<string, unknown>, field: string) => {
      const response = await t.http.post('/api/sales').set(seller.headers).send(body).expect(400);
      expect(JSON.stringify(response.body)).toContain(field);
    };
    await refused(automaticSale('BIWEEKLY'), 'subscription.billingCycle');
    await refused(automaticSale('MONTHLY', {}, { customer: { name: customer.name, email: customer.email } }), 'customer.document');
    await refused({ ...automaticSale('MONTHLY'), paymentMethod: 'BOLETO', pix: undefined, boleto: {} }, 'paymentMethod');
    await refused(automaticSale('MONTHLY', { automaticPix: 'yes' }), 'automaticPix');
    await refused(automaticSale('MONTHLY', { trialDays: 2 }), 'subscription.trialDays');
  });

  it('a renewal sent to the payer’s bank and confirmed by the sandbox events route is backed by the sandbox’s record: ledger:verify passes', async () => {
    const seller = await createSeller(t);
    const sale = await create(seller, automaticSale('MONTHLY'));
    const id = sale.subscription.id;
    await pay(seller, sale.id);
    await run(seller, (await nextBilling(seller, id)) - 4 * DAY + HOUR);
    const sent = (await salesOf(id)).at(-1) as SaleRow;
    expect(sent.automatic_pix_sent_at).not.toBeNull();
    expect((await pay(seller, sent.id)).body.status).toBe('PAGO');
    const verify = await promisify(execFile)(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/ledger/ledger-verify.ts'], {
      env: { ...process.env, DATABASE_URL: process.env.E2E_DATABASE_URL, LOG_FILE: undefined },
    }).then(
      ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(verify.stderr).toBe('');
    expect(verify.code).toBe(0);
  }, 60_000);
});
