import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { canonicalJson } from '../../src/idempotency/idempotency.service';
import { createSeller, TestSeller } from './setup/factories';
import { balanceOf, card, createSale, saleBody, sendEvent, threeDSecure } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';
import { recordReliability } from './setup/reliability-report';

const databaseName = () => new URL(process.env.E2E_DATABASE_URL as string).pathname.slice(1);

/** A connection of the test's own, beside the app's pool (to lock rows and read pg_stat_activity). */
async function ownConnection(): Promise<DataSource> {
  return new DataSource({ type: 'postgres', url: process.env.E2E_DATABASE_URL, extra: { max: 2 } }).initialize();
}

/** Polls GET /health until `done` settles; every answer's status. */
async function healthDuring(t: TestApp, done: Promise<unknown>): Promise<number[]> {
  const statuses: number[] = [];
  let finished = false;
  void done.finally(() => (finished = true));
  while (!finished) {
    statuses.push((await t.http.get('/health')).status);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  statuses.push((await t.http.get('/health')).status);
  return statuses;
}

async function netsOf(t: TestApp, seller: TestSeller, ids: number[]): Promise<number> {
  let sum = 0;
  for (const id of ids) sum += (await t.http.get(`/api/transactions/${id}`).set(seller.headers).expect(200)).body.netAmount;
  return sum;
}

describe('Money path under bursts, on a pool of 5 connections (issue 8)', () => {
  let t: TestApp;
  let own: DataSource;

  beforeAll(async () => {
    t = await startApp({ DB_POOL_SIZE: '5' });
    own = await ownConnection();
  });
  afterAll(async () => {
    await own.destroy();
    await t.close();
  });

  it('answers 64 card sales sent at once 201, each PAGO, /health 200 throughout, the balance the sum of the nets, one charge each', async () => {
    const seller = await createSeller(t);
    const burst = Promise.all(
      Array.from({ length: 64 }, (_, i) => t.http.post('/api/sales').set(seller.headers).send(saleBody('CREDIT_CARD', { amount: 10_000 + i }))),
    );
    const health = await healthDuring(t, burst);
    const responses = await burst;

    expect(responses.map((r) => r.status)).toEqual(Array(64).fill(201));
    expect(responses.map((r) => r.body.sale.status)).toEqual(Array(64).fill('PAGO'));
    expect(health.filter((status) => status !== 200)).toEqual([]);
    const ids = responses.map((r) => r.body.sale.id as number);
    const balance = await balanceOf(t, seller);
    expect(balance.total).toBe(await netsOf(t, seller, ids));
    const [charges] = await own.query(`SELECT count(*)::int AS n, count(DISTINCT reference)::int AS refs FROM sandbox_card_charges WHERE reference = ANY($1)`, [
      ids.map(String),
    ]);
    expect(charges).toEqual({ n: 64, refs: 64 });
  });

  it('answers 64 provider confirmations sent at once 200, each sale PAGO, /health 200 throughout, the balance the sum of the nets', async () => {
    const seller = await createSeller(t);
    // Boletos and transfers: a PIX sale's QR PNG costs ~0.6 s of CPU under jest (12 ms under node), which would time the setup, not the confirmations.
    const sales = await Promise.all(
      Array.from({ length: 64 }, (_, i) => createSale(t, seller, saleBody(i % 2 ? 'BOLETO' : 'TRANSFER', { amount: 20_000 + i }))),
    );
    const burst = Promise.all(sales.map((sale) => sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED')));
    const health = await healthDuring(t, burst);
    const responses = await burst;

    expect(responses.map((r) => r.status)).toEqual(Array(64).fill(200));
    expect(responses.map((r) => r.body.status)).toEqual(Array(64).fill('PAGO'));
    expect(health.filter((status) => status !== 200)).toEqual([]);
    const balance = await balanceOf(t, seller);
    expect(balance).toEqual({ available: await netsOf(t, seller, sales.map((s) => s.id)), blocked: 0, total: balance.available });
  });

  it('leaves no connection idle in a transaction after the bursts', async () => {
    const rows: Array<{ state: string }> = await own.query(
      `SELECT state FROM pg_stat_activity WHERE datname = $1 AND state LIKE 'idle in transaction%'`,
      [databaseName()],
    );
    expect(rows).toEqual([]);
  });

  it('answers 16 identical refunds at once on one sale with exactly one 200 and fifteen 409, and debits the net once', async () => {
    const seller = await createSeller(t);
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD'));
    const paid = await balanceOf(t, seller);
    expect(paid.total).toBeGreaterThan(0);

    const responses = await Promise.all(Array.from({ length: 16 }, () => sendEvent(t, seller, sale.id, 'REFUNDED')));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array(15).fill(409)]);
    expect(responses.filter((r) => r.status === 409).map((r) => r.body.error)).toEqual(Array(15).fill('INVALID_TRANSITION'));
    expect(await balanceOf(t, seller)).toEqual({ available: 0, blocked: 0, total: 0 });
    const entries: Array<{ kind: string; total: string }> = await own.query(
      `SELECT kind, sum(amount_cents) AS total FROM ledger_entries WHERE reference_type = 'SALE' AND reference_id = $1 AND account IN ('AVAILABLE', 'BLOCKED') GROUP BY kind ORDER BY kind`,
      [sale.id],
    );
    expect(entries).toEqual([
      { kind: 'REFUND', total: String(-paid.total) },
      { kind: 'SALE_PAID', total: String(paid.total) },
    ]);
  });
});

/** The first line of the run's log (every app of the e2e run logs into LOG_FILE) holding both strings, once it is there. */
async function logLineWith(requestId: string, text: string): Promise<string> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const line = readFileSync(process.env.LOG_FILE as string, 'utf8')
      .split('\n')
      .find((candidate) => candidate.includes(requestId) && candidate.includes(text));
    if (line || Date.now() > deadline) return line ?? '';
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('A request that gets no connection in time (issue 8)', () => {
  let t: TestApp;
  let own: DataSource;

  beforeAll(async () => {
    t = await startApp({ DB_POOL_SIZE: '1', DB_POOL_ACQUIRE_TIMEOUT_MS: '300', DB_LOCK_TIMEOUT_MS: '10000' });
    t.app.flushLogs(); // Nest's Logger buffers until listen() (supertest never calls it): its lines go to LOG_FILE from here on
    own = await ownConnection();
  });
  afterAll(async () => {
    await own.destroy();
    await t.close();
  });

  afterEach(() => recordReliability({ faults: { 'connection pool exhaustions': 1 } }));

  it('is answered 503 with Retry-After in its family shape, and the service recovers by itself once the connection is free', async () => {
    const seller = await createSeller(t);
    const sale = await createSale(t, seller, saleBody('PIX'));

    // The test holds the sale's row lock: the app's only connection waits on it inside the event's transaction.
    const holder = own.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query('SELECT id FROM sales WHERE id = $1 FOR UPDATE', [sale.id]);
    const blocked = sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED');
    for (let i = 0; i < 100; i += 1) {
      const waiting: unknown[] = await own.query(`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`, [databaseName()]);
      if (waiting.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    const [balance, lookup] = await Promise.all([
      t.http.get('/api/public/balance').set(seller.headers),
      t.http.get(`/api/transactions/${sale.id}`).set(seller.headers),
    ]);
    expect({ status: balance.status, retryAfter: balance.headers['retry-after'], body: balance.body }).toEqual({
      status: 503,
      retryAfter: '1',
      body: { error: 'SERVICE_UNAVAILABLE', message: expect.any(String), requestId: expect.any(String) },
    });
    expect({ status: lookup.status, retryAfter: lookup.headers['retry-after'], error: lookup.body.error }).toEqual({
      status: 503,
      retryAfter: '1',
      error: 'SERVICE_UNAVAILABLE',
    });

    // A key pair not yet cached is read from PostgreSQL: refused 503 too, and its line names the path masked.
    const unknownKeys = { 'X-Api-Public-Key': 'pk_e2eBusyPath000000000000', 'X-Api-Private-Key': 'sk_e2eBusyPath000000000000' };
    const misplaced = await t.http.get('/api/transactions/5555555555554444').set(unknownKeys);
    expect(misplaced.status).toBe(503);
    const refusal = await logLineWith(misplaced.body.requestId as string, 'database busy');
    expect(refusal).toContain('/api/transactions/[redacted]');
    expect(refusal).not.toContain('5555555555554444');

    await holder.commitTransaction();
    await holder.release();
    expect((await blocked).status).toBe(200);
    expect((await t.http.get('/api/public/balance').set(seller.headers)).status).toBe(200);
    expect((await t.http.get('/health')).status).toBe(200);
  });
});

describe('No card data kept in any form (issue 8, platform.md §6)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('finds in no table the card number, the CVV, or a hash of either, after card sales with and without an Idempotency-Key', async () => {
    const seller = await createSeller(t);
    const number = '4532015112830366';
    const cvv = '7316';
    const body = saleBody('CREDIT_CARD', { card: { ...card(number), cvv } });
    await t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', 'card-data-1').send(body).expect(201);
    await t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', 'card-data-1').send(body).expect(201);
    await t.http.post('/api/sales').set(seller.headers).send(saleBody('DEBIT_CARD', { card: { ...card(number), cvv, threeDSecure: threeDSecure() } })).expect(201);

    const digests = (value: string) => ['sha256', 'sha1', 'md5', 'sha512'].map((algorithm) => createHash(algorithm).update(value).digest('hex'));
    const forbidden = [
      number,
      ...digests(number),
      ...digests(cvv),
      ...digests(`${number}${cvv}`),
      ...digests(canonicalJson(body)),
      createHash('sha256').update(canonicalJson(body)).digest('base64'),
    ];
    const tables: Array<{ table_name: string }> = await t.db.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    expect(tables.map((row) => row.table_name)).toEqual(expect.arrayContaining(['sales', 'idempotency_keys', 'sandbox_card_charges', 'outbox_events']));
    const found: string[] = [];
    for (const { table_name: table } of tables) {
      const rows: Array<{ row: string }> = await t.db.query(`SELECT row_to_json(t)::text AS row FROM "${table}" t`);
      for (const { row } of rows) {
        const lower = row.toLowerCase();
        for (const value of forbidden) if (lower.includes(value.toLowerCase())) found.push(`${table}: ${value}`);
        if (/"cvv"/i.test(row)) found.push(`${table}: a cvv field`);
      }
    }
    expect(found).toEqual([]);
  });
});
