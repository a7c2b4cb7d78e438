import { copySubscription, createSeller, TestSeller } from './setup/factories';
import { ServiceProcess, startServiceProcess } from './setup/processes';
import { card, customer } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const SUBSCRIPTIONS = 1000;

/**
 * Two processes of the service on one database run the billing at the same moment over 1,000 due
 * subscriptions: the work is shared (SKIP LOCKED claims), every subscription is charged exactly once
 * for its period, and the sandbox acquirer counts exactly one charge per renewal sale.
 */
describe('Subscription billing with two instances on one database (issue 9)', () => {
  let t: TestApp;
  let seller: TestSeller;
  const instances: ServiceProcess[] = [];
  const startInstance = () => startServiceProcess({ DATABASE_URL: process.env.E2E_DATABASE_URL, LOG_LEVEL: 'warn', DB_POOL_SIZE: '10' });

  beforeAll(async () => {
    t = await startApp();
    seller = await createSeller(t);
    instances.push(...(await Promise.all([startInstance(), startInstance()])));
  }, 90_000);
  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await t.close();
  });

  it('charges each of 1,000 due subscriptions exactly once', async () => {
    const first = await t.http
      .post('/api/sales')
      .set(seller.headers)
      .send({ amount: 2990, paymentMethod: 'CREDIT_CARD', customer, card: card(), items: [{ title: 'Plano', unitPrice: 2990, quantity: 1, tangible: false }], subscription: { enabled: true, billingCycle: 'MONTHLY' } })
      .expect(201);
    const template = first.body.sale.subscription.id as number;
    // 999 more subscriptions like the first one, due at the same instant (the setup, not what is tested).
    await copySubscription(t.db, template, SUBSCRIPTIONS - 1);
    const [{ due }] = await t.db.query(`SELECT max(next_billing_date) AS due FROM subscriptions WHERE seller_id = $1`, [seller.id]);
    const now = new Date(new Date(due).getTime() + 60_000).toISOString();

    const runs = await Promise.all(
      instances.map(({ base }) =>
        fetch(`${base}/api/sandbox/scheduler/run`, {
          method: 'POST',
          headers: { ...seller.headers, 'Content-Type': 'application/json' },
          body: JSON.stringify({ now }),
        }).then(async (response) => ({ status: response.status, body: (await response.json()) as { subscriptions: { renewals: number } } })),
      ),
    );
    expect(runs.map((r) => r.status)).toEqual([200, 200]);
    const renewals = runs.map((r) => r.body.subscriptions.renewals);
    expect(renewals[0] + renewals[1]).toBe(SUBSCRIPTIONS);

    const [counts] = await t.db.query(
      `SELECT count(*)::int AS sales, count(DISTINCT subscription_id)::int AS subscriptions,
              count(*) FILTER (WHERE status = 'PAGO')::int AS paid
         FROM sales WHERE seller_id = $1 AND billing_period = 1`,
      [seller.id],
    );
    expect(counts).toEqual({ sales: SUBSCRIPTIONS, subscriptions: SUBSCRIPTIONS, paid: SUBSCRIPTIONS });
    const [charges] = await t.db.query(
      `SELECT count(*)::int AS charges, count(DISTINCT c.reference)::int AS refs
         FROM sandbox_card_charges c JOIN sales s ON c.reference = s.id::text
        WHERE s.seller_id = $1 AND s.billing_period = 1`,
      [seller.id],
    );
    expect(charges).toEqual({ charges: SUBSCRIPTIONS, refs: SUBSCRIPTIONS });
    const [counters] = await t.db.query(
      `SELECT count(*)::int AS n FROM subscriptions WHERE seller_id = $1 AND current_period = 1 AND successful_billings = 2 AND total_billings = 2 AND status = 'ACTIVE'`,
      [seller.id],
    );
    expect(counters.n).toBe(SUBSCRIPTIONS);

    // The unique index, not only the claim, keeps a period's attempt to one sale.
    await expect(
      t.db.query(
        `INSERT INTO sales (id, provider, seller_id, status, payment_method, amount_cents, customer_name, customer_email, subscription_id, billing_period, billing_attempt)
         SELECT nextval(pg_get_serial_sequence('sales', 'id')), 'sandbox', seller_id, 'PENDENTE', payment_method, amount_cents, customer_name, customer_email, subscription_id, 1, 0
           FROM sales WHERE seller_id = $1 AND billing_period = 1 LIMIT 1`,
        [seller.id],
      ),
    ).rejects.toThrow(/sales_subscription_period_attempt_unique/);

    // Run again at the same moment: nothing more is due.
    const again = await Promise.all(
      instances.map(({ base }) =>
        fetch(`${base}/api/sandbox/scheduler/run`, { method: 'POST', headers: { ...seller.headers, 'Content-Type': 'application/json' }, body: JSON.stringify({ now }) }).then(
          (r) => r.json() as Promise<{ subscriptions: { renewals: number } }>,
        ),
      ),
    );
    expect(again.map((r) => r.subscriptions.renewals)).toEqual([0, 0]);
  }, 180_000);
  it('collects each Pix Automático period once when both instances send and settle the renewals together (issue 22)', async () => {
    const automaticSeller = await createSeller(t);
    const count = 40;
    const ids: number[] = [];
    for (let n = 0; n < count; n += 1) {
      const created = await t.http
        .post('/api/sales')
        .set(automaticSeller.headers)
        .send({ amount: 1990, paymentMethod: 'PIX', customer, pix: {}, items: [{ title: 'Clube', unitPrice: 1990, quantity: 1, tangible: false }], subscription: { enabled: true, billingCycle: 'MONTHLY', automaticPix: true } })
        .expect(201);
      await t.http.post(`/api/sandbox/sales/${created.body.sale.id}/events`).set(automaticSeller.headers).send({ event: 'PAYMENT_CONFIRMED' }).expect(200);
      ids.push(created.body.sale.subscription.id);
    }
    const [{ due }] = await t.db.query(`SELECT max(next_billing_date) AS due FROM subscriptions WHERE seller_id = $1`, [automaticSeller.id]);
    const both = (at: number) =>
      Promise.all(
        instances.map(({ base }) =>
          fetch(`${base}/api/sandbox/scheduler/run`, {
            method: 'POST',
            headers: { ...automaticSeller.headers, 'Content-Type': 'application/json' },
            body: JSON.stringify({ now: new Date(at).toISOString() }),
          }).then((response) => response.status),
        ),
      );
    const dueAt = new Date(due).getTime();
    expect(await both(dueAt - 4 * 86_400_000 + 3_600_000)).toEqual([200, 200]);
    expect(await both(dueAt + 3_600_000)).toEqual([200, 200]);

    const [renewals] = await t.db.query(
      `SELECT count(*)::int AS sales, count(DISTINCT subscription_id)::int AS subscriptions, count(*) FILTER (WHERE status = 'PAGO')::int AS paid
         FROM sales WHERE seller_id = $1 AND billing_period = 1`,
      [automaticSeller.id],
    );
    expect(renewals).toEqual({ sales: count, subscriptions: count, paid: count });
    const [charges] = await t.db.query(
      `SELECT count(*)::int AS charges, count(*) FILTER (WHERE c.status = 'CONCLUIDA')::int AS collected
         FROM sandbox_recurring_charges c JOIN sales s ON c.txid = 'GWREC' || lpad(s.id::text, 21, '0') WHERE s.seller_id = $1`,
      [automaticSeller.id],
    );
    expect(charges).toEqual({ charges: count, collected: count });
    const [counters] = await t.db.query(`SELECT count(*)::int AS n FROM subscriptions WHERE id = ANY($1::int[]) AND successful_billings = 2 AND status = 'ACTIVE'`, [ids]);
    expect(counters.n).toBe(count);
  }, 120_000);
});
