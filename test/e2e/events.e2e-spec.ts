import { Webhook } from 'standardwebhooks';
import { verifySignature } from '../../src/domain/postback-signature';
import { createSeller, TestSeller } from './setup/factories';
import { eventually } from './setup/processes';
import { Receiver, ReceivedRequest } from './setup/receiver';
import { createSale, saleBody, sendEvent } from './setup/sales';
import { verifiesWith } from './setup/standard-webhooks';
import { startApp, TestApp } from './setup/test-app';

/**
 * Fast relay and retries: a day of retries fits in a test. A bulk redelivery counts each event it sends
 * in MANUAL_SENDS_PER_HOUR: room here for the 1,001 of the bulk test (the budget itself is tested in
 * notification-limits.e2e-spec.ts).
 */
const FAST = { OUTBOX_POLL_MS: '100', POSTBACK_RETRY_SCHEDULE_SECONDS: '0.2,0.2', POSTBACK_ENDPOINT_FAILING_DAYS: '0.00002', MANUAL_SENDS_PER_HOUR: '2000' };
const now = () => Math.floor(Date.now() / 1000);

/** What a receiver holding `secret` makes of a request: the standardwebhooks library, and our X-Signature. */
function verifies(secret: string, request: ReceivedRequest): { standard: boolean; xSignature: boolean } {
  return {
    standard: verifiesWith(secret, request.headers as Record<string, unknown>, request.rawBody),
    xSignature: verifySignature(secret, request.rawBody, String(request.headers['x-signature']), now()),
  };
}

describe('Events an integrator can rely on (issue 23)', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startApp(FAST);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    receiver = await Receiver.start();
  });
  afterEach(() => receiver.close());

  const events = (seller: TestSeller, query: Record<string, string | number> = {}) => t.http.get('/api/events').query(query).set(seller.headers);

  describe('Standard Webhooks signatures', () => {
    it('signs every postback so that the standardwebhooks library verifies it with the seller secret, beside X-Signature', async () => {
      const seller = await createSeller(t);
      expect(seller.postbackSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const sale = await createSale(t, seller, saleBody('PIX', { postbackUrl: `${receiver.url}/hooks` }));
      await sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED');
      const [request] = await receiver.waitFor((r) => r.length >= 1);

      const payload = new Webhook(seller.postbackSecret).verify(request.rawBody, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      });
      expect(payload).toEqual(request.body);
      expect(request.headers['webhook-id']).toBe(request.body.id);
      expect(request.headers['x-event-id']).toBe(request.body.id);
      expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(verifies(seller.postbackSecret, request)).toEqual({ standard: true, xSignature: true });
      // Another secret verifies nothing.
      const other = await createSeller(t);
      expect(verifies(other.postbackSecret, request)).toEqual({ standard: false, xSignature: false });
      expect(() => new Webhook(other.postbackSecret).verify(request.rawBody, request.headers as Record<string, string>)).toThrow();
    });
  });

  describe('rotation with overlap', () => {
    it('signs with both secrets in both schemes during the window, with only the new one after it', async () => {
      const seller = await createSeller(t);
      const rolled = await t.http.post('/api/events/secret/roll').set(seller.headers).send({ overlapHours: 0.002 }).expect(201);
      const newSecret = rolled.body.data.postbackSecret as string;
      expect(rolled.body.data).toEqual({ postbackSecret: expect.stringMatching(/^whsec_/), previousSecretExpiresAt: expect.any(String), expiredEarlierSecret: false });
      const windowEnds = Date.parse(rolled.body.data.previousSecretExpiresAt);
      expect(windowEnds - Date.now()).toBeGreaterThan(5_000);
      expect(windowEnds - Date.now()).toBeLessThanOrEqual(7_200);
      expect((await t.http.get('/api/events/secret').set(seller.headers).expect(200)).body.data).toEqual({ previousSecretExpiresAt: rolled.body.data.previousSecretExpiresAt });

      const sale = await createSale(t, seller, saleBody('PIX', { postbackUrl: receiver.url }));
      await sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED');
      const [during] = await receiver.waitFor((r) => r.length >= 1);
      expect(verifies(newSecret, during)).toEqual({ standard: true, xSignature: true });
      expect(verifies(seller.postbackSecret, during)).toEqual({ standard: true, xSignature: true });
      expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);

      await new Promise((resolve) => setTimeout(resolve, Math.max(0, windowEnds - Date.now() + 200)));
      expect((await t.http.get('/api/events/secret').set(seller.headers).expect(200)).body.data).toEqual({ previousSecretExpiresAt: null });
      await sendEvent(t, seller, sale.id, 'MED_OPENED');
      const [, after] = await receiver.waitFor((r) => r.length >= 2);
      expect(verifies(newSecret, after)).toEqual({ standard: true, xSignature: true });
      expect(verifies(seller.postbackSecret, after)).toEqual({ standard: false, xSignature: false });
      expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    });

    it('expires the old secret at once on request; a second roll inside the window expires the oldest and says so', async () => {
      const seller = await createSeller(t);
      const first = (await t.http.post('/api/events/secret/roll').set(seller.headers).send({}).expect(201)).body.data;
      expect(Date.parse(first.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23.9 * 3600_000);
      const second = (await t.http.post('/api/events/secret/roll').set(seller.headers).send({ overlapHours: 168 }).expect(201)).body.data;
      expect(second.expiredEarlierSecret).toBe(true);

      const sale = await createSale(t, seller, saleBody('PIX', { postbackUrl: receiver.url }));
      await sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED');
      const [request] = await receiver.waitFor((r) => r.length >= 1);
      expect(verifies(second.postbackSecret, request).standard).toBe(true);
      expect(verifies(first.postbackSecret, request).standard).toBe(true);
      expect(verifies(seller.postbackSecret, request)).toEqual({ standard: false, xSignature: false });

      expect((await t.http.post('/api/events/secret/expire-previous').set(seller.headers).expect(200)).body.data).toEqual({ expired: true });
      expect((await t.http.post('/api/events/secret/expire-previous').set(seller.headers).expect(200)).body.data).toEqual({ expired: false });
      await sendEvent(t, seller, sale.id, 'MED_OPENED');
      const [, after] = await receiver.waitFor((r) => r.length >= 2);
      expect(verifies(second.postbackSecret, after)).toEqual({ standard: true, xSignature: true });
      expect(verifies(first.postbackSecret, after)).toEqual({ standard: false, xSignature: false });
      // Every secret stays sealed at rest.
      const [row] = await t.db.query(`SELECT postback_secret_encrypted AS current, previous_postback_secret_encrypted AS previous FROM sellers WHERE id = $1`, [seller.id]);
      expect(JSON.stringify(row)).not.toContain(second.postbackSecret.slice(6, 30));
      expect(JSON.stringify(row)).not.toContain(first.postbackSecret.slice(6, 30));
    });

    it('refuses an overlap outside 0 to 168 hours, naming the field', async () => {
      const seller = await createSeller(t);
      for (const overlapHours of [-1, 169, 'x', 1e9]) {
        const answer = await t.http.post('/api/events/secret/roll').set(seller.headers).send({ overlapHours }).expect(400);
        expect(answer.body).toEqual({ success: false, error: { code: 'VALIDATION_ERROR', message: expect.any(String), details: expect.objectContaining({ field: 'overlapHours' }) } });
      }
    });
  });

  describe('the events API', () => {
    it('lists events newest first, filters them, and pages with a cursor without losing or repeating one', async () => {
      const seller = await createSeller(t);
      const sales: number[] = [];
      for (let i = 0; i < 6; i += 1) {
        const sale = await createSale(t, seller, saleBody('PIX', { postbackUrl: receiver.url }));
        await sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED');
        if (i % 2 === 0) await sendEvent(t, seller, sale.id, 'MED_OPENED');
        sales.push(sale.id);
      }
      await receiver.waitFor((r) => r.length >= 9);
      const all = (await events(seller, { limit: 100 }).expect(200)).body.data;
      expect(all.events).toHaveLength(9);
      expect(all.nextCursor).toBeNull();
      const ids = all.events.map((e: { id: string }) => e.id);
      expect(new Set(ids).size).toBe(9);
      expect(all.events.map((e: { createdAt: string }) => e.createdAt)).toEqual([...all.events.map((e: { createdAt: string }) => e.createdAt)].sort().reverse());

      const paged: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: { events: Array<{ id: string }>; nextCursor: string | null } = (await events(seller, { limit: 4, ...(cursor ? { cursor } : {}) }).expect(200)).body.data;
        paged.push(...page.events.map((e) => e.id));
        cursor = page.nextCursor;
        pages += 1;
      } while (cursor);
      expect(pages).toBe(3);
      expect(paged).toEqual(ids);

      const ofSale = (await events(seller, { objectType: 'sale', objectId: sales[0] }).expect(200)).body.data.events;
      expect(ofSale.map((e: { payload: { status: string }; sequence: number }) => [e.payload.status, e.sequence])).toEqual([
        ['MED', 2],
        ['PAGO', 1],
      ]);
      expect(ofSale[0]).toMatchObject({ type: 'transaction.status_changed', objectType: 'sale', objectId: sales[0], deliveryStatus: 'delivered', attempts: 1 });
      expect((await events(seller, { deliveryStatus: 'failed' }).expect(200)).body.data.events).toEqual([]);
      expect((await events(seller, { type: 'subscription.status_changed' }).expect(200)).body.data.events).toEqual([]);
      const middle = all.events[4].createdAt;
      const after = (await events(seller, { createdAfter: middle, limit: 100 }).expect(200)).body.data.events;
      const before = (await events(seller, { createdBefore: middle, limit: 100 }).expect(200)).body.data.events;
      expect(after.length + before.length).toBe(9);
      expect(after.every((e: { createdAt: string }) => e.createdAt >= middle)).toBe(true);

      // One event, with its attempts and the headers each sent.
      const one = (await t.http.get(`/api/events/${ids[0]}`).set(seller.headers).expect(200)).body.data;
      expect(one.deliveryAttempts).toEqual([
        {
          attemptedAt: expect.any(String),
          responseStatus: 200,
          error: null,
          durationMs: expect.any(Number),
          requestHeaders: expect.objectContaining({ 'webhook-id': ids[0], 'X-Event-Id': ids[0], 'webhook-signature': expect.stringMatching(/^v1,/) }),
        },
      ]);
      expect(JSON.stringify(one)).not.toContain(seller.postbackSecret);
      // Another seller sees none of them.
      const other = await createSeller(t);
      expect((await events(other).expect(200)).body.data.events).toEqual([]);
      await t.http.get(`/api/events/${ids[0]}`).set(other.headers).expect(404);
    });

    it('refuses bad filters in its own family, naming the field', async () => {
      const seller = await createSeller(t);
      const cases: Array<[Record<string, string | number>, string]> = [
        [{ objectId: 3 }, 'objectType'],
        [{ objectType: 'invoice' }, 'objectType'],
        [{ type: 'sale.created' }, 'type'],
        [{ deliveryStatus: 'lost' }, 'deliveryStatus'],
        [{ createdAfter: '2026-11-01' }, 'createdAfter'],
        [{ createdBefore: 'yesterday' }, 'createdBefore'],
        [{ limit: 0 }, 'limit'],
        [{ limit: 101 }, 'limit'],
        [{ cursor: 'not a cursor' }, 'cursor'],
        [{ cursor: 'YWJj' }, 'cursor'],
      ];
      for (const [query, field] of cases) {
        const answer = await events(seller, query).expect(400);
        expect(answer.body).toEqual({ success: false, error: { code: 'VALIDATION_ERROR', message: expect.any(String), details: expect.objectContaining({ field }) } });
      }
      await t.http.get('/api/events/not-an-id').set(seller.headers).expect(400);
      await t.http.get('/api/events/0b6c1f8e-5d2a-4b7e-9a51-3c2d1e0f9a8b').set(seller.headers).expect(404);
      await t.http.get('/api/events').expect(401);
      const since = await t.http.post('/api/events/redeliver').set(seller.headers).send({ since: '2020-01-01T00:00:00Z' }).expect(400);
      expect(since.body.error.details.field).toBe('since');
      await t.http.post('/api/events/redeliver').set(seller.headers).send({}).expect(400);
    });

    it('replays every event a receiver missed during an outage exactly once more, with the same ids; a repeated replay sends nothing', async () => {
      const seller = await createSeller(t);
      const since = new Date(Date.now() - 1000).toISOString();
      receiver.always(503);
      const failedEvents = (count: number) =>
        eventually(
          async () => (await events(seller, { deliveryStatus: 'failed', limit: 100 }).expect(200)).body.data.events as Array<{ id: string }>,
          (list) => list.length === count,
          `${count} events failed for good`,
        );
      const paidSale = async () => sendEvent(t, seller, (await createSale(t, seller, saleBody('PIX', { postbackUrl: receiver.url }))).id, 'PAYMENT_CONFIRMED');
      for (let i = 0; i < 4; i += 1) await paidSale();
      await failedEvents(4);
      const early = (await t.http.get('/api/events/endpoints').set(seller.headers).expect(200)).body.data;
      expect(early).toEqual([expect.objectContaining({ url: receiver.url, status: 'healthy', failuresSince: expect.any(String), failingSince: null })]);
      // Failures go on past POSTBACK_ENDPOINT_FAILING_DAYS (here 1.7 s) without a success: the URL is marked failing.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await paidSale();
      const failed = await failedEvents(5);
      expect(receiver.received).toEqual([]);
      const endpoints = (await t.http.get('/api/events/endpoints').set(seller.headers).expect(200)).body.data;
      expect(endpoints).toEqual([expect.objectContaining({ url: receiver.url, status: 'failing', failingSince: expect.any(String), lastSuccessAt: null, lastError: 'answered HTTP 503' })]);

      receiver.always(null);
      const replay = await t.http.post('/api/events/redeliver').set(seller.headers).send({ since }).expect(202);
      expect(replay.body.data).toEqual({ requeued: 5, remaining: 0 });
      expect((await t.http.post('/api/events/redeliver').set(seller.headers).send({ since }).expect(202)).body.data).toEqual({ requeued: 0, remaining: 0 });
      await receiver.waitFor((r) => r.length >= 5);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const deliveredIds = receiver.received.map((r) => r.body.id as string);
      expect(deliveredIds.sort()).toEqual(failed.map((e) => e.id).sort());
      expect((await events(seller, { deliveryStatus: 'delivered', limit: 100 }).expect(200)).body.data.events).toHaveLength(5);
      const healthy = (await t.http.get('/api/events/endpoints').set(seller.headers).expect(200)).body.data;
      expect(healthy).toEqual([expect.objectContaining({ url: receiver.url, status: 'healthy', failingSince: null, failuresSince: null, lastSuccessAt: expect.any(String) })]);

      // One event again, on request: its own id once more.
      const again = await t.http.post(`/api/events/${failed[0].id}/redeliver`).set(seller.headers).expect(202);
      expect(again.body.data).toMatchObject({ id: failed[0].id, deliveryStatus: 'pending' });
      await receiver.waitFor((r) => r.filter((request) => request.body.id === failed[0].id).length === 2);
    });
  });

  it('bounds a bulk replay at 1,000 events a call and says how many remain for the next', async () => {
    const seller = await createSeller(t);
    const since = new Date(Date.now() - 60_000).toISOString();
    // 1,001 failed events of an endpoint nothing listens on: the setup, not what is tested.
    await t.db.query(
      `INSERT INTO outbox_events (event_id, seller_id, channel, aggregate_key, url, signed, payload, event_type, status, attempts)
       SELECT gen_random_uuid(), $1, 'SALE_POSTBACK', 'bulk:' || n, 'http://127.0.0.1:9/nothing', true, '{}', 'transaction.status_changed', 'FAILED', 3
         FROM generate_series(1, 1001) AS n`,
      [seller.id],
    );
    const first = await t.http.post('/api/events/redeliver').set(seller.headers).send({ since }).expect(202);
    expect(first.body.data).toEqual({ requeued: 1000, remaining: 1 });
    const second = await t.http.post('/api/events/redeliver').set(seller.headers).send({ since }).expect(202);
    expect(second.body.data).toEqual({ requeued: 1, remaining: 0 });
    // Their 1,001 new attempts at a dead endpoint are not this file's subject: left queued, they come
    // before the next tests' events (the relay takes due events in id order) and, on a loaded machine,
    // held those up past their wait.
    await t.db.query(`UPDATE outbox_events SET status = 'FAILED' WHERE seller_id = $1 AND aggregate_key LIKE 'bulk:%' AND status = 'PENDING'`, [seller.id]);
  });

  describe('sequences', () => {
    it('numbers the events of one sale 1, 2, 3, … in commit order under concurrent moves', async () => {
      const seller = await createSeller(t);
      const sale = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 10000, postbackUrl: receiver.url }));
      expect(sale.status).toBe('PAGO');
      const answers = await Promise.all(Array.from({ length: 8 }, () => t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 1250 })));
      expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(201));

      const rows: Array<{ id: string; sequence: number; payload_sequence: number }> = await t.db.query(
        `SELECT id, sequence, (payload->>'sequence')::int AS payload_sequence FROM outbox_events WHERE object_type = 'sale' AND object_id = $1 ORDER BY id`,
        [sale.id],
      );
      // The sale's creation and payment, 8 refunds asked and completed, the move to ESTORNADO.
      expect(rows.length).toBeGreaterThanOrEqual(1 + 16 + 1);
      expect(rows.map((row) => row.sequence)).toEqual(rows.map((_, i) => i + 1));
      expect(rows.every((row) => row.payload_sequence === row.sequence)).toBe(true);

      const delivered = await receiver.waitFor((r) => r.length >= rows.length, 20_000);
      const sequences = delivered.map((request) => request.body.sequence as number);
      expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
      const api = (await events(seller, { objectType: 'sale', objectId: sale.id, limit: 100 }).expect(200)).body.data.events;
      expect(api.map((e: { sequence: number }) => e.sequence)).toEqual(rows.map((row) => row.sequence).reverse());
    });
  });
});
