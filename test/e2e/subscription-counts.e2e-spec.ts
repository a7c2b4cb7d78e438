import { SubscriptionsScheduler } from '../../src/subscriptions/subscriptions.scheduler';
import { createSeller, TestSeller } from './setup/factories';
import { card, customer } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const STATUSES = ['PENDING', 'ACTIVE', 'TRIALING', 'PAUSED', 'CANCELLED', 'PAST_DUE', 'EXPIRED'] as const;
const plan = { title: 'Plano Pro', unitPrice: 4990, quantity: 1, tangible: false };
const subscriptionSale = (method: 'CREDIT_CARD' | 'PIX', cardNumber = '4111111111111111') => ({
  amount: 4990,
  paymentMethod: method,
  customer,
  items: [plan],
  ...(method === 'PIX' ? { pix: {} } : { card: card(cardNumber) }),
  subscription: { enabled: true, billingCycle: 'MONTHLY' },
});

/**
 * GET /api/subscriptions' first page answers spec 4.7's `pagination.total` from subscription_counts,
 * which triggers on subscriptions keep in the transaction of each change (issue 24). Whatever moves the
 * subscriptions (creation, cancellation, pause, a billing run, writers at once, the compaction between
 * them), every total the API answers is the count of the seller's rows.
 */
describe('Subscription totals (spec 4.7) from the per-seller counts', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const create = async (seller: TestSeller, body: Record<string, unknown>): Promise<number> => {
    const response = await t.http.post('/api/sales').set(seller.headers).send(body);
    expect(response.status).toBe(201);
    return response.body.sale.subscription.id as number;
  };
  const total = async (seller: TestSeller, query = ''): Promise<number> =>
    (await t.http.get(`/api/subscriptions?limit=5${query}`).set(seller.headers).expect(200)).body.data.pagination.total;

  /** The total the API answers unfiltered and for each status, beside the count of the seller's rows. */
  async function totals(seller: TestSeller): Promise<{ answered: Record<string, number>; counted: Record<string, number> }> {
    const answered: Record<string, number> = { all: await total(seller) };
    for (const status of STATUSES) answered[status] = await total(seller, `&status=${status}`);
    const rows: Array<{ status: string; n: string }> = await t.db.query('SELECT status, count(*) AS n FROM subscriptions WHERE seller_id = $1 GROUP BY status', [seller.id]);
    const counted: Record<string, number> = { all: rows.reduce((sum, row) => sum + Number(row.n), 0) };
    for (const status of STATUSES) counted[status] = Number(rows.find((row) => row.status === status)?.n ?? 0);
    return { answered, counted };
  }

  const compact = () => t.app.get(SubscriptionsScheduler).compactCounts();
  const countRows = async (seller: TestSeller): Promise<Array<{ status: string; rows: number }>> =>
    (await t.db.query('SELECT status, count(*)::int AS rows FROM subscription_counts WHERE seller_id = $1 GROUP BY status ORDER BY status', [seller.id])) as Array<{
      status: string;
      rows: number;
    }>;

  it('answers the seller’s totals through creation, cancellation, pause and a billing run, and after the counts are compacted', async () => {
    const seller = await createSeller(t);
    const other = await createSeller(t);
    const approved = [];
    for (let i = 0; i < 5; i += 1) approved.push(await create(seller, subscriptionSale('CREDIT_CARD')));
    for (let i = 0; i < 3; i += 1) await create(seller, subscriptionSale('CREDIT_CARD', '4000000000000341')); // renewals refused
    for (let i = 0; i < 2; i += 1) await create(seller, subscriptionSale('PIX'));
    await create(other, subscriptionSale('CREDIT_CARD'));
    await t.http.post(`/api/subscriptions/${approved[0]}/cancel`).set(seller.headers).send({}).expect(200);
    await t.http.post(`/api/subscriptions/${approved[1]}/cancel`).set(seller.headers).send({ cancelImmediately: true }).expect(200);
    await t.http.post(`/api/subscriptions/${approved[2]}/pause`).set(seller.headers).expect(200);
    // A month later: the renewals of the refusing cards fail and those subscriptions fall PAST_DUE, in batch.
    await t.http
      .post('/api/sandbox/scheduler/run')
      .set(seller.headers)
      .send({ now: new Date(Date.now() + 31 * 86_400_000).toISOString() })
      .expect(200);

    const moved = await totals(seller);
    expect(moved.counted).toMatchObject({ all: 10, CANCELLED: 2, PAUSED: 1, PAST_DUE: 3 });
    expect(moved.answered).toEqual(moved.counted);
    expect(await total(other)).toBe(1);
    // A search is counted on the rows themselves, and agrees.
    expect(await total(seller, `&search=${encodeURIComponent(customer.email)}`)).toBe(10);

    await compact();
    const compacted = await countRows(seller);
    expect(compacted.every((row) => row.rows === 1)).toBe(true);
    expect((await totals(seller)).answered).toEqual(moved.counted);
    expect(await total(other)).toBe(1);
  });

  it('stays exact with creations, cancellations and compactions running at once', async () => {
    const seller = await createSeller(t);
    const first = await Promise.all(Array.from({ length: 12 }, () => create(seller, subscriptionSale('CREDIT_CARD'))));
    let compacting = true;
    const compactions = (async () => {
      let passes = 0;
      while (compacting) {
        await compact();
        passes += 1;
      }
      return passes;
    })();
    await Promise.all([
      ...Array.from({ length: 12 }, () => create(seller, subscriptionSale('CREDIT_CARD'))),
      ...first.slice(0, 6).map((id) => t.http.post(`/api/subscriptions/${id}/cancel`).set(seller.headers).send({}).expect(200)),
      ...first.slice(6, 9).map((id) => t.http.post(`/api/subscriptions/${id}/pause`).set(seller.headers).expect(200)),
    ]);
    compacting = false;
    expect(await compactions).toBeGreaterThan(0);

    const before = await totals(seller);
    expect(before.counted).toMatchObject({ all: 24, CANCELLED: 6, PAUSED: 3, ACTIVE: 15 });
    expect(before.answered).toEqual(before.counted);
    await compact();
    expect((await totals(seller)).answered).toEqual(before.counted);
  });
});
