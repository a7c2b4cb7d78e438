import { DataSource } from 'typeorm';
import { MoneyPipeline } from '../../src/payments/money-pipeline';
import { SaleEntity } from '../../src/sales/entities/sale.entity';
import { SalesRepository } from '../../src/sales/sales.repository';
import { SellerService } from '../../src/seller/seller.service';
import { createSeller, TestSeller } from './setup/factories';
import { balanceOf, createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

/**
 * A unit of work of the money pipeline is written whole or not at all (src/payments/money-pipeline.ts):
 * its sales' moves with their status lines, its postbacks and its postings with the balances they move,
 * in a transaction or as one statement alone, for a seller with or without its balances row.
 */
describe('A money unit of work is written whole or not at all', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ POSTBACK_ALLOW_PRIVATE_NETWORKS: 'true', OUTBOX_POLL_MS: '600000' });
  });
  afterAll(() => t.close());

  const db = (): DataSource => t.db;
  const salesOf = async (ids: number[]): Promise<SaleEntity[]> => t.app.get(SalesRepository).findByIdsForUpdate(ids, db().manager);
  const schedulesOf = (sellers: TestSeller[]) => t.app.get(SellerService).feeSchedulesOf(sellers.map((s) => s.id), db().manager);
  const saleRow = async (id: number) =>
    (
      await db().query(
        `SELECT s.status, s.net_amount_cents::int AS net,
                (SELECT count(*)::int FROM ledger_postings p WHERE p.reference_type = 'SALE' AND p.reference_id = s.id) AS postings,
                (SELECT array_agg(c.status ORDER BY c.id) FROM sale_status_changes c WHERE c.sale_id = s.id) AS lines,
                (SELECT array_agg(o.payload->>'status' ORDER BY o.id) FROM outbox_events o WHERE o.aggregate_key = 'sale:' || s.id AND o.event_type = 'transaction.status_changed') AS postbacks
           FROM sales s WHERE s.id = $1`,
        [id],
      )
    )[0] as { status: string; net: number | null; postings: number; lines: string[]; postbacks: string[] | null };
  // The sandbox's record of a payment the test books through the pipeline itself (ledger:verify's provider check).
  const recordPayments = async (...sales: Array<{ id: number; amount: unknown }>) => {
    for (const sale of sales) await db().query(`INSERT INTO sandbox_payments (sale_id, amount_cents) VALUES ($1, $2) ON CONFLICT (sale_id) DO NOTHING`, [sale.id, sale.amount]);
  };
  const dropBalancesRow = (seller: TestSeller) => db().query(`DELETE FROM balances WHERE seller_id = $1`, [seller.id]);
  const mismatches = async (sellers: TestSeller[]) =>
    (await db().query(
      `SELECT b.seller_id, b.available_cents::int AS available, (SELECT COALESCE(sum(e.amount_cents), 0)::int FROM ledger_entries e WHERE e.seller_id = b.seller_id AND e.account = 'AVAILABLE') AS ledger
         FROM balances b WHERE b.seller_id = ANY($1::int[])`,
      [sellers.map((s) => s.id)],
    )) as Array<{ seller_id: number; available: number; ledger: number }>;

  it('a card sale answered for a seller without a balances row (its one statement finds none, its transaction opens it): PAGO once, one posting, one PAGO postback, the balance its net', async () => {
    const seller = await createSeller(t);
    await dropBalancesRow(seller);
    const response = await t.http
      .post('/api/sales')
      .set(seller.headers)
      .send(saleBody('CREDIT_CARD', { amount: 12_345, postbackUrl: 'http://127.0.0.1:9/hook' }))
      .expect(201);
    expect(response.body.sale.status).toBe('PAGO');
    const sale = await saleRow(response.body.sale.id);
    expect(sale).toMatchObject({ status: 'PAGO', postings: 1, lines: ['PENDENTE', 'EM_PROCESSAMENTO', 'PAGO'], postbacks: ['EM_PROCESSAMENTO', 'PAGO'] });
    expect((await balanceOf(t, seller)).total).toBe(sale.net);
    for (const row of await mismatches([seller])) expect(row.available).toBe(row.ledger);
  });

  it('a unit of two sellers in a transaction, one without its balances row: both sales moved with their postings, each balance its net', async () => {
    const [a, b] = [await createSeller(t), await createSeller(t)];
    const saleA = await createSale(t, a, saleBody('BOLETO', { amount: 30_000 }));
    const saleB = await createSale(t, b, saleBody('BOLETO', { amount: 40_000 }));
    await dropBalancesRow(b);
    await recordPayments({ id: saleA.id, amount: 30_000 }, { id: saleB.id, amount: 40_000 });
    const schedules = await schedulesOf([a, b]);
    await db().transaction(async (manager) => {
      const locked = await t.app.get(SalesRepository).findByIdsForUpdate([saleA.id, saleB.id], manager);
      await t.app.get(MoneyPipeline).write(manager, { sales: locked.map((sale) => ({ sale, event: 'PAYMENT_CONFIRMED' as const })) }, new Date(), schedules);
    });
    for (const [seller, sale] of [
      [a, saleA],
      [b, saleB],
    ] as const) {
      const row = await saleRow(sale.id);
      expect(row).toMatchObject({ status: 'PAGO', postings: 1, lines: ['PENDENTE', 'PAGO'] });
      expect((await balanceOf(t, seller)).total).toBe(row.net);
    }
    expect((await mismatches([a, b])).filter((row) => row.available !== row.ledger)).toEqual([]);
  });

  it('a unit in a transaction with a sale moved by someone else first: CONFLICT, and nothing of it is kept', async () => {
    const seller = await createSeller(t);
    const first = await createSale(t, seller, saleBody('BOLETO', { amount: 10_000 }));
    const second = await createSale(t, seller, saleBody('BOLETO', { amount: 20_000 }));
    const stale = await salesOf([first.id, second.id]);
    await recordPayments({ id: first.id, amount: 10_000 });
    expect((await sendEvent(t, seller, second.id, 'PAYMENT_CONFIRMED')).status).toBe(200);
    const before = await balanceOf(t, seller);
    const schedules = await schedulesOf([seller]);
    await expect(
      db().transaction((manager) => t.app.get(MoneyPipeline).write(manager, { sales: stale.map((sale) => ({ sale, event: 'PAYMENT_CONFIRMED' as const })) }, new Date(), schedules)),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await saleRow(first.id)).toMatchObject({ status: 'PENDENTE', postings: 0, lines: ['PENDENTE'] });
    expect(await balanceOf(t, seller)).toEqual(before);
  });

  it('a unit written alone (writeAlone) with two sales of one seller, one moved by someone else first: nothing of it is written, the caller is answered null', async () => {
    const seller = await createSeller(t);
    const first = await createSale(t, seller, saleBody('BOLETO', { amount: 10_000 }));
    const second = await createSale(t, seller, saleBody('BOLETO', { amount: 20_000 }));
    const stale = await salesOf([first.id, second.id]);
    await recordPayments({ id: first.id, amount: 10_000 });
    expect((await sendEvent(t, seller, second.id, 'PAYMENT_CONFIRMED')).status).toBe(200);
    const before = await balanceOf(t, seller);
    const schedules = await schedulesOf([seller]);
    const done = await t.app
      .get(MoneyPipeline)
      .writeAlone(db().manager, { sales: stale.map((sale) => ({ sale, event: 'PAYMENT_CONFIRMED' as const })) }, new Date(), schedules);
    expect(done).toBeNull();
    // The first sale is not moved without its posting: either the whole unit or nothing.
    expect(await saleRow(first.id)).toMatchObject({ status: 'PENDENTE', postings: 0, lines: ['PENDENTE'] });
    expect(await balanceOf(t, seller)).toEqual(before);
  });
});
