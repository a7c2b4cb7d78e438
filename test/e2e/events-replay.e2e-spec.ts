import { createSeller } from './setup/factories';
import { eventually } from './setup/processes';
import { Receiver } from './setup/receiver';
import { createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

/**
 * Replay after an outage (issue 35): events that failed once and wait for their automatic retry (the
 * first one 30 s away here, as in production) are sent again at once by a bulk redelivery, each once,
 * with its own id; the waiting retry is that same send, not another one beside it.
 */
describe('Replay after an outage', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startApp({ OUTBOX_POLL_MS: '100', POSTBACK_RETRY_SCHEDULE_SECONDS: '30,120' });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('sends every event whose latest try failed since the given time again at once, each exactly once more with its id, in place of its waiting retry', async () => {
    const seller = await createSeller(t);
    const since = new Date(Date.now() - 1000).toISOString();
    receiver.always(503);
    for (let i = 0; i < 4; i += 1) {
      const sale = await createSale(t, seller, saleBody('PIX', { postbackUrl: receiver.url }));
      await sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED');
    }
    type Listed = { id: string; deliveryStatus: string; attempts: number; nextAttemptAt: string | null };
    const list = async () => (await t.http.get('/api/events').query({ limit: 100 }).set(seller.headers).expect(200)).body.data.events as Listed[];
    const waiting = await eventually(list, (events) => events.length === 4 && events.every((e) => e.deliveryStatus === 'pending' && e.attempts === 1), '4 events failed once');
    const ids = waiting.map((e) => e.id).sort();
    expect(receiver.arrived.map((r) => r.body.id).sort()).toEqual(ids);

    receiver.always(null);
    const askedAt = Date.now();
    const replay = await t.http.post('/api/events/redeliver').set(seller.headers).send({ since }).expect(202);
    expect(replay.body).toEqual({ success: true, data: { requeued: 4, remaining: 0 } });
    // Asked again at once: nothing is sent twice.
    expect((await t.http.post('/api/events/redeliver').set(seller.headers).send({ since }).expect(202)).body.data).toEqual({ requeued: 0, remaining: 0 });

    await receiver.waitFor((received) => received.length === 4, 10_000);
    expect(Date.now() - askedAt).toBeLessThan(15_000); // well before the retries due about 30 s after the failures
    expect(receiver.received.map((r) => r.body.id).sort()).toEqual(ids);
    expect(receiver.received.map((r) => r.headers['webhook-id']).sort()).toEqual(ids);
    const delivered = await eventually(list, (events) => events.every((e) => e.deliveryStatus === 'delivered'), '4 events delivered');
    // Two tries each, nothing left to retry: the waiting retry was this send.
    expect(delivered.map((e) => ({ attempts: e.attempts, nextAttemptAt: e.nextAttemptAt }))).toEqual(Array(4).fill({ attempts: 2, nextAttemptAt: null }));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const perId = new Map<string, number>();
    for (const request of receiver.arrived) perId.set(String(request.body.id), (perId.get(String(request.body.id)) ?? 0) + 1);
    expect([...perId.values()]).toEqual([2, 2, 2, 2]);
  });
});
