import { recordReliability } from './setup/reliability-report';
import { DataSource } from 'typeorm';
import { createSeller } from './setup/factories';
import { balanceOf, createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const databaseName = () => new URL(process.env.E2E_DATABASE_URL as string).pathname.slice(1);

/**
 * A request's PostgreSQL backend killed in the middle of its transaction (issue 10): the request
 * fails cleanly (503, retryable), nothing is half-written, and a retry with the same key succeeds.
 */
describe('A backend killed mid-transaction', () => {
  let t: TestApp;
  let db: DataSource;

  beforeAll(async () => {
    t = await startApp();
    db = await new DataSource({ type: 'postgres', url: process.env.E2E_DATABASE_URL, extra: { max: 2 } }).initialize();
    await db.query(`CREATE FUNCTION fault_stall_withdrawal() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(30); RETURN NEW; END $$`);
    await db.query(`CREATE TRIGGER fault_stall_withdrawal BEFORE INSERT ON withdrawals FOR EACH ROW WHEN (NEW.amount_cents = 17777) EXECUTE FUNCTION fault_stall_withdrawal()`);
  });
  afterAll(async () => {
    await db.query(`DROP TRIGGER fault_stall_withdrawal ON withdrawals`);
    await db.query(`DROP FUNCTION fault_stall_withdrawal()`);
    await db.destroy();
    await t.close();
  });

  it('fails the cashout with 503 and writes nothing: no withdrawal, no hold, no ledger entry, the key free for a retry', async () => {
    const seller = await createSeller(t);
    const sale = await createSale(t, seller, saleBody('TRANSFER', { amount: 50_000 }));
    await sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED');
    const before = await balanceOf(t, seller);
    const entriesBefore = (await db.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE seller_id = $1`, [seller.id]))[0].n;

    const body = { amount: 177.77, pixKey: '52998224725' };
    const pending = t.http.post('/api/public/cashout').set(seller.headers).set('Idempotency-Key', 'killed-1').send(body).then((r) => r);
    let pid: number | null = null;
    const deadline = Date.now() + 10_000;
    while (pid === null && Date.now() < deadline) {
      const rows: Array<{ pid: number }> = await db.query(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND wait_event = 'PgSleep'`, [databaseName()]);
      pid = rows[0]?.pid ?? null;
      if (pid === null) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(pid).not.toBeNull();
    await db.query(`SELECT pg_terminate_backend($1)`, [pid]);
    const response = await pending;
    expect({ status: response.status, error: response.body.error, retryAfter: response.headers['retry-after'] }).toEqual({
      status: 503,
      error: 'SERVICE_UNAVAILABLE',
      retryAfter: '1',
    });

    expect((await db.query(`SELECT count(*)::int AS n FROM withdrawals WHERE seller_id = $1`, [seller.id]))[0].n).toBe(0);
    expect((await db.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE seller_id = $1`, [seller.id]))[0].n).toBe(entriesBefore);
    expect((await db.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE seller_id = $1 AND key = 'killed-1'`, [seller.id]))[0].n).toBe(0);
    expect(await balanceOf(t, seller)).toEqual(before);

    const retry = await t.http.post('/api/public/cashout').set(seller.headers).set('Idempotency-Key', 'killed-1').send({ ...body, amount: 177.78 });
    expect(retry.status).toBe(201); // another body under the same key: accepted, since the first left nothing behind
    expect(await balanceOf(t, seller)).toEqual({ available: before.available - 17_778, blocked: 17_778, total: before.total });
    recordReliability({ faults: { 'PostgreSQL backends killed mid-transaction': 1 } });
  }, 30_000);
});
