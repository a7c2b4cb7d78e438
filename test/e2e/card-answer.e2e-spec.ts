import { createSeller, TestSeller } from './setup/factories';
import { Receiver } from './setup/receiver';
import { balanceOf, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

/**
 * A card sale is written EM_PROCESSAMENTO in one statement, and the acquirer's answer is applied in one
 * statement too when nothing else runs with it (no Idempotency-Key, no subscription): the sale's
 * conditional write, its status line, its postback and its posting with the balance move together.
 * When that statement cannot apply the answer (the sale was moved meanwhile, the seller has no balances
 * row) it writes nothing, and the answer is applied in a transaction on the sale read under lock.
 * SANDBOX_CHARGE_ANSWER_DELAY_MS: the charge is made, and its answer travels that long.
 */
const DELAY_MS = 1500;

describe('A card sale and its answer, one statement each', () => {
  let t: TestApp;
  let slow: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startApp({ POSTBACK_ALLOW_PRIVATE_NETWORKS: 'true' });
    slow = await startApp({ SANDBOX_CHARGE_ANSWER_DELAY_MS: String(DELAY_MS) });
    receiver = await Receiver.start();
  }, 60_000);
  afterAll(async () => {
    await receiver.close();
    await t.close();
    await slow.close();
  });

  const historyOf = async (app: TestApp, saleId: number) =>
    (await app.db.query('SELECT previous_status, status FROM sale_status_changes WHERE sale_id = $1 ORDER BY id', [saleId])).map(
      (row: { previous_status: string | null; status: string }) => [row.previous_status, row.status],
    );
  const postingsOf = async (app: TestApp, saleId: number) =>
    app.db.query(
      `SELECT kind, available_delta_cents::int AS available, blocked_delta_cents::int AS blocked, available_after_cents::int AS "availableAfter"
         FROM ledger_postings WHERE reference_type = 'SALE' AND reference_id = $1 ORDER BY id`,
      [saleId],
    );

  it('pays a card sale with its two status lines, one posting and its postbacks in order', async () => {
    const seller = await createSeller(t);
    const body = saleBody('CREDIT_CARD', { postbackUrl: `${receiver.url}/answer/${seller.id}` });
    const { body: created } = await t.http.post('/api/sales').set(seller.headers).send(body).expect(201);

    expect(created.sale.status).toBe('PAGO');
    expect(await historyOf(t, created.sale.id)).toEqual([
      [null, 'PENDENTE'],
      ['PENDENTE', 'EM_PROCESSAMENTO'],
      ['EM_PROCESSAMENTO', 'PAGO'],
    ]);
    const balance = await balanceOf(t, seller);
    expect(await postingsOf(t, created.sale.id)).toEqual([{ kind: 'SALE_PAID', available: balance.available, blocked: balance.blocked, availableAfter: balance.available }]);
    const [sale] = await t.db.query('SELECT net_amount_cents::int AS net, system_fee_cents::int AS fee FROM sales WHERE id = $1', [created.sale.id]);
    expect(balance.total).toBe(sale.net);
    expect(sale.net + sale.fee).toBe(10000);
    await receiver.waitFor((received) => received.filter((r) => r.path === `/answer/${seller.id}`).length >= 2);
    const postbacks = receiver.received.filter((r) => r.path === `/answer/${seller.id}`).map((r) => [r.body.previousStatus, r.body.status, r.body.sequence]);
    expect(postbacks).toEqual([
      ['PENDENTE', 'EM_PROCESSAMENTO', 1],
      ['EM_PROCESSAMENTO', 'PAGO', 2],
    ]);
  });

  it('applies a late approval to a sale failed while its answer travelled: PAGO by the FALHA retry, paid once', async () => {
    const seller: TestSeller = await createSeller(slow);
    const email = `late-${seller.id}@example.com`;
    const pending = slow.http
      .post('/api/sales')
      .set(seller.headers)
      .send(saleBody('CREDIT_CARD', { customer: { name: 'Ana Souza', email, phone: '11987654321' } }));
    const response = pending.then((answered) => answered);
    let saleId: number | undefined;
    for (const deadline = Date.now() + 5_000; !saleId && Date.now() < deadline; ) {
      const rows: Array<{ id: number }> = await slow.db.query(`SELECT id FROM sales WHERE customer_email = $1 AND status = 'EM_PROCESSAMENTO'`, [email]);
      saleId = rows[0]?.id;
      if (!saleId) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (!saleId) throw new Error('the sale never reached the acquirer');
    expect((await sendEvent(slow, seller, saleId, 'PROCESSING_FAILED')).status).toBe(200);

    const { status, body } = await response;
    expect(status).toBe(201);
    expect(body.sale.status).toBe('PAGO');
    expect(await historyOf(slow, saleId)).toEqual([
      [null, 'PENDENTE'],
      ['PENDENTE', 'EM_PROCESSAMENTO'],
      ['EM_PROCESSAMENTO', 'FALHA'],
      ['FALHA', 'PAGO'],
    ]);
    const postings = await postingsOf(slow, saleId);
    expect(postings).toHaveLength(1);
    expect(postings[0].kind).toBe('SALE_PAID');
    const balance = await balanceOf(slow, seller);
    expect(balance.available).toBe(postings[0].available);
  });

  it('opens a missing balances row and pays the sale when its seller has none', async () => {
    const seller = await createSeller(t);
    await t.db.query('DELETE FROM balances WHERE seller_id = $1', [seller.id]);

    const { body } = await t.http.post('/api/sales').set(seller.headers).send(saleBody('CREDIT_CARD')).expect(201);

    expect(body.sale.status).toBe('PAGO');
    const postings = await postingsOf(t, body.sale.id);
    expect(postings).toHaveLength(1);
    expect(await t.db.query('SELECT available_cents::int AS available FROM balances WHERE seller_id = $1', [seller.id])).toEqual([{ available: postings[0].available }]);
  });
});
