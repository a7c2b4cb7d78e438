import { once } from 'node:events';
import { DataSource } from 'typeorm';
import { createSeller, TestSeller } from './setup/factories';
import { ServiceProcess, startServiceProcess, until } from './setup/processes';
import { recordReliability } from './setup/reliability-report';
import { balanceOf, createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';
import { ProviderRegistry } from '../../src/providers/provider-registry';
import { cents } from '../../src/domain/money';

/** The recovery job's age threshold in these tests (PROVIDER_RECOVERY_AFTER_SECONDS), by the real clock. */
const RECOVERY_AFTER_SECONDS = 2;
const databaseName = () => new URL(process.env.E2E_DATABASE_URL as string).pathname.slice(1);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Faults around the provider calls (issue 8): the second transaction failing, the provider not
 * answering, the process dying after the acquirer approved. Faults are made in PostgreSQL (a trigger
 * that refuses or stalls one sale's outcome) and by killing the process; the provider is the sandbox
 * adapter, which records every charge and payout it accepts by reference.
 */
describe('Provider calls between two commits: faults and recovery (issue 8)', () => {
  let t: TestApp;
  let db: DataSource;
  let seller: TestSeller;

  /** Charges the sandbox acquirer made for the sale (a voided reference is not a charge). */
  const charges = async (saleId: number) =>
    Number((await db.query(`SELECT count(*) AS n FROM sandbox_card_charges WHERE reference = $1 AND outcome <> 'VOIDED'`, [String(saleId)]))[0].n);
  /** The scheduled jobs for `who`; `aged` first waits until what was left behind is old enough for the recovery job. */
  const runScheduler = async (aged: boolean, who: TestSeller = seller) => {
    if (aged) await sleep(RECOVERY_AFTER_SECONDS * 1000 + 200);
    return (await t.http.post('/api/sandbox/scheduler/run').set(who.headers).send({}).expect(200)).body;
  };
  const statusOf = async (saleId: number) => (await t.http.get(`/api/transactions/${saleId}`).set(seller.headers).expect(200)).body;

  /** A new seller with 198.02 available, from a paid transfer of 200.00. */
  async function fundedSeller(): Promise<TestSeller> {
    const own = await createSeller(t);
    const sale = await createSale(t, own, saleBody('TRANSFER', { amount: 20_000 }));
    expect((await sendEvent(t, own, sale.id, 'PAYMENT_CONFIRMED')).status).toBe(200);
    return own;
  }

  /** A trigger that makes `statement` (plpgsql) run before every `operation` on `table` whose row matches `when`. */
  async function withTrigger(name: string, operation: 'INSERT' | 'UPDATE', table: string, when: string, statement: string): Promise<() => Promise<void>> {
    await db.query(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${statement}; RETURN NEW; END $$`);
    await db.query(`CREATE TRIGGER ${name} BEFORE ${operation} ON ${table} FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION ${name}()`);
    return async () => {
      await db.query(`DROP TRIGGER ${name} ON ${table}`);
      await db.query(`DROP FUNCTION ${name}()`);
    };
  }

  beforeAll(async () => {
    t = await startApp({ PROVIDER_RECOVERY_AFTER_SECONDS: String(RECOVERY_AFTER_SECONDS) });
    db = await new DataSource({ type: 'postgres', url: process.env.E2E_DATABASE_URL, extra: { max: 2 } }).initialize();
    seller = await createSeller(t);
  });
  afterAll(async () => {
    await db.destroy();
    await t.close();
  });
  // Each test injects one fault at the provider or kills a process between the two commits.
  afterEach(() => recordReliability({ faults: { 'provider faults and kills between two commits': 1 } }));

  it('card: the outcome transaction fails after the approval → 201 EM_PROCESSAMENTO, a retry with the key charges nothing more, the recovery job makes it PAGO with one charge', async () => {
    const drop = await withTrigger(
      'fault_card_outcome',
      'UPDATE',
      'sales',
      `OLD.status = 'EM_PROCESSAMENTO' AND NEW.status <> OLD.status AND NEW.amount_cents = 4242`,
      `RAISE EXCEPTION 'injected fault: the outcome transaction fails'`,
    );
    const body = saleBody('CREDIT_CARD', { amount: 4242 });
    let saleId: number;
    try {
      const first = await t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', 'fault-card-1').send(body).expect(201);
      saleId = first.body.sale.id;
      expect(first.body.sale.status).toBe('EM_PROCESSAMENTO');
      expect(await charges(saleId)).toBe(1);

      const retry = await t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', 'fault-card-1').send(body).expect(201);
      expect({ id: retry.body.sale.id, status: retry.body.sale.status, replayed: retry.headers['idempotent-replayed'] }).toEqual({
        id: saleId,
        status: 'EM_PROCESSAMENTO',
        replayed: 'true',
      });
      expect(await charges(saleId)).toBe(1);
    } finally {
      await drop();
    }

    expect((await runScheduler(false)).recoveredCharges).toBe(0); // too recent: the request may still be on its way
    expect((await runScheduler(true)).recoveredCharges).toBeLessThanOrEqual(1); // the every-minute job may have done it first
    const sale = await statusOf(saleId);
    expect(sale.status).toBe('PAGO');
    expect(sale.externalTransactionId).toMatch(new RegExp(`^sbx_ch_${saleId}_`));
    expect((await balanceOf(t, seller)).total).toBe(sale.netAmount);
    expect(await charges(saleId)).toBe(1);

    const later = await t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', 'fault-card-1').send(body).expect(201);
    expect({ id: later.body.sale.id, status: later.body.sale.status }).toEqual({ id: saleId, status: 'PAGO' });
    expect(await charges(saleId)).toBe(1);
    expect((await runScheduler(true)).recoveredCharges).toBe(0);
    expect((await balanceOf(t, seller)).total).toBe(sale.netAmount);
  });

  it('card: the provider never takes the charge → 201 EM_PROCESSAMENTO, and the recovery job finds no charge and makes it FALHA', async () => {
    const before = await balanceOf(t, seller);
    const drop = await withTrigger(
      'fault_acquirer_down',
      'INSERT',
      'sandbox_card_charges',
      `NEW.amount_cents = 4343`,
      `RAISE EXCEPTION 'injected fault: the acquirer does not answer'`,
    );
    let saleId: number;
    try {
      const first = await t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', 'fault-card-2').send(saleBody('CREDIT_CARD', { amount: 4343 })).expect(201);
      saleId = first.body.sale.id;
      expect(first.body.sale.status).toBe('EM_PROCESSAMENTO');
    } finally {
      await drop();
    }
    expect((await runScheduler(true)).recoveredCharges).toBeLessThanOrEqual(1); // the every-minute job may have done it first
    expect((await statusOf(saleId)).status).toBe('FALHA');
    expect(await charges(saleId)).toBe(0);
    const [voided] = await db.query(`SELECT outcome FROM sandbox_card_charges WHERE reference = $1`, [String(saleId)]);
    expect(voided).toEqual({ outcome: 'VOIDED' }); // a charge still on its way would now be refused
    expect(await balanceOf(t, seller)).toEqual(before);
    const retry = await t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', 'fault-card-2').send(saleBody('CREDIT_CARD', { amount: 4343 })).expect(201);
    expect({ id: retry.body.sale.id, status: retry.body.sale.status }).toEqual({ id: saleId, status: 'FALHA' });
    expect(await charges(saleId)).toBe(0);
  });

  it('card: the process dies after the acquirer approved → after a restart the recovery job makes the sale PAGO, with exactly one charge', async () => {
    const drop = await withTrigger(
      'fault_card_stall',
      'UPDATE',
      'sales',
      `OLD.status = 'EM_PROCESSAMENTO' AND NEW.status <> OLD.status AND NEW.amount_cents = 4444`,
      `PERFORM pg_sleep(60)`,
    );
    let service: ServiceProcess | null = null;
    try {
      service = await startServiceProcess({ DATABASE_URL: process.env.E2E_DATABASE_URL, LOG_LEVEL: 'warn' });
      const { base, child } = service;

      const pending = fetch(`${base}/api/sales`, {
        method: 'POST',
        headers: { ...seller.headers, 'Content-Type': 'application/json', 'Idempotency-Key': 'fault-card-3' },
        body: JSON.stringify(saleBody('CREDIT_CARD', { amount: 4444 })),
      }).catch(() => null);
      await until('the outcome transaction to stall', async () => {
        const rows: unknown[] = await db.query(`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event = 'PgSleep'`, [databaseName()]);
        return rows.length > 0;
      });
      child.kill('SIGKILL');
      await once(child, 'exit');
      expect(await pending).toBeNull(); // the client never got an answer
      // PostgreSQL ends the dead client's session (done here at once rather than when it notices).
      await db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND wait_event = 'PgSleep'`, [databaseName()]);
    } finally {
      if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
      await drop();
    }

    const [{ id: saleId }] = await db.query(`SELECT id FROM sales WHERE seller_id = $1 AND amount_cents = 4444`, [seller.id]);
    expect((await statusOf(saleId)).status).toBe('EM_PROCESSAMENTO');
    expect(await charges(saleId)).toBe(1);
    const retry = await t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', 'fault-card-3').send(saleBody('CREDIT_CARD', { amount: 4444 })).expect(201);
    expect({ id: retry.body.sale.id, status: retry.body.sale.status }).toEqual({ id: saleId, status: 'EM_PROCESSAMENTO' });

    expect((await runScheduler(true)).recoveredCharges).toBeLessThanOrEqual(1); // the every-minute job may have done it first
    expect((await statusOf(saleId)).status).toBe('PAGO');
    expect(await charges(saleId)).toBe(1);
    const entries: Array<{ kind: string }> = await db.query(`SELECT DISTINCT kind FROM ledger_entries WHERE reference_type = 'SALE' AND reference_id = $1`, [saleId]);
    expect(entries).toEqual([{ kind: 'SALE_PAID' }]);
  }, 90_000);

  it('payout: the provider accepted it but the withdrawal could not record it → a retry with the key creates nothing, the recovery job records the one payout', async () => {
    const own = await fundedSeller();
    const funded = await balanceOf(t, own);

    const drop = await withTrigger(
      'fault_payout_record',
      'UPDATE',
      'withdrawals',
      `OLD.external_id IS NULL AND NEW.external_id IS NOT NULL AND NEW.amount_cents = 12345`,
      `RAISE EXCEPTION 'injected fault: the payout is not recorded'`,
    );
    const body = { amount: 123.45, pixKey: '52998224725', pixKeyType: 'CPF' };
    let withdrawalId: number;
    const payouts = async () => Number((await db.query(`SELECT count(*) AS n FROM sandbox_payouts WHERE reference = $1`, [String(withdrawalId)]))[0].n);
    try {
      const created = await t.http.post('/api/public/cashout').set(own.headers).set('Idempotency-Key', 'fault-payout-1').send(body).expect(201);
      withdrawalId = created.body.id;
      expect(created.body.status).toBe('PENDING');
      await until('the payout job to reach the provider', async () => (await payouts()) === 1);
      const [row] = await db.query(`SELECT external_id FROM withdrawals WHERE id = $1`, [withdrawalId]);
      expect(row.external_id).toBeNull();

      const retry = await t.http.post('/api/public/cashout').set(own.headers).set('Idempotency-Key', 'fault-payout-1').send(body).expect(201);
      expect(retry.body.id).toBe(withdrawalId);
      expect(await balanceOf(t, own)).toEqual({ available: funded.available - 12_345, blocked: 12_345, total: funded.total });
    } finally {
      await drop();
    }

    const run = await runScheduler(true, own);
    expect(run.sentPayouts).toBeLessThanOrEqual(1); // the queue's own retry may have recorded it first
    const [row] = await db.query(`SELECT external_id FROM withdrawals WHERE id = $1`, [withdrawalId]);
    expect(row.external_id).toBe(`sbx_po_${withdrawalId}`);
    expect(await payouts()).toBe(1);

    for (const event of ['PROCESSING', 'COMPLETED']) {
      await t.http.post(`/api/sandbox/cashouts/${withdrawalId}/events`).set(own.headers).send({ event }).expect(200);
    }
    expect(await payouts()).toBe(1);
    expect(await balanceOf(t, own)).toEqual({ available: funded.available - 12_345, blocked: 0, total: funded.available - 12_345 });
    const withdrawals: unknown[] = await db.query(`SELECT id FROM withdrawals WHERE seller_id = $1`, [own.id]);
    expect(withdrawals).toHaveLength(1);
  });

  it('payout: a withdrawal whose payout never reached the provider is sent by the recovery job, once', async () => {
    const own = await fundedSeller();
    const drop = await withTrigger('fault_payout_down', 'INSERT', 'sandbox_payouts', `NEW.net_amount_cents = 10800`, `RAISE EXCEPTION 'injected fault: the payout provider is down'`);
    let withdrawalId: number;
    try {
      const created = await t.http.post('/api/public/cashout').set(own.headers).send({ amount: 110, pixKey: '52998224725' }).expect(201);
      withdrawalId = created.body.id;
      await sleep(300);
    } finally {
      await drop();
    }
    expect((await runScheduler(true, own)).sentPayouts).toBeLessThanOrEqual(1);
    await until('the payout to be recorded', async () => (await db.query(`SELECT external_id FROM withdrawals WHERE id = $1`, [withdrawalId]))[0].external_id);
    expect(Number((await db.query(`SELECT count(*) AS n FROM sandbox_payouts WHERE reference = $1`, [String(withdrawalId)]))[0].n)).toBe(1);
  });
  it('card: the recovery job runs while the charge is still on its way → the reference is voided first, the late charge is refused, the sale ends FALHA with no charge', async () => {
    const before = await balanceOf(t, seller);
    const drop = await withTrigger('fault_acquirer_slow', 'INSERT', 'sandbox_card_charges', `NEW.amount_cents = 4545`, `PERFORM pg_sleep(5)`);
    try {
      const pending = t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', 'fault-card-4').send(saleBody('CREDIT_CARD', { amount: 4545 }));
      const response = pending.then((r) => r); // start the request now
      await until('the charge to be on its way', async () => {
        const rows: unknown[] = await db.query(`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event = 'PgSleep'`, [databaseName()]);
        return rows.length > 0;
      });
      expect((await runScheduler(true)).recoveredCharges).toBeLessThanOrEqual(1); // the every-minute job may have done it first
      const [{ id: saleId }] = await db.query(`SELECT id FROM sales WHERE seller_id = $1 AND amount_cents = 4545`, [seller.id]);
      expect((await statusOf(saleId)).status).toBe('FALHA');

      const answer = await response;
      expect({ status: answer.status, sale: answer.body.sale.status }).toEqual({ status: 201, sale: 'FALHA' });
      expect(await charges(saleId)).toBe(0);
      expect((await statusOf(saleId)).status).toBe('FALHA');
      expect(await balanceOf(t, seller)).toEqual(before);
    } finally {
      await drop();
    }
  }, 30_000);

  it('sandbox acquirer: a reference charged again answers its first outcome, alone, twice in one call, or beside new references', async () => {
    const provider = t.app.get(ProviderRegistry).card('sandbox');
    const card = (number: string) => provider.prepareCard({ number, holderName: 'ANA', expirationMonth: '12', expirationYear: '2031', cvv: '123' });
    const approving = (await card('4111111111111111')).token;
    const refusing = (await card('4000000000000002')).token;
    const ask = (reference: string, token: string | null) => ({ reference, token, amountCents: cents(1990), installments: 1, kind: 'FIRST' as const });
    const stamp = Date.now();
    const first = await provider.chargeCard(ask(`again-a-${stamp}`, approving));
    expect(first.outcome).toBe('APPROVED');
    // Asked again with another card: the recorded charge stands.
    expect(await provider.chargeCard(ask(`again-a-${stamp}`, refusing))).toEqual(first);
    const batch = await provider.chargeCards([
      ask(`again-b-${stamp}`, refusing),
      ask(`again-a-${stamp}`, refusing),
      ask(`again-b-${stamp}`, approving),
      ask(`again-c-${stamp}`, approving),
    ]);
    expect(batch.map((result) => result.outcome)).toEqual(['REFUSED', 'APPROVED', 'REFUSED', 'APPROVED']);
    expect(batch[1]).toEqual(first);
    expect(batch[2]).toEqual(batch[0]);
    const [{ count }] = await db.query(`SELECT count(*)::int AS count FROM sandbox_card_charges WHERE reference LIKE $1`, [`again-%-${stamp}`]);
    expect(count).toBe(3);
  });

  it('sandbox acquirer: a charge whose reference is voided while its insert is under way answers FAILED (voided), not an error', async () => {
    const provider = t.app.get(ProviderRegistry).card('sandbox');
    const reference = `late-${Date.now()}`;
    const { token } = await provider.prepareCard({ number: '4111111111111111', holderName: 'ANA', expirationMonth: '12', expirationYear: '2031', cvv: '123' });
    const drop = await withTrigger('fault_acquirer_slow_2', 'INSERT', 'sandbox_card_charges', `NEW.amount_cents = 4646`, `PERFORM pg_sleep(2)`);
    try {
      const charging = provider.chargeCard({ reference, token, amountCents: cents(4646), installments: 1, kind: 'FIRST' });
      const settled = charging.then((result) => ({ result }), (error: unknown) => ({ error }));
      await until('the charge to be on its way', async () => {
        const rows: unknown[] = await db.query(`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event = 'PgSleep'`, [databaseName()]);
        return rows.length > 0;
      });
      // Committed after the charge's statement began: outside its snapshot, yet it is what stands.
      expect(await provider.voidCharge(reference, new Date())).toBeNull();
      expect(await settled).toEqual({ result: { outcome: 'FAILED', externalId: `sbx_void_${reference}`, reason: expect.stringContaining('voided') } });
      expect(await provider.findCharge(reference)).toBeNull();
    } finally {
      await drop();
    }
  }, 30_000);

  it('payout: a withdrawal cancelled before its payout reached the provider is never paid out, and its amount comes back', async () => {
    const own = await fundedSeller();
    const funded = await balanceOf(t, own);
    const drop = await withTrigger('fault_payout_down_2', 'INSERT', 'sandbox_payouts', `NEW.net_amount_cents = 12800`, `RAISE EXCEPTION 'injected fault: the payout provider is down'`);
    let withdrawalId: number;
    const rows = async () => db.query(`SELECT status FROM sandbox_payouts WHERE reference = $1`, [String(withdrawalId)]);
    try {
      withdrawalId = (await t.http.post('/api/public/cashout').set(own.headers).send({ amount: 130, pixKey: '52998224725' }).expect(201)).body.id;
      const early = await t.http.post(`/api/sandbox/cashouts/${withdrawalId}/events`).set(own.headers).send({ event: 'COMPLETED' });
      expect({ status: early.status, error: early.body.error }).toEqual({ status: 409, error: 'INVALID_TRANSITION' });
      expect(await rows()).toEqual([]); // a refused move sends nothing
      const cancelled = await t.http.post(`/api/sandbox/cashouts/${withdrawalId}/events`).set(own.headers).send({ event: 'CANCELLED' }).expect(200);
      expect(cancelled.body.status).toBe('CANCELLED');
    } finally {
      await drop();
    }
    await sleep(3_500); // the payout job's retries come back, and are refused
    await runScheduler(true, own);
    expect(await rows()).toEqual([{ status: 'CANCELLED' }]);
    expect((await t.http.get(`/api/public/cashout/${withdrawalId}`).set(own.headers).expect(200)).body.status).toBe('CANCELLED');
    expect(await balanceOf(t, own)).toEqual(funded);
  }, 30_000);
});
