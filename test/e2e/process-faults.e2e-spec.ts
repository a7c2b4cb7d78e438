import { DataSource } from 'typeorm';
import { Receiver } from './setup/receiver';
import { recordReliability } from './setup/reliability-report';
import { saleBody } from './setup/sales';
import { ServiceProcess, startServiceProcess } from './setup/processes';
import { ADMIN_TOKEN } from './setup/test-app';

const SALES = 10;
const EVENTS_PER_SALE = ['PAYMENT_CONFIRMED', 'MED_OPENED', 'MED_WON'];
/** Short leases, so that what the killed process held is taken again within seconds (README, configuration). */
const FAST_RECOVERY = { OUTBOX_POLL_MS: '100', OUTBOX_STALE_CLAIM_SECONDS: '3', QUEUE_LOCK_DURATION_MS: '2000', POSTBACK_RETRY_SCHEDULE_SECONDS: '0.5,0.5,0.5' };

async function call(service: ServiceProcess, path: string, headers: Record<string, string>, body?: unknown) {
  const response = await fetch(`${service.base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, never> };
}

/**
 * The process killed with SIGKILL while postbacks are in flight (issue 10): no graceful shutdown, jobs
 * held by a dead worker, claims never released. Started again, it delivers every event; an event the
 * receiver got twice carries the same X-Event-Id both times, and each sale's events arrive in order.
 */
describe('The application killed with SIGKILL during deliveries', () => {
  let receiver: Receiver;
  let db: DataSource;
  let service: ServiceProcess | null = null;
  /** Records how many events arrived, whether the test passes or not, so the run's figures show a loss. */
  let afterDeliveries = () => undefined as void;

  beforeAll(async () => {
    receiver = await Receiver.start();
    db = await new DataSource({ type: 'postgres', url: process.env.E2E_DATABASE_URL, extra: { max: 1 } }).initialize();
  });
  afterAll(async () => {
    afterDeliveries();
    await service?.stop();
    await receiver.close();
    await db.destroy();
  });

  it('delivers every event once started again, duplicates only under the same X-Event-Id', async () => {
    const env = { DATABASE_URL: process.env.E2E_DATABASE_URL, ...FAST_RECOVERY };
    service = await startServiceProcess(env);
    const created = await call(service, '/admin/sellers', { 'X-Admin-Token': ADMIN_TOKEN }, { name: 'Loja Kill', email: `kill-${Date.now()}@example.com` });
    expect(created.status).toBe(201);
    const sellerId = (created.body.seller as { id: number }).id;
    const credentials = created.body.credentials as { publicKey: string; privateKey: string };
    const keys = { 'X-Api-Public-Key': credentials.publicKey, 'X-Api-Private-Key': credentials.privateKey };

    // A slow endpoint, so that deliveries are in flight when the process dies.
    receiver.delayMs = 300;
    const saleIds: number[] = [];
    for (let i = 0; i < SALES; i += 1) {
      const sale = await call(service, '/api/sales', keys, saleBody('PIX', { postbackUrl: `${receiver.url}/kill` }));
      expect(sale.status).toBe(201);
      saleIds.push((sale.body.sale as { id: number }).id);
    }
    for (const event of EVENTS_PER_SALE) {
      for (const id of saleIds) expect((await call(service, `/api/sandbox/sales/${id}/events`, keys, { event })).status).toBe(200);
    }

    // Killed while at least one postback has arrived and is not yet answered: a delivery in flight.
    // The receiver holds its answers from the moment it sees one in flight until the process is dead, so what
    // was unanswered then cannot be acknowledged while the kernel tears the process down.
    await receiver.waitFor((arrived) => {
      const inFlightNow = arrived.length >= 5 && arrived.length > receiver.received.length;
      if (inFlightNow) receiver.hold();
      return inFlightNow;
    }, 20_000, 'arrived');
    const inFlight = receiver.arrived.filter((r) => !receiver.received.includes(r)).map((r) => r.body.id as string);
    await service.kill();
    receiver.release(false);
    const beforeKill = receiver.arrived.length;
    expect(inFlight.length).toBeGreaterThan(0);
    const undelivered = async (): Promise<number> =>
      (await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE seller_id = $1 AND status <> 'DELIVERED'`, [sellerId]))[0].n;
    expect(await undelivered()).toBeGreaterThan(0); // the kill left work behind

    service = await startServiceProcess(env);
    const events: Array<{ event_id: string }> = await db.query(`SELECT event_id FROM outbox_events WHERE seller_id = $1 ORDER BY id`, [sellerId]);
    expect(events).toHaveLength(SALES * EVENTS_PER_SALE.length);
    const expected = new Set(events.map((event) => event.event_id));
    recordReliability({ faults: { 'process SIGKILLs': 1 }, eventsExpected: expected.size });
    afterDeliveries = () => recordReliability({ eventsDelivered: new Set(receiver.arrived.filter((r) => r.path === '/kill').map((r) => r.body.id)).size });
    await receiver.waitFor((received) => new Set(received.map((r) => r.body.id as string)).size >= expected.size, 60_000);

    // Every request that arrived, including those whose answer the killed process never read.
    const received = receiver.arrived.filter((r) => r.path === '/kill');
    for (const request of received) {
      expect(request.headers['x-event-id']).toBe(request.body.id);
      expect(expected.has(request.body.id as string)).toBe(true);
    }
    expect(new Set(received.map((r) => r.body.id))).toEqual(expected);
    // What was in flight at the kill arrived again after the restart, under the same X-Event-Id.
    for (const id of inFlight) expect(received.filter((r) => r.body.id === id).length).toBeGreaterThanOrEqual(2);
    // Each sale's events, by first arrival, in the order they happened.
    for (const id of saleIds) {
      const firstArrivals = [...new Set(received.filter((r) => (r.body.data as { id: number }).id === id).map((r) => `${r.body.previousStatus}>${r.body.status}`))];
      expect(firstArrivals).toEqual(['PENDENTE>PAGO', 'PAGO>MED', 'MED>PAGO']);
    }
    const deadline = Date.now() + 20_000;
    let pending = -1;
    while (pending !== 0 && Date.now() < deadline) {
      pending = await undelivered();
      if (pending !== 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(pending).toBe(0);
    expect(beforeKill).toBeLessThan(expected.size); // the kill came before the last delivery
  }, 150_000);
});
