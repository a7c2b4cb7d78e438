import { getQueueToken } from '@nestjs/bull';
import { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { PAYOUTS_QUEUE } from '../../src/cashout/cashout.service';
import { cents } from '../../src/domain/money';
import { PayoutRefusedError } from '../../src/providers/payout-provider.port';
import { ProviderRegistry } from '../../src/providers/provider-registry';
import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { until } from './setup/processes';
import { Receiver } from './setup/receiver';
import { balanceOf, createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

/** The recovery job's age threshold in these tests (PROVIDER_RECOVERY_AFTER_SECONDS), by the database's clock. */
const RECOVERY_AFTER_SECONDS = 2;
const CPF_KEY = '52998224725';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A withdrawal whose payout answer was lost is settled by asking the payout provider (findPayout) by its
 * reference, not by waiting for a callback: the recovery job applies what the provider says through the
 * callbacks' own moves, and sends again, under the same reference, a payout the provider never received.
 * The sandbox loses the answer of a payout whose net amount has 17 cents (docs/sandbox.md); a provider
 * that never receives a payout is a trigger on its table while the payout job tries.
 */
describe('Payouts whose answer was lost, recovered by asking the provider', () => {
  let t: TestApp;
  let db: DataSource;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startApp({ PROVIDER_RECOVERY_AFTER_SECONDS: String(RECOVERY_AFTER_SECONDS), OUTBOX_POLL_MS: '100' });
    db = await new DataSource({ type: 'postgres', url: process.env.E2E_DATABASE_URL, extra: { max: 2 } }).initialize();
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver.close();
    await db.destroy();
    await t.close();
  });

  /** A seller with `available` cents and a withdrawal webhook to the receiver (a paid PIX sale with no fee). */
  async function fundedSeller(available: number): Promise<TestSeller> {
    const seller = await createSeller(t);
    await t.http.patch(`/admin/sellers/${seller.id}`).set(adminHeaders).send({ fees: { pixPercentBps: 0, pixFixedCents: 0 } }).expect(200);
    const sale = await createSale(t, seller, saleBody('PIX', { amount: available }));
    expect((await sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED')).status).toBe(200);
    await t.http.post(`/admin/sellers/${seller.id}/webhooks`).set(adminHeaders).send({ url: `${receiver.url}/withdrawals/${seller.id}`, type: 'WITHDRAWAL' }).expect(201);
    return seller;
  }

  /** The scheduled jobs for this seller once what was left behind is old enough for the recovery job. */
  const runScheduler = async (seller: TestSeller, app: TestApp = t) => {
    await sleep(RECOVERY_AFTER_SECONDS * 1000 + 200);
    return (await app.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({}).expect(200)).body;
  };
  const withdrawalRow = async (id: number) =>
    (await db.query(`SELECT status, external_id AS "externalId", payout_checks AS checks, payout_check_at > now() AS "checkLater" FROM withdrawals WHERE id = $1`, [id]))[0];
  const payoutsAt = (id: number): Promise<Array<{ status: string; net: number }>> =>
    db.query(`SELECT status, net_amount_cents::int AS net FROM sandbox_payouts WHERE reference = $1`, [String(id)]);
  /** The withdrawal's ledger postings in order, each with the sum of its entries (0: balanced). */
  const postingsOf = (id: number): Promise<Array<{ kind: string; sum: number }>> =>
    db.query(
      `SELECT p.kind, sum(e.amount_cents)::int AS sum FROM ledger_postings p JOIN ledger_entries e ON e.posting_id = p.id
        WHERE p.reference_type = 'WITHDRAWAL' AND p.reference_id = $1 GROUP BY p.id, p.kind ORDER BY p.id`,
      [id],
    );
  const historyOf = async (id: number) =>
    (await db.query(`SELECT previous_status, status FROM withdrawal_status_changes WHERE withdrawal_id = $1 ORDER BY id`, [id])).map(
      (row: { previous_status: string | null; status: string }) => [row.previous_status, row.status],
    );
  const webhooksOf = (seller: TestSeller) => receiver.received.filter((r) => r.path === `/withdrawals/${seller.id}`);

  it('a payout paid but whose answer was lost stays PENDING with its amount held; the recovery job asks the provider and completes it once', async () => {
    const seller = await fundedSeller(50_000);
    const created = await t.http.post('/api/public/cashout').set(seller.headers).send({ amount: 150.17, pixKey: CPF_KEY }).expect(201);
    const id: number = created.body.id;
    expect(created.body).toMatchObject({ status: 'PENDING', amount: '150.17', netAmount: '148.17' });

    // The payout job reached the provider, which paid it at once; its answer never came back.
    await until('the payout to reach the provider', async () => (await payoutsAt(id)).length === 1);
    expect(await payoutsAt(id)).toEqual([{ status: 'COMPLETED', net: 14_817 }]);
    expect(await withdrawalRow(id)).toMatchObject({ status: 'PENDING', externalId: null });
    expect((await t.http.get(`/api/public/cashout/${id}`).set(seller.headers).expect(200)).body.status).toBe('PENDING');
    expect(await balanceOf(t, seller)).toEqual({ available: 50_000 - 15_017, blocked: 15_017, total: 50_000 });
    // The provider paid it: it calls back nothing else, and no callback can undo it.
    const refused = await t.http.post(`/api/sandbox/cashouts/${id}/events`).set(seller.headers).send({ event: 'CANCELLED' }).expect(409);
    expect(refused.body.error).toBe('INVALID_TRANSITION');
    expect(await balanceOf(t, seller)).toEqual({ available: 50_000 - 15_017, blocked: 15_017, total: 50_000 });

    // Another instance (a process started after the send: the provider's record is all it has) runs the job twice at once.
    const restarted = await startApp({ PROVIDER_RECOVERY_AFTER_SECONDS: String(RECOVERY_AFTER_SECONDS) });
    try {
      await sleep(RECOVERY_AFTER_SECONDS * 1000 + 200);
      const runs = await Promise.all(
        [t, restarted].map(async (app) => (await app.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({}).expect(200)).body),
      );
      // The every-minute job may have settled it first; no two passes ever settle it both.
      expect(runs.reduce((sum, run) => sum + run.recoveredPayouts, 0)).toBeLessThanOrEqual(1);
      expect(runs.map((run) => run.sentPayouts)).toEqual([0, 0]);
    } finally {
      await restarted.close();
    }

    const done = (await t.http.get(`/api/public/cashout/${id}`).set(seller.headers).expect(200)).body;
    expect(done.status).toBe('COMPLETED');
    expect(await withdrawalRow(id)).toMatchObject({ status: 'COMPLETED', externalId: `sbx_po_${id}` });
    expect(await historyOf(id)).toEqual([
      [null, 'PENDING'],
      ['PENDING', 'PROCESSING'],
      ['PROCESSING', 'COMPLETED'],
    ]);
    // Debited once: the hold, the payout on its way, its completion; each posting balanced.
    expect(await postingsOf(id)).toEqual([
      { kind: 'WITHDRAWAL_REQUESTED', sum: 0 },
      { kind: 'WITHDRAWAL_SENT', sum: 0 },
      { kind: 'WITHDRAWAL_COMPLETED', sum: 0 },
    ]);
    expect(await balanceOf(t, seller)).toEqual({ available: 50_000 - 15_017, blocked: 0, total: 50_000 - 15_017 });
    expect(await payoutsAt(id)).toEqual([{ status: 'COMPLETED', net: 14_817 }]);

    // Each move's webhook delivered once, COMPLETED with the provider's id; a later pass changes nothing.
    await receiver.waitFor(() => webhooksOf(seller).length >= 2);
    expect((await runScheduler(seller)).recoveredPayouts).toBe(0);
    await sleep(500);
    expect(webhooksOf(seller).map((r) => [r.body.status, r.body.externalId, r.body.processedAt === null])).toEqual([
      ['PROCESSING', `sbx_po_${id}`, true],
      ['COMPLETED', `sbx_po_${id}`, false],
    ]);
    expect(await balanceOf(t, seller)).toEqual({ available: 50_000 - 15_017, blocked: 0, total: 50_000 - 15_017 });
  }, 60_000);

  it('a payout the provider never received is sent again by the recovery job under the same reference, and paid exactly once', async () => {
    const seller = await fundedSeller(50_000);
    const provider = t.app.get(ProviderRegistry).payout('sandbox');
    const queue = t.app.get<Queue>(getQueueToken(PAYOUTS_QUEUE));
    // The provider is unreachable for this payout (net 158.00) while the payout job tries: nothing reaches it.
    await db.query(`CREATE FUNCTION fault_payout_unreachable() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault: the payout provider is unreachable'; END $$`);
    await db.query(`CREATE TRIGGER fault_payout_unreachable BEFORE INSERT ON sandbox_payouts FOR EACH ROW WHEN (NEW.net_amount_cents = 15800) EXECUTE FUNCTION fault_payout_unreachable()`);
    let id: number;
    try {
      id = (await t.http.post('/api/public/cashout').set(seller.headers).send({ amount: 160, pixKey: CPF_KEY }).expect(201)).body.id;
      // Its first try failed; the job is then lost (a crash, Redis flushed) before its retries.
      await until('the payout job to fail its first try and be lost', async () => {
        const job = await queue.getJob(`payout:${id}`);
        if (!job || (await job.getState()) !== 'delayed') return false;
        return job.remove().then(
          () => true,
          () => false,
        );
      });
    } finally {
      await db.query(`DROP TRIGGER fault_payout_unreachable ON sandbox_payouts`);
      await db.query(`DROP FUNCTION fault_payout_unreachable()`);
    }
    expect(await provider.findPayout(String(id), null)).toBeNull();
    expect(await withdrawalRow(id)).toMatchObject({ status: 'PENDING', externalId: null });
    expect(await balanceOf(t, seller)).toEqual({ available: 50_000 - 16_000, blocked: 16_000, total: 50_000 });

    const run = await runScheduler(seller);
    expect(run.sentPayouts).toBeLessThanOrEqual(1); // the every-minute job may have sent it first
    expect(run.recoveredPayouts).toBe(0);
    await until('the payout to be recorded as sent', async () => (await withdrawalRow(id)).externalId);
    expect(await withdrawalRow(id)).toMatchObject({ status: 'PENDING', externalId: `sbx_po_${id}`, checks: 1, checkLater: true });
    expect(await provider.findPayout(String(id), null)).toEqual({ status: 'PENDING', externalId: `sbx_po_${id}`, reason: null });
    expect(await payoutsAt(id)).toEqual([{ status: 'ACCEPTED', net: 15_800 }]);
    // Backoff: the next look-up is put off; a pass now asks nothing and sends nothing.
    const again = (await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({}).expect(200)).body;
    expect([again.sentPayouts, again.recoveredPayouts]).toEqual([0, 0]);
    expect((await withdrawalRow(id)).checks).toBe(1);

    // The provider's callbacks pay it out: once, from the one payout it holds for the reference.
    for (const event of ['PROCESSING', 'COMPLETED']) {
      await t.http.post(`/api/sandbox/cashouts/${id}/events`).set(seller.headers).send({ event }).expect(200);
    }
    expect(await payoutsAt(id)).toEqual([{ status: 'COMPLETED', net: 15_800 }]);
    expect(await postingsOf(id)).toEqual([
      { kind: 'WITHDRAWAL_REQUESTED', sum: 0 },
      { kind: 'WITHDRAWAL_SENT', sum: 0 },
      { kind: 'WITHDRAWAL_COMPLETED', sum: 0 },
    ]);
    expect(await balanceOf(t, seller)).toEqual({ available: 50_000 - 16_000, blocked: 0, total: 50_000 - 16_000 });
    const later = await runScheduler(seller);
    expect([later.sentPayouts, later.recoveredPayouts]).toEqual([0, 0]);
    expect(await payoutsAt(id)).toEqual([{ status: 'COMPLETED', net: 15_800 }]);
    await receiver.waitFor(() => webhooksOf(seller).length >= 2);
    expect(webhooksOf(seller).map((r) => r.body.status)).toEqual(['PROCESSING', 'COMPLETED']);
  }, 60_000);

  it('a payout the provider rejected while its callback was lost: the recovery job returns the money once', async () => {
    const seller = await fundedSeller(50_000);
    const id: number = (await t.http.post('/api/public/cashout').set(seller.headers).send({ amount: 170, pixKey: CPF_KEY }).expect(201)).body.id;
    await until('the payout to be recorded as sent', async () => (await withdrawalRow(id)).externalId);
    // The provider rejects it (its record moves), and its callback is lost.
    await db.query(`UPDATE sandbox_payouts SET status = 'REJECTED', reason = 'Receiving account closed' WHERE reference = $1`, [String(id)]);
    expect(await balanceOf(t, seller)).toEqual({ available: 50_000 - 17_000, blocked: 17_000, total: 50_000 });

    expect((await runScheduler(seller)).recoveredPayouts).toBeLessThanOrEqual(1); // the every-minute job may have done it first
    expect((await t.http.get(`/api/public/cashout/${id}`).set(seller.headers).expect(200)).body.status).toBe('FAILED');
    expect(await postingsOf(id)).toEqual([
      { kind: 'WITHDRAWAL_REQUESTED', sum: 0 },
      { kind: 'WITHDRAWAL_RETURNED', sum: 0 },
    ]);
    expect(await balanceOf(t, seller)).toEqual({ available: 50_000, blocked: 0, total: 50_000 });
    await receiver.waitFor(() => webhooksOf(seller).length >= 1);
    await sleep(300);
    expect(webhooksOf(seller).map((r) => r.body.status)).toEqual(['REJECTED']);
  }, 60_000);

  it('sandbox payout provider: one payout per reference, whatever asks; its look-up says what it holds, or null', async () => {
    const provider = t.app.get(ProviderRegistry).payout('sandbox');
    const stamp = Date.now();
    const ask = (reference: string, netCents: number) => ({ reference, providerReference: reference, netAmountCents: cents(netCents), pixKey: CPF_KEY, pixKeyType: 'CPF' as const, payee: null });
    const cancelPayout = (reference: string) => (provider.cancelPayout as (reference: string) => Promise<void>).call(provider, reference);

    expect(await provider.findPayout(`never-${stamp}`, null)).toBeNull();
    const first = await provider.requestPayout(ask(`again-${stamp}`, 10_000));
    expect(await provider.requestPayout(ask(`again-${stamp}`, 20_000))).toEqual(first);
    expect(await provider.findPayout(`again-${stamp}`, null)).toEqual({ status: 'PENDING', externalId: first.externalId, reason: null });

    // A lost answer: the payout is made (once), every answer to it lost.
    await expect(provider.requestPayout(ask(`lost-${stamp}`, 10_017))).rejects.toThrow(/answer was lost/);
    await expect(provider.requestPayout(ask(`lost-${stamp}`, 10_017))).rejects.toThrow(/answer was lost/);
    expect(await provider.findPayout(`lost-${stamp}`, null)).toEqual({ status: 'COMPLETED', externalId: `sbx_po_lost-${stamp}`, reason: null });
    // Cancelling a payout already paid leaves it paid.
    await cancelPayout(`lost-${stamp}`);
    expect((await provider.findPayout(`lost-${stamp}`, null))?.status).toBe('COMPLETED');

    // A cancelled reference is refused, and its look-up says so.
    await cancelPayout(`cancelled-${stamp}`);
    await expect(provider.requestPayout(ask(`cancelled-${stamp}`, 10_000))).rejects.toBeInstanceOf(PayoutRefusedError);
    expect(await provider.findPayout(`cancelled-${stamp}`, null)).toMatchObject({ status: 'CANCELLED', reason: expect.any(String) });

    const [{ count }] = await db.query(`SELECT count(*)::int AS count FROM sandbox_payouts WHERE reference LIKE $1`, [`%-${stamp}`]);
    expect(count).toBe(3);
  });
});
