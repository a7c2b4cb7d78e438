import { BillingService } from '../../src/payments/billing.service';
import { ChargesService } from '../../src/payments/charges.service';
import { adminHeaders, copySubscription, createSeller, TestSeller } from './setup/factories';
import { Receiver } from './setup/receiver';
import { balanceOf, card, customer } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const DAY = 86_400_000;
/** The recovery job's age threshold here (PROVIDER_RECOVERY_AFTER_SECONDS), by the real clock. */
const RECOVERY_AFTER_SECONDS = 2;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fixed dates for every subscription of a test, so that two sellers' rows compare column by column. */
const STARTED = new Date('2031-01-01T12:00:00.000Z');
const DUE = new Date('2031-01-31T12:00:00.000Z');

type Row = Record<string, unknown>;


/**
 * The billing job renews due subscriptions a claimed batch at a time (issue 11): one transaction opens
 * every renewal, the cards are charged outside any transaction, one transaction applies every answer.
 * These tests hold it to what a seller can check: each period renewed once, the same money, statuses,
 * ledger and postbacks as the one-by-one path, the dunning path for a refused card, and the recovery
 * of a batch interrupted between the charges and their outcomes.
 */
describe('Subscription billing in batches (issue 11)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let billing: BillingService;

  beforeAll(async () => {
    t = await startApp({ PROVIDER_RECOVERY_AFTER_SECONDS: String(RECOVERY_AFTER_SECONDS) });
    receiver = await Receiver.start();
    billing = t.app.get(BillingService);
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  /** A subscription sale; its subscription's id. */
  const subscribe = async (seller: TestSeller, method: 'CREDIT_CARD' | 'PIX', options: { number?: string; amount?: number; cycle?: string } = {}) => {
    const amount = options.amount ?? 4990;
    const response = await t.http
      .post('/api/sales')
      .set(seller.headers)
      .send({
        amount,
        paymentMethod: method,
        customer,
        items: [{ title: 'Plano Pro', unitPrice: amount, quantity: 1, tangible: false, productId: 77 }],
        ...(method === 'PIX' ? { pix: {} } : { card: card(options.number) }),
        subscription: { enabled: true, billingCycle: options.cycle ?? 'MONTHLY' },
        postbackUrl: `${receiver.url}/seller-${seller.id}`,
      });
    expect(response.status).toBe(201);
    if (method === 'PIX') {
      expect((await t.http.post(`/api/sandbox/sales/${response.body.sale.id}/events`).set(seller.headers).send({ event: 'PAYMENT_CONFIRMED' })).status).toBe(200);
    }
    return response.body.sale.subscription.id as number;
  };
  /** Every subscription of the seller set to the same started, paid and due dates. */
  const fixDates = (seller: TestSeller, due = DUE) =>
    t.db.query(
      `UPDATE subscriptions SET started_at = $2, last_payment_date = $2, period_due_at = $2, next_billing_date = $3, created_at = $2 WHERE seller_id = $1`,
      [seller.id, STARTED, due],
    );

  /** Runs `work` while every renewal charge of `amountCents` takes 0.5 s at the sandbox acquirer (a slow acquirer). */
  async function withSlowRenewalCharges<T>(amountCents: number, work: () => Promise<T>): Promise<T> {
    const name = `slow_acquirer_${amountCents}`;
    await t.db.query(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.5); RETURN NEW; END $$`);
    await t.db.query(
      `CREATE TRIGGER ${name} BEFORE INSERT ON sandbox_card_charges FOR EACH ROW WHEN (NEW.kind = 'RENEWAL' AND NEW.amount_cents = ${amountCents}) EXECUTE FUNCTION ${name}()`,
    );
    try {
      return await work();
    } finally {
      await t.db.query(`DROP TRIGGER ${name} ON sandbox_card_charges`);
      await t.db.query(`DROP FUNCTION ${name}()`);
    }
  }

  /** What a seller can check of its billing: subscriptions, renewal sales with items, history and ledger, balance, the outbox from `sinceOutboxId` on. */
  async function state(seller: TestSeller, sinceOutboxId: number) {
    const subscriptions: Row[] = await t.db.query(`SELECT * FROM subscriptions WHERE seller_id = $1 ORDER BY id`, [seller.id]);
    const sales: Row[] = await t.db.query(`SELECT * FROM sales WHERE seller_id = $1 AND billing_period > 0 ORDER BY subscription_id, billing_period, billing_attempt`, [seller.id]);
    const details = [];
    for (const sale of sales) {
      details.push({
        sale,
        items: await t.db.query(`SELECT * FROM sale_items WHERE sale_id = $1 ORDER BY position`, [sale.id]),
        history: await t.db.query(`SELECT previous_status, status FROM sale_status_changes WHERE sale_id = $1 ORDER BY id`, [sale.id]),
        ledger: await t.db.query(`SELECT account, provider, amount_cents, kind, reference_type FROM ledger_entries WHERE reference_type = 'SALE' AND reference_id = $1 ORDER BY id`, [sale.id]),
        charges: await t.db.query(`SELECT kind, outcome, amount_cents, installments FROM sandbox_card_charges WHERE reference = $1`, [String(sale.id)]),
        postbacks: (await t.db.query(`SELECT channel, payload FROM outbox_events WHERE aggregate_key = $1 ORDER BY id`, [`sale:${sale.id}`])) as Row[],
      });
    }
    const subscriptionPostbacks = [];
    for (const subscription of subscriptions) {
      subscriptionPostbacks.push(await t.db.query(`SELECT channel, payload FROM outbox_events WHERE aggregate_key = $1 AND id > $2 ORDER BY id`, [`subscription:${subscription.id}`, sinceOutboxId]));
    }
    return { subscriptions, details, subscriptionPostbacks, balance: await balanceOf(t, seller) };
  }

  it('renews a batch: statuses, fees, ledger, balance, subscription columns, postbacks, the refused card dunned and a late one cancelled', async () => {
    const batched = await createSeller(t);
    for (const seller of [batched]) {
      await subscribe(seller, 'CREDIT_CARD');
      await subscribe(seller, 'CREDIT_CARD', { amount: 12_345, cycle: 'WEEKLY' });
      await subscribe(seller, 'CREDIT_CARD', { number: '4000000000000341' }); // renewals refused
      await subscribe(seller, 'CREDIT_CARD', { number: '4000000000000341', amount: 2990 }); // charged late, below
      await subscribe(seller, 'PIX');
      await subscribe(seller, 'PIX', { amount: 101 });
      await fixDates(seller);
      // One renewal charged ten days late: refused, its grace period is over in the same run.
      await t.db.query(`UPDATE subscriptions SET next_billing_date = $2 WHERE seller_id = $1 AND amount_cents = 2990`, [seller.id, new Date(DUE.getTime() - 10 * DAY)]);
    }
    const now = new Date(DUE.getTime() + 60_000);
    const [{ mark }] = await t.db.query(`SELECT COALESCE(max(id), 0)::int AS mark FROM outbox_events`);
    expect(await billing.runBilling(now, batched.id)).toEqual({ renewals: 6, retries: 0, cancelled: 1, pastDue: 0 });
    const after = await state(batched, mark);

    // What those rows say, in cents (platform.md §4): 49.90 by card pays 2.38 of fees, 47.52 net, 4.75 held.
    const paid = after.details.find(({ sale }) => sale.payment_method === 'CREDIT_CARD' && sale.status === 'PAGO' && Number(sale.amount_cents) === 4990);
    expect(paid?.sale).toMatchObject({ system_fee_cents: '238', net_amount_cents: '4752', reserve_amount_cents: '475', completed_at: now });
    expect(paid?.history).toEqual([
      { previous_status: null, status: 'PENDENTE' },
      { previous_status: 'PENDENTE', status: 'EM_PROCESSAMENTO' },
      { previous_status: 'EM_PROCESSAMENTO', status: 'PAGO' },
    ]);
    // Double entry: the seller's net (reserve held), the platform's fee, against what the acquirer owes.
    expect(paid?.ledger).toEqual([
      { account: 'AVAILABLE', provider: null, amount_cents: '4277', kind: 'SALE_PAID', reference_type: 'SALE' },
      { account: 'BLOCKED', provider: null, amount_cents: '475', kind: 'SALE_PAID', reference_type: 'SALE' },
      { account: 'FEE_REVENUE', provider: null, amount_cents: '238', kind: 'SALE_PAID', reference_type: 'SALE' },
      { account: 'ACQUIRER_RECEIVABLE', provider: 'sandbox', amount_cents: '-4990', kind: 'SALE_PAID', reference_type: 'SALE' },
    ]);
    expect(paid?.charges).toEqual([{ kind: 'RENEWAL', outcome: 'APPROVED', amount_cents: '4990', installments: 1 }]);
    expect(paid?.postbacks.map(({ payload }) => [(payload as Row).previousStatus, (payload as Row).status])).toEqual([
      ['PENDENTE', 'EM_PROCESSAMENTO'],
      ['EM_PROCESSAMENTO', 'PAGO'],
    ]);
    const statuses = after.details.map(({ sale }) => [sale.payment_method, Number(sale.amount_cents), sale.billing_attempt, sale.status]);
    expect(statuses).toEqual([
      ['CREDIT_CARD', 4990, 0, 'PAGO'],
      ['CREDIT_CARD', 12_345, 0, 'PAGO'],
      ['CREDIT_CARD', 4990, 0, 'RECUSADO'],
      ['CREDIT_CARD', 2990, 0, 'RECUSADO'],
      ['PIX', 4990, 0, 'PENDENTE'],
      ['PIX', 101, 0, 'PENDENTE'],
    ]);
    expect(after.details.filter(({ sale }) => sale.status !== 'PAGO').flatMap(({ ledger }) => ledger)).toEqual([]);
    const pix = after.details.filter(({ sale }) => sale.payment_method === 'PIX');
    expect(pix.map(({ postbacks }) => postbacks.map(({ payload }) => [(payload as Row).previousStatus, (payload as Row).status]))).toEqual([[[null, 'PENDENTE']], [[null, 'PENDENTE']]]);
    expect(pix.every(({ sale }) => String(sale.pix_code).includes(`SALE${sale.id}`))).toBe(true);
    // The refused card takes the dunning path: PAST_DUE, retried a day after its billing date, announced.
    const refused = after.subscriptions.find((s) => Number(s.amount_cents) === 4990 && s.card_last_four === '0341');
    expect(refused).toMatchObject({ status: 'PAST_DUE', failed_billings: 1, total_billings: 2, last_payment_status: 'RECUSADO', past_due_since: DUE, next_retry_at: new Date(DUE.getTime() + DAY) });
    expect(after.subscriptionPostbacks[after.subscriptions.indexOf(refused as Row)].map((row: Row) => [(row.payload as Row).previousStatus, (row.payload as Row).status])).toEqual([
      ['ACTIVE', 'PAST_DUE'],
    ]);
    expect(after.subscriptions.find((s) => Number(s.amount_cents) === 2990)).toMatchObject({ status: 'CANCELLED', next_billing_date: null });
    const onSeller = (entry: Row) => entry.account === 'AVAILABLE' || entry.account === 'BLOCKED';
    const credited = after.details.reduce((sum, { ledger }) => sum + ledger.filter(onSeller).reduce((inner: number, entry: Row) => inner + Number(entry.amount_cents), 0), 0);
    expect(credited).toBe(4752 + 11_813);

    // A retry is due a day later, and is made (one by one) like any retry.
    expect((await billing.runBilling(new Date(DUE.getTime() + DAY + 60_000), batched.id)).retries).toBe(1);
    expect(await t.db.query(`SELECT billing_attempt, status FROM sales WHERE subscription_id = $1 AND billing_period = 1 ORDER BY billing_attempt`, [refused?.id])).toEqual([
      { billing_attempt: 0, status: 'RECUSADO' },
      { billing_attempt: 1, status: 'RECUSADO' },
    ]);
  });

  it('renews each due subscription once when two billing runs race, one sale and one charge per period', async () => {
    const seller = await createSeller(t);
    const template = await subscribe(seller, 'CREDIT_CARD', { amount: 2990 });
    const count = 1200; // more than two claimed batches
    await copySubscription(t.db, template, count - 1);
    await fixDates(seller);
    const before = await balanceOf(t, seller);
    const now = new Date(DUE.getTime() + 60_000);

    const runs = await Promise.all([billing.runBilling(now, seller.id), billing.runBilling(now, seller.id)]);
    expect(runs[0].renewals + runs[1].renewals).toBe(count);
    const [sales] = await t.db.query(
      `SELECT count(*)::int AS sales, count(DISTINCT subscription_id)::int AS subscriptions, count(*) FILTER (WHERE status = 'PAGO')::int AS paid
         FROM sales WHERE seller_id = $1 AND billing_period = 1`,
      [seller.id],
    );
    expect(sales).toEqual({ sales: count, subscriptions: count, paid: count });
    const [charges] = await t.db.query(
      `SELECT count(*)::int AS charges, count(DISTINCT c.reference)::int AS refs FROM sandbox_card_charges c JOIN sales s ON c.reference = s.id::text
        WHERE s.seller_id = $1 AND s.billing_period = 1`,
      [seller.id],
    );
    expect(charges).toEqual({ charges: count, refs: count });
    // 29.90: 1.19 + 0.39 of fees, 28.32 net, of which 2.83 held.
    expect(await balanceOf(t, seller)).toEqual({ available: before.available + count * 2549, blocked: before.blocked + count * 283, total: before.total + count * 2832 });
    const [ledger] = await t.db.query(
      `SELECT count(*)::int AS entries, count(DISTINCT reference_id)::int AS sales FROM ledger_entries e JOIN sales s ON e.reference_type = 'SALE' AND e.reference_id = s.id
        WHERE s.seller_id = $1 AND s.billing_period = 1 AND e.account IN ('AVAILABLE', 'BLOCKED')`,
      [seller.id],
    );
    expect(ledger).toEqual({ entries: 2 * count, sales: count });
    expect(await t.db.query(`SELECT count(*)::int AS n FROM subscriptions WHERE seller_id = $1 AND current_period = 1 AND successful_billings = 2 AND status = 'ACTIVE'`, [seller.id])).toEqual([
      { n: count },
    ]);
    expect(await billing.runBilling(now, seller.id)).toEqual({ renewals: 0, retries: 0, cancelled: 0, pastDue: 0 });
  }, 120_000);

  it('skips a period whose sale exists already (the unique index decides) and bills the rest of its batch', async () => {
    const seller = await createSeller(t);
    const [taken, free] = [await subscribe(seller, 'CREDIT_CARD'), await subscribe(seller, 'CREDIT_CARD')];
    await fixDates(seller);
    // Another instance wrote period 1 of `taken` first.
    await t.db.query(
      `INSERT INTO sales (id, provider, seller_id, status, payment_method, amount_cents, customer_name, customer_email, subscription_id, billing_period, billing_attempt)
       SELECT nextval(pg_get_serial_sequence('sales', 'id')), 'sandbox', seller_id, 'PENDENTE', payment_method, amount_cents, customer_name, customer_email, id, 1, 0
         FROM subscriptions WHERE id = $1`,
      [taken],
    );
    expect(await billing.runBilling(new Date(DUE.getTime() + 60_000), seller.id)).toEqual({ renewals: 1, retries: 0, cancelled: 0, pastDue: 0 });
    const sales = await t.db.query(`SELECT subscription_id, status FROM sales WHERE seller_id = $1 AND billing_period = 1 ORDER BY subscription_id`, [seller.id]);
    expect(sales).toEqual([
      { subscription_id: taken, status: 'PENDENTE' },
      { subscription_id: free, status: 'PAGO' },
    ]);
    expect(await t.db.query(`SELECT id, current_period, total_billings FROM subscriptions WHERE seller_id = $1 ORDER BY id`, [seller.id])).toEqual([
      { id: taken, current_period: 0, total_billings: 1 },
      { id: free, current_period: 1, total_billings: 2 },
    ]);
  });

  it('bills a subscription due after 500 that stay due (their period written elsewhere): they do not fill every claim of the run', async () => {
    const seller = await createSeller(t);
    const template = await subscribe(seller, 'CREDIT_CARD', { amount: 2990 });
    const normal = await subscribe(seller, 'CREDIT_CARD', { amount: 1990 });
    await copySubscription(t.db, template, 499);
    await fixDates(seller);
    // 500 subscriptions due a day before the last one, each with its period 1 written already.
    await t.db.query(`UPDATE subscriptions SET next_billing_date = $2 WHERE seller_id = $1 AND amount_cents = 2990`, [seller.id, new Date(DUE.getTime() - DAY)]);
    // Period 1 of every 29.90 subscription written already (the state the 'skips a period' test leaves).
    await t.db.query(
      `INSERT INTO sales (id, provider, seller_id, status, payment_method, amount_cents, customer_name, customer_email, subscription_id, billing_period, billing_attempt)
       SELECT nextval(pg_get_serial_sequence('sales', 'id')), 'sandbox', seller_id, 'PENDENTE', payment_method, amount_cents, customer_name, customer_email, id, 1, 0
         FROM subscriptions WHERE seller_id = $1 AND amount_cents = 2990`,
      [seller.id],
    );
    expect(await billing.runBilling(new Date(DUE.getTime() + 60_000), seller.id)).toEqual({ renewals: 1, retries: 0, cancelled: 0, pastDue: 0 });
    expect(await t.db.query(`SELECT u.current_period, s.status FROM sales s JOIN subscriptions u ON u.id = s.subscription_id WHERE u.id = $1 AND s.billing_period = 1`, [normal])).toEqual([{ current_period: 1, status: 'PAGO' }]);
  }, 60_000);

  it('charges every card of a batch whose charges take longer than the recovery threshold in all: none is voided by the recovery job while it waits its turn', async () => {
    const seller = await createSeller(t);
    const count = 24; // 6 rounds of BILLING_CONCURRENCY / 2 charges at once
    for (let i = 0; i < count; i += 1) await subscribe(seller, 'CREDIT_CARD', { amount: 3131 });
    await fixDates(seller);
    const before = await balanceOf(t, seller);
    // A slow acquirer: each renewal charge takes 0.5 s, so the batch's last charges go out about 3 s after
    // their sales were committed EM_PROCESSAMENTO, past the recovery threshold (2 s).
    const recovery = t.app.get(ChargesService);
    let billingDone = false;
    const recovering = (async () => {
      // The recovery job, as the scheduler runs it meanwhile (every minute in production; often here).
      while (!billingDone) {
        await recovery.recoverCharges(seller.id);
        await sleep(200);
      }
    })();
    try {
      const summary = await withSlowRenewalCharges(3131, () => billing.runBilling(new Date(DUE.getTime() + 60_000), seller.id));
      expect(summary.renewals).toBe(count);
    } finally {
      billingDone = true;
      await recovering;
    }
    const [sales] = await t.db.query(
      `SELECT count(*)::int AS sales, count(*) FILTER (WHERE status = 'PAGO')::int AS paid FROM sales WHERE seller_id = $1 AND billing_period = 1`,
      [seller.id],
    );
    expect(sales).toEqual({ sales: count, paid: count });
    const [charges] = await t.db.query(
      `SELECT count(*) FILTER (WHERE c.outcome = 'APPROVED')::int AS approved, count(*) FILTER (WHERE c.outcome = 'VOIDED')::int AS voided
         FROM sandbox_card_charges c JOIN sales s ON c.reference = s.id::text WHERE s.seller_id = $1 AND s.billing_period = 1`,
      [seller.id],
    );
    expect(charges).toEqual({ approved: count, voided: 0 });
    expect(await t.db.query(`SELECT count(*)::int AS n FROM subscriptions WHERE seller_id = $1 AND status = 'ACTIVE' AND successful_billings = 2`, [seller.id])).toEqual([{ n: count }]);
    // 31.31: 1.25 + 0.39 of fees, 29.67 net, 2.97 held.
    expect(await balanceOf(t, seller)).toEqual({ available: before.available + count * 2670, blocked: before.blocked + count * 297, total: before.total + count * 2967 });
  }, 60_000);

  it('does not charge a renewal whose subscription is cancelled or paused while its card waits its turn in the batch', async () => {
    const seller = await createSeller(t);
    const count = 24; // 6 rounds of BILLING_CONCURRENCY / 2 charges at once
    for (let i = 0; i < count; i += 1) await subscribe(seller, 'CREDIT_CARD', { amount: 3232 });
    await fixDates(seller);
    const before = await balanceOf(t, seller);
    const renewals = () =>
      t.db.query(
        `SELECT s.id AS sale_id, s.subscription_id, c.outcome FROM sales s LEFT JOIN sandbox_card_charges c ON c.reference = s.id::text
          WHERE s.seller_id = $1 AND s.billing_period = 1 ORDER BY s.id`,
        [seller.id],
      ) as Promise<Array<{ sale_id: number; subscription_id: number; outcome: string | null }>>;
    let stopped: Array<{ sale_id: number; subscription_id: number }> = [];
    await withSlowRenewalCharges(3232, async () => {
      const run = billing.runBilling(new Date(DUE.getTime() + 60_000), seller.id);
      const settled = run.then(() => null, (error: unknown) => error);
      // A first round charged: the batch is under way; its last cards wait about 2 s more for their turn.
      const deadline = Date.now() + 10_000;
      while ((await renewals()).filter((row) => row.outcome === 'APPROVED').length < 4 && Date.now() < deadline) await sleep(50);
      stopped = (await renewals()).filter((row) => row.outcome === null).slice(-5);
      expect(stopped).toHaveLength(5);
      for (const { subscription_id: id } of stopped.slice(0, 3)) await t.http.post(`/api/subscriptions/${id}/cancel`).set(seller.headers).send({ reason: 'Customer asked' }).expect(200);
      for (const { subscription_id: id } of stopped.slice(3)) await t.http.post(`/api/subscriptions/${id}/pause`).set(seller.headers).send({}).expect(200);
      expect(await settled).toBeNull();
    });
    const stoppedSales = new Set(stopped.map((row) => row.sale_id));
    const rows: Array<{ id: number; status: string; outcome: string | null; subscription: string }> = await t.db.query(
      `SELECT s.id, s.status, c.outcome, sub.status AS subscription FROM sales s JOIN subscriptions sub ON sub.id = s.subscription_id
         LEFT JOIN sandbox_card_charges c ON c.reference = s.id::text WHERE s.seller_id = $1 AND s.billing_period = 1 ORDER BY s.id`,
      [seller.id],
    );
    expect(rows).toHaveLength(count);
    const byId = (id: number) => rows.find((row) => row.id === id);
    expect(stopped.map((row) => byId(row.sale_id))).toEqual(
      stopped.map((row, i) => ({ id: row.sale_id, status: 'FALHA', outcome: 'VOIDED', subscription: i < 3 ? 'CANCELLED' : 'PAUSED' })),
    );
    expect(rows.filter((row) => !stoppedSales.has(row.id)).map(({ status, outcome, subscription }) => ({ status, outcome, subscription }))).toEqual(
      Array.from({ length: count - 5 }, () => ({ status: 'PAGO', outcome: 'APPROVED', subscription: 'ACTIVE' })),
    );
    // 32.32: 1.29 + 0.39 of fees, 30.64 net, 3.06 held; nothing for the five stopped.
    expect(await balanceOf(t, seller)).toEqual({ available: before.available + (count - 5) * 2758, blocked: before.blocked + (count - 5) * 306, total: before.total + (count - 5) * 3064 });
  }, 60_000);

  it('leaves a renewal whose outcome could not be saved EM_PROCESSAMENTO with its one charge, the rest of the batch paid; the recovery job pays it once', async () => {
    const seller = await createSeller(t);
    const stuck = await subscribe(seller, 'CREDIT_CARD', { amount: 4242 });
    await subscribe(seller, 'CREDIT_CARD');
    await subscribe(seller, 'CREDIT_CARD');
    await fixDates(seller);
    const before = await balanceOf(t, seller);
    // The outcome of the 42.42 renewal cannot be saved: the batch's transaction fails, then its own.
    await t.db.query(`CREATE FUNCTION fault_batch_outcome() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'outcome refused (test)'; END $$`);
    await t.db.query(
      `CREATE TRIGGER fault_batch_outcome BEFORE UPDATE ON sales FOR EACH ROW
        WHEN (OLD.status = 'EM_PROCESSAMENTO' AND NEW.status <> OLD.status AND NEW.amount_cents = 4242) EXECUTE FUNCTION fault_batch_outcome()`,
    );
    try {
      expect((await billing.runBilling(new Date(DUE.getTime() + 60_000), seller.id)).renewals).toBe(3);
    } finally {
      await t.db.query(`DROP TRIGGER fault_batch_outcome ON sales`);
      await t.db.query(`DROP FUNCTION fault_batch_outcome()`);
    }
    const renewals = async () =>
      (await t.db.query(`SELECT id, amount_cents, status FROM sales WHERE seller_id = $1 AND billing_period = 1 ORDER BY amount_cents`, [seller.id])) as Array<{
        id: number;
        amount_cents: string;
        status: string;
      }>;
    const [left, ...paid] = await renewals();
    expect([left.amount_cents, left.status]).toEqual(['4242', 'EM_PROCESSAMENTO']);
    expect(paid.map((sale) => sale.status)).toEqual(['PAGO', 'PAGO']);
    expect(await t.db.query(`SELECT outcome FROM sandbox_card_charges WHERE reference = $1`, [String(left.id)])).toEqual([{ outcome: 'APPROVED' }]);
    expect(await balanceOf(t, seller)).toEqual({ available: before.available + 2 * 4277, blocked: before.blocked + 2 * 475, total: before.total + 2 * 4752 });

    await sleep(RECOVERY_AFTER_SECONDS * 1000 + 300);
    const run = await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({}).expect(200);
    expect(run.body.recoveredCharges).toBeLessThanOrEqual(1); // the every-minute job may have done it first
    expect((await renewals()).map((sale) => sale.status)).toEqual(['PAGO', 'PAGO', 'PAGO']);
    expect(await t.db.query(`SELECT count(*)::int AS n FROM sandbox_card_charges WHERE reference = $1`, [String(left.id)])).toEqual([{ n: 1 }]);
    // 42.42: 1.69 + 0.39 of fees, 40.34 net, 4.03 held; credited once.
    expect(await t.db.query(`SELECT account, amount_cents FROM ledger_entries WHERE reference_type = 'SALE' AND reference_id = $1 ORDER BY id`, [left.id])).toEqual([
      { account: 'AVAILABLE', amount_cents: '3631' },
      { account: 'BLOCKED', amount_cents: '403' },
      { account: 'FEE_REVENUE', amount_cents: '208' },
      { account: 'ACQUIRER_RECEIVABLE', amount_cents: '-4242' },
    ]);
    expect(await balanceOf(t, seller)).toEqual({ available: before.available + 2 * 4277 + 3631, blocked: before.blocked + 2 * 475 + 403, total: before.total + 2 * 4752 + 4034 });
    expect(await t.db.query(`SELECT status, successful_billings, last_payment_status FROM subscriptions WHERE id = $1`, [stuck])).toEqual([
      { status: 'ACTIVE', successful_billings: 2, last_payment_status: 'PAGO' },
    ]);
  }, 60_000);

  // Issue 19, point 7: a blocked seller's subscriptions kept billing. Decided: while a seller is blocked no
  // renewal of its subscriptions is charged (its customers are not charged for an account under review);
  // they stay due and are billed by the first run after it is unblocked.
  it('bills no subscription of a blocked seller, and bills them once it is unblocked', async () => {
    const blocked = await createSeller(t);
    const other = await createSeller(t);
    const blockedSubscription = await subscribe(blocked, 'CREDIT_CARD');
    await copySubscription(t.db, blockedSubscription, 4);
    const otherSubscription = await subscribe(other, 'CREDIT_CARD');
    await fixDates(blocked);
    await fixDates(other);
    await t.http.patch(`/admin/sellers/${blocked.id}`).set(adminHeaders).send({ blocked: true }).expect(200);
    const now = new Date(DUE.getTime() + 60_000);
    // Scoped to these two sellers: the run's database holds every other file's subscriptions, due by 2031.
    for (const seller of [blocked, other]) await billing.runBilling(now, seller.id);

    const renewals = async (seller: TestSeller) =>
      (await t.db.query(`SELECT count(*)::int AS n FROM sales WHERE seller_id = $1 AND billing_period = 1`, [seller.id]))[0].n as number;
    expect(await renewals(blocked)).toBe(0);
    expect(await renewals(other)).toBe(1);
    expect((await t.db.query(`SELECT status FROM subscriptions WHERE id = $1`, [otherSubscription]))[0].status).toBe('ACTIVE');

    await t.http.patch(`/admin/sellers/${blocked.id}`).set(adminHeaders).send({ blocked: false }).expect(200);
    await billing.runBilling(now, blocked.id);
    expect(await renewals(blocked)).toBe(5);
  }, 60_000);
});
