import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cents } from '../../src/domain/money';
import { LedgerService } from '../../src/ledger/ledger.service';
import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { balanceOf, card, createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const run = promisify(execFile);

describe('Ledger (platform.md §4)', () => {
  let t: TestApp;
  let ledger: LedgerService;

  beforeAll(async () => {
    t = await startApp();
    ledger = t.app.get(LedgerService);
  });
  afterAll(() => t.close());

  const credit = (seller: TestSeller, amount: number, referenceId = 1) =>
    t.db.transaction((manager) =>
      ledger.post(manager, [{
        sellerId: seller.id,
        referenceType: 'SALE', provider: 'sandbox',
        referenceId,
        effect: {
          kind: 'SALE_PAID',
          movements: [
            { account: 'AVAILABLE', amountCents: cents(amount) },
            { account: 'PSP_HOLDINGS', amountCents: cents(-amount) },
          ],
        },
      }]),
    );

  it('moves the balance by its entries, and a rolled-back transaction leaves neither', async () => {
    const seller = await createSeller(t);
    await credit(seller, 500);
    await expect(
      t.db.transaction(async (manager) => {
        await ledger.post(manager, [{
          sellerId: seller.id,
          referenceType: 'SALE', provider: 'sandbox',
          referenceId: 1,
          effect: { kind: 'REFUND', movements: [{ account: 'AVAILABLE', amountCents: cents(-300) }, { account: 'PSP_HOLDINGS', amountCents: cents(300) }] },
        }]);
        throw new Error('the cause failed');
      }),
    ).rejects.toThrow('the cause failed');
    expect(await balanceOf(t, seller)).toEqual({ available: 500, blocked: 0, total: 500 });
    const entries = await t.db.query('SELECT account, provider, amount_cents, kind FROM ledger_entries WHERE seller_id = $1 ORDER BY id', [seller.id]);
    expect(entries).toEqual([
      { account: 'AVAILABLE', provider: null, amount_cents: '500', kind: 'SALE_PAID' },
      { account: 'PSP_HOLDINGS', provider: 'sandbox', amount_cents: '-500', kind: 'SALE_PAID' },
    ]);
    expect(await t.db.query('SELECT kind, available_delta_cents, blocked_delta_cents, available_after_cents FROM ledger_postings WHERE seller_id = $1', [seller.id])).toEqual([
      { kind: 'SALE_PAID', available_delta_cents: '500', blocked_delta_cents: '0', available_after_cents: '500' },
    ]);
  });

  it('sums twenty concurrent postings exactly', async () => {
    const seller = await createSeller(t);
    await Promise.all(Array.from({ length: 20 }, (_, i) => credit(seller, 100, i + 1)));
    expect(await balanceOf(t, seller)).toEqual({ available: 2000, blocked: 0, total: 2000 });
  });

  it('never lets blocked go below zero', async () => {
    const seller = await createSeller(t);
    await expect(
      t.db.transaction((manager) =>
        ledger.post(manager, [{
          sellerId: seller.id,
          referenceType: 'SALE', provider: 'sandbox',
          referenceId: 1,
          effect: { kind: 'MED_LOST', movements: [{ account: 'BLOCKED', amountCents: cents(-1) }, { account: 'PSP_HOLDINGS', amountCents: cents(1) }] },
        }]),
      ),
    ).rejects.toThrow(/balances_blocked_non_negative_check/);
    expect(await balanceOf(t, seller)).toEqual({ available: 0, blocked: 0, total: 0 });
  });

  it('posts a batch of several sellers at once, each posting with the balance after it, in order', async () => {
    const [first, second] = [await createSeller(t), await createSeller(t)];
    const paid = (seller: TestSeller, amount: number, referenceId: number) => ({
      sellerId: seller.id,
      referenceType: 'SALE' as const, provider: 'sandbox',
      referenceId,
      effect: { kind: 'SALE_PAID' as const, movements: [{ account: 'AVAILABLE' as const, amountCents: cents(amount) }, { account: 'PSP_HOLDINGS' as const, amountCents: cents(-amount) }] },
    });
    await credit(first, 1000);
    await t.db.transaction((manager) => ledger.post(manager, [paid(second, 300, 11), paid(first, 200, 12), paid(second, -50, 13), paid(first, 25, 14)]));
    const after = async (seller: TestSeller) =>
      (await t.db.query('SELECT reference_id, available_delta_cents, available_after_cents FROM ledger_postings WHERE seller_id = $1 ORDER BY id', [seller.id])).map(
        (row: Record<string, string | number>) => [Number(row.reference_id), Number(row.available_delta_cents), Number(row.available_after_cents)],
      );
    expect(await after(first)).toEqual([
      [1, 1000, 1000],
      [12, 200, 1200],
      [14, 25, 1225],
    ]);
    expect(await after(second)).toEqual([
      [11, 300, 300],
      [13, -50, 250],
    ]);
    expect((await balanceOf(t, first)).available).toBe(1225);
    expect((await balanceOf(t, second)).available).toBe(250);
  });

  it('opens a missing balances row at zero and posts on it once, each posting with the balance after it', async () => {
    const seller = await createSeller(t);
    await t.db.query('DELETE FROM balances WHERE seller_id = $1', [seller.id]);
    const paid = (amount: number, referenceId: number) => ({
      sellerId: seller.id,
      referenceType: 'SALE' as const, provider: 'sandbox',
      referenceId,
      effect: { kind: 'SALE_PAID' as const, movements: [{ account: 'AVAILABLE' as const, amountCents: cents(amount) }, { account: 'PSP_HOLDINGS' as const, amountCents: cents(-amount) }] },
    });

    await t.db.transaction((manager) => ledger.post(manager, [paid(300, 21), paid(-100, 22), paid(45, 23)]));

    const postings = await t.db.query('SELECT reference_id, available_after_cents FROM ledger_postings WHERE seller_id = $1 ORDER BY id', [seller.id]);
    expect(postings.map((row: Record<string, string>) => [Number(row.reference_id), Number(row.available_after_cents)])).toEqual([
      [21, 300],
      [22, 200],
      [23, 245],
    ]);
    expect(await t.db.query('SELECT available_cents, blocked_cents FROM balances WHERE seller_id = $1', [seller.id])).toEqual([{ available_cents: '245', blocked_cents: '0' }]);
    expect(await ledger.verify()).toEqual([]);
  });

  it('refuses a posting that does not balance, in the domain and in the database', async () => {
    const seller = await createSeller(t);
    const unbalanced = { sellerId: seller.id, referenceType: 'SALE' as const, provider: 'sandbox', referenceId: 1, effect: { kind: 'SALE_PAID' as const, movements: [{ account: 'AVAILABLE' as const, amountCents: cents(100) }] } };
    await expect(t.db.transaction((manager) => ledger.post(manager, [unbalanced]))).rejects.toThrow(/does not balance/);
    const [{ id }] = await t.db.query(
      `INSERT INTO ledger_postings (seller_id, kind, reference_type, reference_id, available_delta_cents, blocked_delta_cents, available_after_cents, blocked_after_cents)
       VALUES ($1, 'SALE_PAID', 'SALE', 1, 0, 0, 0, 0) RETURNING id`,
      [seller.id],
    );
    await expect(
      t.db.query(`INSERT INTO ledger_entries (posting_id, seller_id, account, amount_cents, kind, reference_type, reference_id) VALUES ($1, $2, 'FEE_REVENUE', 5, 'SALE_PAID', 'SALE', 1)`, [id, seller.id]),
    ).rejects.toThrow(/does not balance/);
    expect(await balanceOf(t, seller)).toEqual({ available: 0, blocked: 0, total: 0 });
  });

  it('refuses to change or delete an entry or a posting', async () => {
    const seller = await createSeller(t);
    await credit(seller, 100);
    await expect(t.db.query('UPDATE ledger_entries SET amount_cents = 1 WHERE seller_id = $1', [seller.id])).rejects.toThrow(/append-only/);
    await expect(t.db.query('DELETE FROM ledger_entries WHERE seller_id = $1', [seller.id])).rejects.toThrow(/append-only/);
    await expect(t.db.query('UPDATE ledger_postings SET available_after_cents = 1 WHERE seller_id = $1', [seller.id])).rejects.toThrow(/append-only/);
    await expect(t.db.query('DELETE FROM ledger_postings WHERE seller_id = $1', [seller.id])).rejects.toThrow(/append-only/);
  });

  it('ledger:verify prints its figures, and exits 1 naming a posting that does not sum to zero', async () => {
    const seller = await createSeller(t);
    await credit(seller, 900);
    const [{ id }] = await t.db.query('SELECT id FROM ledger_postings WHERE seller_id = $1', [seller.id]);
    const verify = () =>
      run(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/ledger/ledger-verify.ts'], { env: { ...process.env, DATABASE_URL: process.env.E2E_DATABASE_URL, LOG_FILE: undefined } }).then(
        ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
    const entry = (amount: number) =>
      t.db.query(`INSERT INTO ledger_entries (posting_id, seller_id, account, amount_cents, kind, reference_type, reference_id) VALUES ($1, $2, 'FEE_REVENUE', $3, 'SALE_PAID', 'SALE', 1)`, [id, seller.id, amount]);
    // Planted past the trigger (a writer that went around it), then put right: append-only, so corrected by a second entry.
    await t.db.query('ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_balanced');
    try {
      await entry(7);
      const failure = await verify();
      expect(failure.code).toBe(1);
      expect(failure.stderr).toContain(`posting ${id} sums to 7 cents, not zero`);
      expect(failure.stderr).toContain('the whole ledger sums to 7 cents, not zero');
      await entry(-7);
    } finally {
      await t.db.query('ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_balanced');
    }
    const ok = await verify();
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/postings, \d+ entries; 0 postings off zero; the whole ledger sums to 0 cents/);
  }, 60_000);

  it('verify names a seller whose cached balance drifted from its entries, and ledger:verify exits 1', async () => {
    const seller = await createSeller(t);
    await credit(seller, 700);
    await t.db.query('UPDATE balances SET available_cents = available_cents + 1 WHERE seller_id = $1', [seller.id]);
    try {
      expect(await ledger.verify()).toEqual([
        { sellerId: seller.id, availableCents: 701, blockedCents: 0, ledgerAvailableCents: 700, ledgerBlockedCents: 0 },
      ]);
      const failure = await run(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/ledger/ledger-verify.ts'], {
        env: { ...process.env, DATABASE_URL: process.env.E2E_DATABASE_URL },
      }).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failure?.code).toBe(1);
      expect(failure?.stderr).toContain(`seller ${seller.id}: balance available 701 blocked 0, ledger available 700 blocked 0`);
    } finally {
      await t.db.query('UPDATE balances SET available_cents = available_cents - 1 WHERE seller_id = $1', [seller.id]);
    }
    expect(await ledger.verify()).toEqual([]);
  });

  it("GET /admin/ledger/summary answers the period's fee revenue, reversal costs and what each provider came to owe", async () => {
    const today = new Date(Date.now() - 3 * 3_600_000).toISOString().slice(0, 10);
    const summary = async () => (await t.http.get('/admin/ledger/summary').query({ from: today, to: today }).set(adminHeaders).expect(200)).body;
    const before = await summary();
    const seller = await createSeller(t);
    // A card sale of 100.00 (4.38 of fees) paid and then refunded; a PIX sale of 50.00 (0.99 of fees) paid.
    const refunded = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 10_000, card: card() }));
    expect((await sendEvent(t, seller, refunded.id, 'REFUNDED')).status).toBe(200);
    const pix = await createSale(t, seller, saleBody('PIX', { amount: 5_000 }));
    expect((await sendEvent(t, seller, pix.id, 'PAYMENT_CONFIRMED')).status).toBe(200);
    const after = await summary();
    const fees = (await t.db.query('SELECT sum(system_fee_cents)::int AS fees FROM sales WHERE seller_id = $1', [seller.id]))[0].fees as number;
    expect(after.feeRevenue - before.feeRevenue).toBe(fees);
    expect(after.reversalCost - before.reversalCost).toBe(438);
    const provider = (body: { providers: Array<{ provider: string; acquirerReceivable: number; pspHoldings: number }> }) =>
      body.providers.find((p) => p.provider === 'sandbox') ?? { acquirerReceivable: 0, pspHoldings: 0 };
    expect(provider(after).acquirerReceivable - provider(before).acquirerReceivable).toBe(0); // captured, then given back
    expect(provider(after).pspHoldings - provider(before).pspHoldings).toBe(5_000);
    expect(after.balance).toBe(0);
    expect((await t.http.get('/admin/ledger/summary').query({ from: '2026-12-01', to: '2026-11-01' }).set(adminHeaders).expect(400)).body).toEqual({
      error: 'VALIDATION_ERROR',
      message: expect.any(String),
      details: { field: 'from', message: expect.any(String) },
    });
    expect((await t.http.get('/admin/ledger/summary').set(adminHeaders).expect(400)).body.details).toEqual({ missingFields: ['from', 'to'] });
    await t.http.get('/admin/ledger/summary').query({ from: today, to: today }).expect(401);
  });
});
