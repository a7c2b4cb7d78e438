import { createSeller, TestSeller } from './setup/factories';
import { eventually } from './setup/processes';
import { ReceivedRequest, Receiver } from './setup/receiver';
import { customer } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const plan = { title: 'Clube do Café', unitPrice: 3990, quantity: 1, tangible: false };

/**
 * Subscription postbacks carry the subscription as it is after the change they announce, what the
 * lookup answers then; a Pix Automático authorization's own change is announced
 * (subscription.automatic_pix_changed); journey 2's nextBillingDate is trialEndsAt during the trial
 * (platform.md §7). Issue 35. Postbacks go to a real local receiver.
 */
describe('Subscription postbacks after the change, and Pix Automático authorizations announced', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startApp({ OUTBOX_POLL_MS: '100' });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const automaticSale = (seller: TestSeller, subscription: Record<string, unknown> = {}) => ({
    amount: 3990,
    paymentMethod: 'PIX',
    customer,
    items: [plan],
    pix: {},
    subscription: { enabled: true, billingCycle: 'MONTHLY', automaticPix: true, ...subscription },
    postbackUrl: `${receiver.url}/s/${seller.id}`,
  });
  const create = async (seller: TestSeller, subscription: Record<string, unknown> = {}) => {
    const response = await t.http.post('/api/sales').set(seller.headers).send(automaticSale(seller, subscription));
    expect(response.status).toBe(201);
    return response.body.sale as { id: number; subscription: { id: number; status: string; nextBillingDate: string; trialEndsAt: string | null } };
  };
  const lookup = async (seller: TestSeller, id: number) => (await t.http.get(`/api/subscriptions/${id}`).set(seller.headers).expect(200)).body.data;
  const payer = (seller: TestSeller, id: number, event: string) => t.http.post(`/api/sandbox/subscriptions/${id}/automatic-pix`).set(seller.headers).send({ event }).expect(200);
  const pay = (seller: TestSeller, saleId: number) => t.http.post(`/api/sandbox/sales/${saleId}/events`).set(seller.headers).send({ event: 'PAYMENT_CONFIRMED' }).expect(200);
  const run = (seller: TestSeller, at: number) => t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({ now: new Date(at).toISOString() }).expect(200);
  /** The seller's subscription postbacks received so far, in sequence order, as `type previous→status`, and the bodies. */
  const postbacksOf = (seller: TestSeller): ReceivedRequest[] =>
    receiver.received.filter((r) => r.path === `/s/${seller.id}` && String(r.body.type).startsWith('subscription.')).sort((a, b) => Number(a.body.sequence) - Number(b.body.sequence));
  const waitPostbacks = (seller: TestSeller, count: number) =>
    eventually(async () => postbacksOf(seller), (list) => list.length >= count, `${count} subscription postbacks`);
  const line = (r: ReceivedRequest) => `${String(r.body.type)} ${String(r.body.previousStatus)}→${String(r.body.status)}`;

  it('journey 3: the PENDING → ACTIVE postback carries the authorization the payment gave, as the lookup; the authorization is announced too', async () => {
    const seller = await createSeller(t);
    const sale = await create(seller);
    const id = sale.subscription.id;
    await pay(seller, sale.id);
    const after = await lookup(seller, id);
    expect(after).toMatchObject({ status: 'ACTIVE', automaticPix: { status: 'AUTHORIZED', renewals: 'AUTOMATIC' } });
    const [authorized, activated] = await waitPostbacks(seller, 2);
    expect([authorized, activated].map(line)).toEqual(['subscription.automatic_pix_changed PENDING→AUTHORIZED', 'subscription.status_changed PENDING→ACTIVE']);
    // The QR authorizes, then the payment it carries activates: each postback is the subscription after its own change.
    expect(authorized.body.data).toMatchObject({ status: 'PENDING', automaticPix: after.automaticPix });
    expect(activated.body.data).toEqual(after);
  });

  it('the payer revoking: the CANCELLED postback and the authorization postback carry it ended, as the lookup', async () => {
    const seller = await createSeller(t);
    const sale = await create(seller);
    const id = sale.subscription.id;
    await pay(seller, sale.id);
    await waitPostbacks(seller, 2);
    await payer(seller, id, 'REVOKE');
    const after = await lookup(seller, id);
    expect(after).toMatchObject({ status: 'CANCELLED', automaticPix: { status: 'CANCELLED', endedAt: expect.any(String) } });
    const received = (await waitPostbacks(seller, 4)).slice(2);
    expect(received.map(line)).toEqual(['subscription.status_changed ACTIVE→CANCELLED', 'subscription.automatic_pix_changed AUTHORIZED→CANCELLED']);
    for (const postback of received) expect(postback.body.data).toEqual(after);
  });

  it('announces an authorization rejected or expired alone (renewals by QR per cycle), and lists it in the events API', async () => {
    const seller = await createSeller(t);
    const rejected = await create(seller);
    const beforeReject = await lookup(seller, rejected.subscription.id);
    await payer(seller, rejected.subscription.id, 'REJECT');
    const afterReject = await lookup(seller, rejected.subscription.id);
    expect(afterReject).toMatchObject({ status: 'PENDING', automaticPix: { status: 'REJECTED', renewals: 'QR_PER_CYCLE' } });
    expect(Date.parse(afterReject.updatedAt)).toBeGreaterThan(Date.parse(beforeReject.updatedAt)); // a change of the subscription
    const [rejection] = await waitPostbacks(seller, 1);
    expect(line(rejection)).toBe('subscription.automatic_pix_changed PENDING→REJECTED');
    expect(rejection.body.data).toEqual(afterReject);

    const expired = await create(seller, { trialDays: 7 });
    await payer(seller, expired.subscription.id, 'EXPIRE');
    const afterExpiry = await lookup(seller, expired.subscription.id);
    const expiry = (await waitPostbacks(seller, 2)).find((r) => (r.body.data as { id: number }).id === expired.subscription.id) as ReceivedRequest;
    expect(line(expiry)).toBe('subscription.automatic_pix_changed PENDING→EXPIRED');
    expect(expiry.body.data).toEqual(afterExpiry);

    const listed = (await t.http.get('/api/events').query({ type: 'subscription.automatic_pix_changed' }).set(seller.headers).expect(200)).body.data.events as Array<{ id: string; objectType: string; objectId: number }>;
    expect(listed.map((e) => [e.id, e.objectType, e.objectId])).toEqual([
      [expiry.body.id, 'subscription', expired.subscription.id],
      [rejection.body.id, 'subscription', rejected.subscription.id],
    ]);
  });

  it('journey 2: nextBillingDate is trialEndsAt during the trial (answer, lookup, list, postback), then one cycle on; the trial end is charged once', async () => {
    const seller = await createSeller(t);
    const sale = await create(seller, { trialDays: 7 });
    const id = sale.subscription.id;
    // Created PENDING, before its trial (it starts with the authorization): platform.md §7's PENDING date.
    expect(sale.subscription).toMatchObject({ status: 'PENDING', trialEndsAt: null });

    const trialing = (await payer(seller, id, 'AUTHORIZE')).body;
    expect(trialing).toMatchObject({ status: 'TRIALING', trialEndsAt: expect.any(String) });
    const trialEnd = Date.parse(trialing.trialEndsAt);
    expect(trialing.nextBillingDate).toBe(trialing.trialEndsAt);
    const during = await lookup(seller, id);
    expect(during.nextBillingDate).toBe(trialing.trialEndsAt);
    const listed = (await t.http.get('/api/subscriptions').set(seller.headers).expect(200)).body.data.subscriptions as Array<{ id: number; nextBillingDate: string }>;
    expect(listed.find((s) => s.id === id)?.nextBillingDate).toBe(trialing.trialEndsAt);
    const started = await waitPostbacks(seller, 2);
    expect(started.map(line)).toEqual(['subscription.status_changed PENDING→TRIALING', 'subscription.automatic_pix_changed PENDING→AUTHORIZED']);
    for (const postback of started) expect(postback.body.data).toEqual(during);

    // The first charge goes to the PSP 4 days before the trial's end and is collected on it: once.
    await run(seller, trialEnd - 4 * DAY + HOUR);
    await run(seller, trialEnd + HOUR);
    const active = await lookup(seller, id);
    const nextMonth = new Date(trialEnd);
    nextMonth.setUTCMonth(nextMonth.getUTCMonth() + 1);
    expect(active).toMatchObject({ status: 'ACTIVE', totalBillings: 1, successfulBillings: 1, nextBillingDate: nextMonth.toISOString() });
    const ended = (await waitPostbacks(seller, 3))[2];
    expect(line(ended)).toBe('subscription.status_changed TRIALING→ACTIVE');
    expect(ended.body.data).toEqual(active);
    await run(seller, trialEnd + 2 * DAY);
    const charges = (await t.db.query(`SELECT status, billing_period FROM sales WHERE subscription_id = $1 ORDER BY id`, [id])) as Array<{ status: string; billing_period: number }>;
    expect(charges).toEqual([{ status: 'PAGO', billing_period: 0 }]);
  });

  it('journey 2: a cancellation at the period end asked during the trial ends it at trialEndsAt, and its first charge is never sent', async () => {
    const seller = await createSeller(t);
    const sale = await create(seller, { trialDays: 7 });
    const id = sale.subscription.id;
    const trialing = (await payer(seller, id, 'AUTHORIZE')).body;
    const trialEnd = Date.parse(trialing.trialEndsAt);
    const scheduled = await t.http.post(`/api/subscriptions/${id}/cancel`).set(seller.headers).send({ cancelImmediately: false }).expect(200);
    expect(scheduled.body.data).toMatchObject({ status: 'TRIALING', scheduledCancellationDate: trialing.trialEndsAt });

    await run(seller, trialEnd - 4 * DAY + HOUR);
    const charge = async () => ((await t.db.query(`SELECT status, automatic_pix_sent_at FROM sales WHERE id = $1`, [sale.id])) as Array<{ status: string; automatic_pix_sent_at: Date | null }>)[0];
    expect(await charge()).toEqual({ status: 'PENDENTE', automatic_pix_sent_at: null });
    await run(seller, trialEnd + HOUR);
    expect(await lookup(seller, id)).toMatchObject({ status: 'CANCELLED', successfulBillings: 0, nextBillingDate: null });
    expect(await charge()).toEqual({ status: 'CANCELADO', automatic_pix_sent_at: null });
  });
});
