import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cents } from '../../src/domain/money';
import { LedgerService } from '../../src/ledger/ledger.service';
import { createSeller, TestSeller } from './setup/factories';
import { balanceOf } from './setup/sales';
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
      ledger.post(manager, {
        sellerId: seller.id,
        referenceType: 'SALE',
        referenceId,
        effect: { kind: 'SALE_PAID', movements: [{ account: 'AVAILABLE', amountCents: cents(amount) }] },
      }),
    );

  it('moves the balance by its entries, and a rolled-back transaction leaves neither', async () => {
    const seller = await createSeller(t);
    await credit(seller, 500);
    await expect(
      t.db.transaction(async (manager) => {
        await ledger.post(manager, { sellerId: seller.id, referenceType: 'SALE', referenceId: 1, effect: { kind: 'REFUND', movements: [{ account: 'AVAILABLE', amountCents: cents(-300) }] } });
        throw new Error('the cause failed');
      }),
    ).rejects.toThrow('the cause failed');
    expect(await balanceOf(t, seller)).toEqual({ available: 500, blocked: 0, total: 500 });
    const entries = await t.db.query('SELECT account, amount_cents, kind FROM ledger_entries WHERE seller_id = $1', [seller.id]);
    expect(entries).toEqual([{ account: 'AVAILABLE', amount_cents: '500', kind: 'SALE_PAID' }]);
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
        ledger.post(manager, { sellerId: seller.id, referenceType: 'SALE', referenceId: 1, effect: { kind: 'MED_LOST', movements: [{ account: 'BLOCKED', amountCents: cents(-1) }] } }),
      ),
    ).rejects.toThrow(/balances_blocked_non_negative_check/);
    expect(await balanceOf(t, seller)).toEqual({ available: 0, blocked: 0, total: 0 });
  });

  it('refuses to change or delete an entry', async () => {
    const seller = await createSeller(t);
    await credit(seller, 100);
    await expect(t.db.query('UPDATE ledger_entries SET amount_cents = 1 WHERE seller_id = $1', [seller.id])).rejects.toThrow(/append-only/);
    await expect(t.db.query('DELETE FROM ledger_entries WHERE seller_id = $1', [seller.id])).rejects.toThrow(/append-only/);
  });

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
});
