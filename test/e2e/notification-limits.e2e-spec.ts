import { postForm, signedIn } from './setup/dashboard-forms';
import { adminHeaders, createSeller } from './setup/factories';
import { eventually } from './setup/processes';
import { Receiver } from './setup/receiver';
import { createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const WEBHOOKS = '/dashboard/integrations/webhooks';

/**
 * Webhooks cannot be turned into an amplifier (issue 19, point 7): a seller holds at most
 * WEBHOOKS_PER_SELLER_MAX withdrawal webhooks (each withdrawal event goes to every one), and asks for at
 * most MANUAL_SENDS_PER_HOUR test events and redeliveries from the dashboard.
 */
describe('Limits on webhooks and manual sends', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await Receiver.start();
    t = await startApp({ TRUST_PROXY: 'loopback', WEBHOOKS_PER_SELLER_MAX: '3', MANUAL_SENDS_PER_HOUR: '3' });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const webhookCount = async (sellerId: number) =>
    (await t.db.query(`SELECT count(*)::int AS n FROM withdrawal_webhooks WHERE seller_id = $1`, [sellerId]))[0].n as number;

  it('refuses a webhook past WEBHOOKS_PER_SELLER_MAX with 409, even when the adds arrive at once', async () => {
    const seller = await createSeller(t);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => t.http.post(`/admin/sellers/${seller.id}/webhooks`).set(adminHeaders).send({ url: `${receiver.url}/w${i}`, type: 'WITHDRAWAL' })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 201, 201, 409, 409, 409, 409, 409]);
    expect(answers.find((answer) => answer.status === 409)?.body).toEqual({
      error: 'CONFLICT',
      message: 'A seller can have at most 3 withdrawal webhooks; remove one first',
    });
    expect(await webhookCount(seller.id)).toBe(3);
    // Removing one makes room for another.
    const [first] = (await t.http.get(`/admin/sellers/${seller.id}/webhooks`).set(adminHeaders).expect(200)).body;
    await t.http.delete(`/admin/sellers/${seller.id}/webhooks/${first.id}`).set(adminHeaders).expect(204);
    await t.http.post(`/admin/sellers/${seller.id}/webhooks`).set(adminHeaders).send({ url: `${receiver.url}/again`, type: 'WITHDRAWAL' }).expect(201);
  });

  it('shows the same refusal on the dashboard, next to the form, with a 4xx', async () => {
    const { seller, browser } = await signedIn(t);
    for (let i = 0; i < 3; i += 1) expect((await postForm(browser, WEBHOOKS, WEBHOOKS, { url: `${receiver.url}/d${i}`, type: 'WITHDRAWAL' })).status).toBe(303);
    const refused = await postForm(browser, WEBHOOKS, WEBHOOKS, { url: `${receiver.url}/d3`, type: 'WITHDRAWAL' });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('A seller can have at most 3 withdrawal webhooks; remove one first');
    expect(await webhookCount(seller.id)).toBe(3);
  });

  it('limits test events and redeliveries asked from the dashboard to MANUAL_SENDS_PER_HOUR per seller, with 429 and Retry-After; the operator is not limited', async () => {
    const { seller, browser } = await signedIn(t);
    expect((await postForm(browser, WEBHOOKS, WEBHOOKS, { url: `${receiver.url}/tests`, type: 'WITHDRAWAL' })).status).toBe(303);
    const [webhook] = (await t.http.get(`/admin/sellers/${seller.id}/webhooks`).set(adminHeaders).expect(200)).body;
    const test = () => postForm(browser, WEBHOOKS, `${WEBHOOKS}/${webhook.id}/test`);
    const sent = [await test(), await test()];
    expect(sent.map((answer) => answer.status)).toEqual([303, 303]);
    const [delivery] = (await t.http.get(`/admin/sellers/${seller.id}/deliveries`).set(adminHeaders).expect(200)).body;
    // Redelivery is asked from the event's page on the deliveries view (Integrações → Entregas).
    const detail = `/dashboard/integrations/deliveries/${delivery.eventId}`;
    const redeliver = () => postForm(browser, detail, `${detail}/redeliver`);
    expect((await redeliver()).status).toBe(303); // the third manual send of the hour

    for (const refused of [await test(), await redeliver()]) {
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(3600);
      expect(refused.text).toContain('Limite de 3 envios de teste e reenvios por hora atingido');
    }
    const tests = await t.db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE seller_id = $1 AND aggregate_key LIKE 'webhook-test:%'`, [seller.id]);
    expect(tests[0].n).toBe(2);

    // The operator redelivers as needed (after an outage, say), and another seller has its own budget.
    await t.http.post(`/admin/sellers/${seller.id}/deliveries/${delivery.id}/redeliver`).set(adminHeaders).expect(202);
    const other = await signedIn(t);
    expect((await postForm(other.browser, WEBHOOKS, WEBHOOKS, { url: `${receiver.url}/other`, type: 'WITHDRAWAL' })).status).toBe(303);
    const [theirs] = (await t.http.get(`/admin/sellers/${other.seller.id}/webhooks`).set(adminHeaders).expect(200)).body;
    expect((await postForm(other.browser, WEBHOOKS, `${WEBHOOKS}/${theirs.id}/test`)).status).toBe(303);
  });

  it('counts a bulk redelivery per event it sends: up to what is left of MANUAL_SENDS_PER_HOUR, oldest first, one try each, then 429', async () => {
    const seller = await createSeller(t);
    const endpoint = await Receiver.start();
    try {
      endpoint.always(503);
      const since = new Date(Date.now() - 1000).toISOString();
      for (let i = 0; i < 5; i += 1) await sendEvent(t, seller, (await createSale(t, seller, saleBody('PIX', { postbackUrl: endpoint.url }))).id, 'PAYMENT_CONFIRMED');
      type Listed = { id: string; deliveryStatus: string; attempts: number; nextAttemptAt: string | null };
      const list = async () => (await t.http.get('/api/events').query({ limit: 100 }).set(seller.headers).expect(200)).body.data.events as Listed[];
      const tried = await eventually(list, (events) => events.length === 5 && events.every((e) => e.attempts === 1), '5 events tried once');
      // Setup: their schedule has run out (FAILED), as about a day and a half of failures would leave them.
      await t.db.query(`UPDATE outbox_events SET status = 'FAILED' WHERE seller_id = $1`, [seller.id]);

      const bulk = await t.http.post('/api/events/redeliver').set(seller.headers).send({ since }).expect(202);
      expect(bulk.body).toEqual({ success: true, data: { requeued: 3, remaining: 2 } });
      // The three oldest, one try each: failed again, with no retry scheduled.
      const oldest = tried.map((e) => e.id).reverse().slice(0, 3);
      const after = await eventually(list, (events) => events.filter((e) => e.attempts === 2).length === 3 && events.every((e) => e.deliveryStatus === 'failed'), 'one more try of 3 events');
      expect(after.filter((e) => e.attempts === 2).map((e) => e.id).sort()).toEqual([...oldest].sort());
      expect(after.every((e) => e.nextAttemptAt === null)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(endpoint.arrived).toHaveLength(8);

      // The hour's budget is spent: the next bulk call and a single one are refused in the events family's shape.
      for (const refused of [
        await t.http.post('/api/events/redeliver').set(seller.headers).send({ since }),
        await t.http.post(`/api/events/${tried[0].id}/redeliver`).set(seller.headers),
      ]) {
        expect(refused.status).toBe(429);
        expect(refused.body).toEqual({ success: false, error: expect.objectContaining({ code: 'RATE_LIMITED', message: expect.stringContaining('Limite de 3 envios') }) });
      }
      expect(endpoint.arrived).toHaveLength(8);
    } finally {
      await endpoint.close();
    }
  });
});
