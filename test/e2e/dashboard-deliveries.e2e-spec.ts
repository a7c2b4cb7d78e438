import { Page } from 'playwright-core';
import { eventually } from './setup/processes';
import { Receiver } from './setup/receiver';
import { createSale, saleBody, sendEvent } from './setup/sales';
import { screenshot, signedInSeller, submit, textOf, useDashboardSession } from './setup/browser';

/** Fast relay and retries; a URL failing for 1.7 s without a success is marked failing. */
const FAST = { OUTBOX_POLL_MS: '100', POSTBACK_RETRY_SCHEDULE_SECONDS: '0.2,0.2', POSTBACK_ENDPOINT_FAILING_DAYS: '0.00002', MANUAL_SENDS_PER_HOUR: '2000' };
const COPIES = 1000;
/** Every tenth copy failed for good (the rest delivered). */
const FAILED_COPIES = COPIES / 10;

const idsOn = (page: Page) => page.locator('[data-testid=events] tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-event-id')));
const pageHeight = (page: Page) => page.evaluate<number>('document.documentElement.scrollHeight');

async function follow(page: Page, name: string): Promise<void> {
  await Promise.all([page.waitForEvent('load'), page.getByRole('link', { name }).click()]);
}

describe('Dashboard deliveries view (issue 23), in a real browser with a thousand events', () => {
  const s = useDashboardSession(FAST);
  let receiver: Receiver;

  beforeEach(async () => {
    receiver = await Receiver.start();
  });
  afterEach(() => receiver.close());

  it('pages, filters, shows one event with its headers and attempts, replays it and in bulk, and warns of a failing URL', async () => {
    const seller = await signedInSeller(s.t, s.page);
    const failedCount = async () =>
      Number((await s.t.db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE seller_id = $1 AND status = 'FAILED'`, [seller.id]))[0].n);

    // Setup: real postbacks fail for good at a receiver that answers 503, past the failing threshold.
    receiver.always(503);
    const paidSale = async () => sendEvent(s.t, seller, (await createSale(s.t, seller, saleBody('PIX', { postbackUrl: receiver.url }))).id, 'PAYMENT_CONFIRMED');
    await paidSale();
    await paidSale();
    await eventually(failedCount, (n) => n === 2, 'two events failed for good');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await paidSale();
    await eventually(failedCount, (n) => n === 3, 'the third event failed for good');
    // Setup: a thousand copies of the first event, in one statement: every tenth failed, the rest delivered, all
    // for a URL nothing listens on (a replayed copy is refused there, and never reaches the receiver's checks).
    const columns = ((await s.t.db.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'outbox_events' AND column_name <> 'id' ORDER BY ordinal_position`)) as Array<{ column_name: string }>).map(
      (row) => row.column_name,
    );
    const overrides: Record<string, string> = {
      event_id: 'gen_random_uuid()',
      aggregate_key: `'copy:' || i`,
      url: '$2',
      event_type: `CASE WHEN i % 2 = 0 THEN 'transaction.status_changed' ELSE 'subscription.status_changed' END`,
      object_type: `CASE WHEN i % 2 = 0 THEN 'sale' ELSE 'subscription' END`,
      object_id: '1000000 + i',
      sequence: '1',
      status: `CASE WHEN i % 10 = 0 THEN 'FAILED' ELSE 'DELIVERED' END`,
      delivered_at: `CASE WHEN i % 10 = 0 THEN NULL ELSE now() END`,
      last_error: `CASE WHEN i % 10 = 0 THEN 'answered HTTP 503' ELSE NULL END`,
      enqueued_at: 'NULL',
      created_at: `now() - make_interval(secs => i * 30)`,
    };
    await s.t.db.query(
      `INSERT INTO outbox_events (${columns.join(', ')})
       SELECT ${columns.map((column) => overrides[column] ?? `o.${column}`).join(', ')}
         FROM outbox_events o, generate_series(1, ${COPIES}) AS i
        WHERE o.id = (SELECT min(id) FROM outbox_events WHERE seller_id = $1)`,
      [seller.id, 'http://127.0.0.1:9/copies'],
    );
    expect(await failedCount()).toBe(3 + FAILED_COPIES);

    // The list: a compact first page, the next page with none of the first's events, and back.
    await s.page.goto(`${s.t.baseUrl}/dashboard/integrations/deliveries`);
    expect(await textOf(s.page, '[data-testid=failing-endpoints]')).toContain(receiver.url);
    expect(await textOf(s.page, '[data-testid=failing-endpoints]')).toContain('answered HTTP 503');
    const first = await idsOn(s.page);
    expect(first).toHaveLength(25);
    expect(await pageHeight(s.page)).toBeLessThan(3000);
    await screenshot(s.page, 'deliveries');
    await follow(s.page, 'Próxima página →');
    const second = await idsOn(s.page);
    expect(second).toHaveLength(25);
    expect(second.filter((id) => first.includes(id))).toEqual([]);
    await follow(s.page, '← Primeira página');
    expect(await idsOn(s.page)).toEqual(first);
    await s.page.getByLabel('Por página').selectOption('50');
    await submit(s.page, 'Filtrar');
    expect(await idsOn(s.page)).toHaveLength(50);
    expect(await pageHeight(s.page)).toBeLessThan(3000);

    // Filtered by status failed: only failed events, page after page.
    await s.page.getByLabel('Status da entrega').selectOption('failed');
    await submit(s.page, 'Filtrar');
    const rows = s.page.locator('[data-testid=events] tbody tr');
    expect(await rows.count()).toBe(50);
    expect(await rows.locator('.status-failed').count()).toBe(50);
    await follow(s.page, 'Próxima página →');
    expect(await rows.count()).toBe(50);
    expect(await rows.locator('.status-failed').count()).toBe(50);
    await follow(s.page, 'Próxima página →');
    expect(await rows.count()).toBe(3 + FAILED_COPIES - 100);
    expect(await s.page.getByRole('link', { name: 'Próxima página →' }).count()).toBe(0);

    // The newest real failed event (the copies have later ids, so the real ones come last): its body, the
    // headers as sent, and its three attempts.
    const eventId = (await idsOn(s.page))[0]!;
    await follow(s.page, `Evento ${eventId}`);
    expect(await textOf(s.page, '[data-testid=event-status]')).toBe('Falhou');
    const headers = await textOf(s.page, '[data-testid=headers]');
    expect(headers).toContain('webhook-signature');
    expect(headers).toContain('X-Signature\tt=');
    expect(headers).toContain(eventId);
    expect(await s.page.locator('[data-testid=attempts] tbody tr').allInnerTexts()).toEqual([
      expect.stringMatching(/^1\t.*HTTP 503/),
      expect.stringMatching(/^2\t.*HTTP 503/),
      expect.stringMatching(/^3\t.*HTTP 503/),
    ]);
    // Each attempt keeps the headers it sent (each try is signed when it is sent).
    expect(await s.page.locator('[data-testid=attempt-headers]').count()).toBe(3);
    expect(JSON.parse(await textOf(s.page, '[data-testid=payload]'))).toMatchObject({ status: 'PAGO' });
    await screenshot(s.page, 'delivery');

    // Replayed from its page: pending while the receiver holds its answer, then delivered with its own id.
    receiver.always(null);
    receiver.hold();
    await submit(s.page, 'Reenviar');
    expect(await textOf(s.page, '[role=status]')).toContain('Evento reenviado');
    expect(await textOf(s.page, '[data-testid=event-status]')).toBe('Pendente');
    receiver.release(true);
    await receiver.waitFor((received) => received.some((r) => r.headers['webhook-id'] === eventId));
    await eventually(
      async () => {
        await s.page.reload();
        return textOf(s.page, '[data-testid=event-status]');
      },
      (status) => status === 'Entregue',
      'the replayed event delivered',
    );

    // Bulk replay of the last 24 hours' failures: the two real ones left and every failed copy.
    await s.page.goto(`${s.t.baseUrl}/dashboard/integrations/deliveries`);
    await submit(s.page, 'Reenviar todas as falhas do período');
    expect(await textOf(s.page, '[data-testid=replay-result]')).toBe(`${2 + FAILED_COPIES} eventos com falha reenviados; 0 ainda restam.`);
    // Each sent once more: the two real ones delivered; each copy, refused, FAILED again after its one try (no fresh schedule).
    const pendingCount = async () => Number((await s.t.db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE seller_id = $1 AND status = 'PENDING'`, [seller.id]))[0].n);
    await eventually(async () => [await failedCount(), await pendingCount()], ([failed, pending]) => failed === FAILED_COPIES && pending === 0, 'the replay tried once each');
    await screenshot(s.page, 'deliveries-replayed');
  });
});
