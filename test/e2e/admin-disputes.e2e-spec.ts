import { readFileSync } from 'node:fs';
import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { eventually } from './setup/processes';
import { GatewayOnPsp, startGatewayOnPsp } from './setup/psp-gateway';
import { Receiver } from './setup/receiver';
import { balanceOf, createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- loosely typed JSON answers of the API
type Json = Record<string, any>;

/**
 * The operator records the disputes acquirers and PSPs report out of band (POST /admin/sales/{id}/events):
 * the sandbox's own move on any provider's sale (here the sandbox acquirer's card sales, the sandbox's PIX
 * sales and the API Pix simulator's), with the same ledger postings and postbacks, its status line signed
 * OPERATOR with the reason, and a log line saying who moved what and why. The sandbox's route keeps
 * refusing the PSP's sales; a lost MED on the PSP's sale is the PSP's own return, never the operator's word.
 */
describe('The operator records disputes reported out of band (POST /admin/sales/{id}/events)', () => {
  let gateway: GatewayOnPsp;
  let t: TestApp;
  let receiver: Receiver;
  let seller: TestSeller;

  beforeAll(async () => {
    receiver = await Receiver.start();
    gateway = await startGatewayOnPsp({ POSTBACK_ALLOW_PRIVATE_NETWORKS: 'true' });
    t = gateway.t;
    seller = await createSeller(t);
  }, 60_000);

  afterAll(async () => {
    await gateway.close();
    await receiver.close();
  });

  afterEach(() => expect(gateway.psp.violations).toEqual([]));

  const record = (id: number | string, body: Record<string, unknown>, headers: Record<string, string> = adminHeaders) =>
    t.http.post(`/admin/sales/${id}/events`).set(headers).send(body);
  const transaction = async (id: number) => (await t.http.get(`/api/transactions/${id}`).set(seller.headers).expect(200)).body as Json;
  const postingsOf = async (saleId: number) =>
    t.db.query(
      `SELECT kind, available_delta_cents::int AS available, blocked_delta_cents::int AS blocked
         FROM ledger_postings WHERE reference_type = 'SALE' AND reference_id = $1 ORDER BY id`,
      [saleId],
    );
  const statusLines = async (saleId: number) => t.db.query(`SELECT count(*)::int AS n FROM sale_status_changes WHERE sale_id = $1`, [saleId]).then(([row]) => row.n as number);
  const paidCardSale = async (postbackPath?: string) => {
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 20000, ...(postbackPath ? { postbackUrl: `${receiver.url}${postbackPath}` } : {}) }));
    expect(sale.status).toBe('PAGO');
    return sale;
  };
  const paidPspSale = async (amount: number) => {
    const sale = await createSale(t, seller, saleBody('PIX', { amount }));
    await gateway.psp.pay((await transaction(sale.id)).externalTransactionId);
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'PAGO', 'the PSP’s Pix applied to the sale');
    return sale;
  };
  /** The run's log lines (LOG_FILE, JSON) that the operator's record of `event` on sale `saleId` wrote. */
  const operatorLogLines = (saleId: number, event: string) =>
    readFileSync(process.env.LOG_FILE as string, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"who":"operator"'))
      .map((line) => JSON.parse(line) as Json)
      .filter((line) => line.saleId === saleId && line.event === event);

  it('CHARGEBACK_OPENED then CHARGEBACK_CONFIRMED on a card sale move it and its balance as the sandbox’s events do, signed OPERATOR with the reason, posted back and logged', async () => {
    // The same sale twice: one moved by the sandbox's route, the other by the operator's.
    const bySandbox = await paidCardSale();
    const byOperator = await paidCardSale(`/admin-disputes/${seller.id}`);

    let before = await balanceOf(t, seller);
    expect((await sendEvent(t, seller, bySandbox.id, 'CHARGEBACK_OPENED')).status).toBe(200);
    const sandboxFine = before.available - (await balanceOf(t, seller)).available;
    expect(sandboxFine).toBeGreaterThan(0);

    before = await balanceOf(t, seller);
    const opened = await record(byOperator.id, { event: 'CHARGEBACK_OPENED', reason: '  Reported in the acquirer’s back office, case 4711  ' }).expect(200);
    expect(opened.body).toMatchObject({ id: byOperator.id, status: 'CHARGEBACK', paymentMethod: 'CREDIT_CARD', amount: 20000, sellerId: seller.id });
    expect(opened.body.statusHistory).toEqual([
      { previousStatus: null, status: 'PENDENTE', changedAt: expect.any(String), recordedBy: null, reason: null },
      { previousStatus: 'PENDENTE', status: 'EM_PROCESSAMENTO', changedAt: expect.any(String), recordedBy: null, reason: null },
      { previousStatus: 'EM_PROCESSAMENTO', status: 'PAGO', changedAt: expect.any(String), recordedBy: null, reason: null },
      { previousStatus: 'PAGO', status: 'CHARGEBACK', changedAt: expect.any(String), recordedBy: 'OPERATOR', reason: 'Reported in the acquirer’s back office, case 4711' },
    ]);
    // What the seller sees: the sale in CHARGEBACK, the same fine as the sandbox's event took.
    expect((await transaction(byOperator.id)).status).toBe('CHARGEBACK');
    const afterOpened = await balanceOf(t, seller);
    expect(before.available - afterOpened.available).toBe(sandboxFine);
    expect(afterOpened.blocked).toBe(before.blocked);

    // Confirmed: the same reversal as the sandbox's CHARGEBACK_CONFIRMED.
    before = await balanceOf(t, seller);
    expect((await sendEvent(t, seller, bySandbox.id, 'CHARGEBACK_CONFIRMED')).body.status).toBe('ESTORNADO');
    const sandboxReversal = await balanceOf(t, seller);
    const confirmed = await record(byOperator.id, { event: 'CHARGEBACK_CONFIRMED', reason: 'Acquirer file of 2026-11-23: chargeback lost' }).expect(200);
    expect(confirmed.body.status).toBe('ESTORNADO');
    expect(confirmed.body.statusHistory.slice(-2).map((line: Json) => [line.previousStatus, line.status, line.recordedBy, line.reason])).toEqual([
      ['PAGO', 'CHARGEBACK', 'OPERATOR', 'Reported in the acquirer’s back office, case 4711'],
      ['CHARGEBACK', 'ESTORNADO', 'OPERATOR', 'Acquirer file of 2026-11-23: chargeback lost'],
    ]);
    const operatorReversal = await balanceOf(t, seller);
    expect([operatorReversal.available - sandboxReversal.available, operatorReversal.blocked - sandboxReversal.blocked]).toEqual([
      sandboxReversal.available - before.available,
      sandboxReversal.blocked - before.blocked,
    ]);
    // Posting for posting, what the sandbox's events booked.
    expect(await postingsOf(byOperator.id)).toEqual(await postingsOf(bySandbox.id));

    // The seller's postbacks of both moves, in order.
    const path = `/admin-disputes/${seller.id}`;
    await receiver.waitFor((received) => received.filter((r) => r.path === path && r.body.status === 'ESTORNADO').length === 1);
    expect(receiver.received.filter((r) => r.path === path).map((r) => [r.body.previousStatus, r.body.status])).toEqual([
      ['PENDENTE', 'EM_PROCESSAMENTO'],
      ['EM_PROCESSAMENTO', 'PAGO'],
      ['PAGO', 'CHARGEBACK'],
      ['CHARGEBACK', 'ESTORNADO'],
    ]);

    // The log line: who, the sale, the event, the reason and the status it led to.
    const [logged] = await eventually(async () => operatorLogLines(byOperator.id, 'CHARGEBACK_OPENED'), (lines) => lines.length === 1, 'the operator’s log line');
    expect(logged).toMatchObject({
      who: 'operator',
      saleId: byOperator.id,
      sellerId: seller.id,
      event: 'CHARGEBACK_OPENED',
      reason: 'Reported in the acquirer’s back office, case 4711',
      previousStatus: 'PAGO',
      status: 'CHARGEBACK',
    });
  });

  it('MED_OPENED then MED_WON on a PIX sale the PSP (api-pix) holds: moved by the operator while the sandbox’s route refuses them 422; MED_LOST refused 422, the PSP’s return books it', async () => {
    const sale = await paidPspSale(10000);
    const net = Number((await t.db.query(`SELECT net_amount_cents FROM sales WHERE id = $1`, [sale.id]))[0].net_amount_cents);
    const before = await balanceOf(t, seller);

    const refused = await sendEvent(t, seller, sale.id, 'MED_OPENED');
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ error: 'NOT_SUPPORTED', message: expect.stringContaining('held by the provider api-pix') });
    expect((await transaction(sale.id)).status).toBe('PAGO');

    const opened = await record(sale.id, { event: 'MED_OPENED', reason: 'MED notified by the PSP, protocol 2026112300001' }).expect(200);
    expect(opened.body).toMatchObject({ id: sale.id, status: 'MED', paymentMethod: 'PIX', sellerId: seller.id });
    expect(opened.body.statusHistory.at(-1)).toMatchObject({ previousStatus: 'PAGO', status: 'MED', recordedBy: 'OPERATOR', reason: 'MED notified by the PSP, protocol 2026112300001' });
    expect((await transaction(sale.id)).status).toBe('MED');
    // The net moves from available to blocked, as the sandbox's MED_OPENED does.
    const inMed = await balanceOf(t, seller);
    expect(inMed).toEqual({ available: before.available - net, blocked: before.blocked + net, total: before.total });

    // A lost MED is the PSP's return of the Pix, booked from the PSP's own evidence: not on the operator's word.
    expect((await sendEvent(t, seller, sale.id, 'MED_LOST')).status).toBe(422);
    const lost = await record(sale.id, { event: 'MED_LOST', reason: 'PSP closed the MED for the payer' });
    expect(lost.status).toBe(422);
    expect(lost.body).toEqual({ error: 'NOT_SUPPORTED', message: expect.stringContaining('held by the PSP api-pix: a lost MED is its return of the Pix') });
    expect((await transaction(sale.id)).status).toBe('MED');
    expect(await balanceOf(t, seller)).toEqual(inMed);

    expect((await sendEvent(t, seller, sale.id, 'MED_WON')).status).toBe(422);
    const won = await record(sale.id, { event: 'MED_WON', reason: 'PSP closed the MED for the seller' }).expect(200);
    expect(won.body.status).toBe('PAGO');
    expect(won.body.statusHistory.slice(-2).map((line: Json) => [line.previousStatus, line.status, line.recordedBy, line.reason])).toEqual([
      ['PAGO', 'MED', 'OPERATOR', 'MED notified by the PSP, protocol 2026112300001'],
      ['MED', 'PAGO', 'OPERATOR', 'PSP closed the MED for the seller'],
    ]);
    expect(await balanceOf(t, seller)).toEqual(before);
    expect((await postingsOf(sale.id)).map((posting: Json) => posting.kind)).toEqual(['SALE_PAID', 'MED_OPENED', 'MED_WON']);
  });

  it('MED_OPENED then MED_LOST on a PIX sale the sandbox holds: the same postings as the sandbox’s events', async () => {
    const own = await startApp();
    try {
      const ownSeller = await createSeller(own);
      const paidPix = async () => {
        const sale = await createSale(own, ownSeller, saleBody('PIX', { amount: 10000 }));
        expect((await sendEvent(own, ownSeller, sale.id, 'PAYMENT_CONFIRMED')).body.status).toBe('PAGO');
        return sale;
      };
      const bySandbox = await paidPix();
      const byOperator = await paidPix();
      for (const event of ['MED_OPENED', 'MED_LOST']) {
        expect((await sendEvent(own, ownSeller, bySandbox.id, event)).status).toBe(200);
        const answer = await own.http.post(`/admin/sales/${byOperator.id}/events`).set(adminHeaders).send({ event, reason: `${event} reported by the PSP` }).expect(200);
        expect(answer.body.statusHistory.at(-1)).toMatchObject({ recordedBy: 'OPERATOR', reason: `${event} reported by the PSP` });
      }
      const postings = (id: number) =>
        own.db.query(`SELECT kind, available_delta_cents::int AS available, blocked_delta_cents::int AS blocked FROM ledger_postings WHERE reference_type = 'SALE' AND reference_id = $1 ORDER BY id`, [id]);
      expect((await postings(byOperator.id)).map((posting: Json) => posting.kind)).toEqual(['SALE_PAID', 'MED_OPENED', 'MED_LOST']);
      expect(await postings(byOperator.id)).toEqual(await postings(bySandbox.id));
      const statuses = await own.db.query(`SELECT id, status FROM sales WHERE id = ANY($1) ORDER BY id`, [[bySandbox.id, byOperator.id]]);
      expect(statuses.map((row: Json) => row.status)).toEqual(['ESTORNADO', 'ESTORNADO']);
    } finally {
      await own.close();
    }
  });

  it('refuses a missing or blank reason, an event that is no dispute, an unknown sale and a request without the admin token, moving nothing', async () => {
    const sale = await paidCardSale();
    const before = { balance: await balanceOf(t, seller), lines: await statusLines(sale.id) };

    const missing = await record(sale.id, { event: 'CHARGEBACK_OPENED' });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: 'MISSING_FIELDS', message: expect.any(String), details: { missingFields: ['reason'] } });

    for (const reason of ['', '   \n\t ']) {
      const blank = await record(sale.id, { event: 'CHARGEBACK_OPENED', reason });
      expect({ reason, status: blank.status, body: blank.body }).toEqual({
        reason,
        status: 400,
        body: { error: 'VALIDATION_ERROR', message: expect.any(String), details: { field: 'reason', message: 'reason must not be blank' } },
      });
    }
    const long = await record(sale.id, { event: 'CHARGEBACK_OPENED', reason: 'x'.repeat(501) });
    expect(long.status).toBe(400);
    expect(long.body.details).toEqual({ field: 'reason', message: 'reason must be at most 500 characters' });

    const notDispute = await record(sale.id, { event: 'PAYMENT_CONFIRMED', reason: 'not a dispute' });
    expect(notDispute.status).toBe(400);
    expect(notDispute.body).toMatchObject({ error: 'VALIDATION_ERROR', details: { field: 'event' } });
    expect(notDispute.body.details.message).toBe('event must be one of: CHARGEBACK_OPENED, CHARGEBACK_REVERSED, CHARGEBACK_CONFIRMED, MED_OPENED, MED_WON, MED_LOST');

    const unknown = await record(2_000_000_000, { event: 'CHARGEBACK_OPENED', reason: 'no such sale' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'NOT_FOUND', message: 'Sale 2000000000 not found' });
    expect((await record('abc', { event: 'CHARGEBACK_OPENED', reason: 'bad id' })).body.error).toBe('INVALID_ID');

    for (const headers of [{}, { 'X-Admin-Token': 'not-the-operator-token-0000' }, seller.headers]) {
      const anonymous = await record(sale.id, { event: 'CHARGEBACK_OPENED', reason: 'who am I' }, headers);
      expect({ headers: Object.keys(headers), status: anonymous.status, error: anonymous.body.error }).toEqual({ headers: Object.keys(headers), status: 401, error: 'UNAUTHORIZED' });
    }

    expect((await transaction(sale.id)).status).toBe('PAGO');
    expect({ balance: await balanceOf(t, seller), lines: await statusLines(sale.id) }).toEqual(before);
  });

  it('answers 409 INVALID_TRANSITION for a move the sale’s state does not allow (a MED on a card sale, a chargeback closed before it opened), moving nothing', async () => {
    const card = await paidCardSale();
    const pix = await paidPspSale(3000);
    const before = { balance: await balanceOf(t, seller), card: await statusLines(card.id), pix: await statusLines(pix.id) };

    for (const [id, event] of [
      [card.id, 'MED_OPENED'],
      [card.id, 'CHARGEBACK_REVERSED'],
      [pix.id, 'CHARGEBACK_OPENED'],
      [pix.id, 'MED_WON'],
    ] as const) {
      const refused = await record(id, { event, reason: 'a move its state does not allow' });
      expect({ event, status: refused.status, error: refused.body.error }).toEqual({ event, status: 409, error: 'INVALID_TRANSITION' });
    }
    // Nor a dispute on a sale nobody paid.
    const pending = await createSale(t, seller, saleBody('BOLETO', { amount: 4000 }));
    expect((await record(pending.id, { event: 'CHARGEBACK_OPENED', reason: 'an unpaid boleto' })).status).toBe(409);

    expect((await transaction(card.id)).status).toBe('PAGO');
    expect((await transaction(pix.id)).status).toBe('PAGO');
    expect({ balance: await balanceOf(t, seller), card: await statusLines(card.id), pix: await statusLines(pix.id) }).toEqual(before);
  });
});
