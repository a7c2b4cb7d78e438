import request from 'supertest';
import { ChargesService } from '../../src/payments/charges.service';
import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { balanceOf, card, createSale, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

interface Line {
  id: number;
  createdAt: string;
  kind: string;
  reference: { type: 'SALE' | 'WITHDRAWAL'; id: number };
  available: number;
  blocked: number;
  availableAfter: number;
  blockedAfter: number;
}

/**
 * Issue 20: the seller's statement (extrato) agrees with its balance: every movement of its available
 * and blocked money (sales paid, refunds, disputes, reserve releases, withdrawals), newest first, each
 * with its cause and the balance after it, read page by page with a cursor.
 */
describe('GET /api/public/balance/statement (issue 20)', () => {
  let t: TestApp;
  let seller: TestSeller;

  beforeAll(async () => {
    t = await startApp();
    seller = await createSeller(t);
    await t.http.patch(`/admin/sellers/${seller.id}`).set(adminHeaders).send({ fees: { pixPercentBps: 0, pixFixedCents: 0 } }).expect(200);
    const paid = async (body: Record<string, unknown>, ...events: string[]) => {
      const sale = await createSale(t, seller, body);
      for (const event of events) expect((await sendEvent(t, seller, sale.id, event)).status).toBe(200);
      return sale;
    };
    await paid(saleBody('PIX', { amount: 500_000 }), 'PAYMENT_CONFIRMED');
    await paid(saleBody('PIX', { amount: 20_000 }), 'PAYMENT_CONFIRMED', 'REFUNDED');
    await paid(saleBody('PIX', { amount: 30_000 }), 'PAYMENT_CONFIRMED', 'MED_OPENED', 'MED_LOST');
    await paid(saleBody('PIX', { amount: 15_000 }), 'PAYMENT_CONFIRMED', 'MED_OPENED', 'MED_WON');
    await paid(saleBody('CREDIT_CARD', { amount: 10_000, card: card() }));
    await paid(saleBody('CREDIT_CARD', { amount: 12_000, card: card() }), 'CHARGEBACK_OPENED', 'CHARGEBACK_CONFIRMED');
    // The card reserves come back to available when their holding period ends.
    await t.app.get(ChargesService).runDueWork(new Date(Date.now() + 31 * 86_400_000), seller.id);
    const withdraw = async (amount: number, ...events: string[]) => {
      const created = await t.http.post('/api/public/cashout').set(seller.headers).send({ amount, pixKey: '52998224725', pixKeyType: 'CPF' }).expect(201);
      for (const event of events) await t.http.post(`/api/sandbox/cashouts/${created.body.id}/events`).set(seller.headers).send({ event }).expect(200);
    };
    await withdraw(150, 'PROCESSING', 'COMPLETED');
    await withdraw(200, 'PROCESSING', 'REJECTED');
    await withdraw(120);
  }, 60_000);
  afterAll(() => t.close());

  const page = (query: Record<string, string | number>) => t.http.get('/api/public/balance/statement').set(seller.headers).query(query);

  async function everyLine(query: Record<string, string | number> = {}): Promise<Line[]> {
    const lines: Line[] = [];
    let cursor: string | null = null;
    do {
      const params: Record<string, string | number> = { ...query, limit: 4 };
      if (cursor) params.cursor = cursor;
      const body = (await page(params).expect(200)).body as { statement: Line[]; nextCursor: string | null };
      expect(body.statement.length).toBeLessThanOrEqual(4);
      lines.push(...body.statement);
      cursor = body.nextCursor;
    } while (cursor);
    return lines;
  }

  it('lists every movement once, newest first; each balance after follows from the older one, the newest is the balance', async () => {
    const lines = await everyLine();
    const balance = await balanceOf(t, seller);
    expect(new Set(lines.map((line) => line.id)).size).toBe(lines.length);
    expect(lines[0]).toMatchObject({ availableAfter: balance.available, blockedAfter: balance.blocked });
    for (let i = 0; i < lines.length - 1; i += 1) {
      expect(lines[i].availableAfter - lines[i].available).toBe(lines[i + 1].availableAfter);
      expect(lines[i].blockedAfter - lines[i].blocked).toBe(lines[i + 1].blockedAfter);
      expect(Date.parse(lines[i].createdAt)).toBeGreaterThanOrEqual(Date.parse(lines[i + 1].createdAt));
    }
    const oldest = lines[lines.length - 1];
    expect([oldest.availableAfter - oldest.available, oldest.blockedAfter - oldest.blocked]).toEqual([0, 0]);
    expect(lines.reduce((sum, line) => sum + line.available, 0)).toBe(balance.available);
    expect(lines.reduce((sum, line) => sum + line.blocked, 0)).toBe(balance.blocked);
  });

  it('names the cause of each: sales paid, a refund, disputes, reserve releases and withdrawals', async () => {
    const kinds = (await everyLine()).map((line) => line.kind);
    for (const kind of [
      'SALE_PAID',
      'REFUND',
      'MED_OPENED',
      'MED_LOST',
      'MED_WON',
      'CHARGEBACK_OPENED',
      'CHARGEBACK_CONFIRMED',
      'RESERVE_RELEASED',
      'WITHDRAWAL_REQUESTED',
      'WITHDRAWAL_COMPLETED',
      'WITHDRAWAL_RETURNED',
    ]) {
      expect(kinds).toContain(kind);
    }
    // A payout handed to the provider moves no money of the seller's: it is no line of its statement.
    expect(kinds).not.toContain('WITHDRAWAL_SENT');
    const refund = (await everyLine()).find((line) => line.kind === 'REFUND') as Line;
    expect(refund).toMatchObject({ reference: { type: 'SALE', id: expect.any(Number) }, available: -20_000, blocked: 0 });
    expect((await t.http.get(`/api/transactions/${refund.reference.id}`).set(seller.headers).expect(200)).body.status).toBe('ESTORNADO');
  });

  it('filters by Brazil days, and refuses a reversed range or a cursor it did not hand out with 400 in the balance shape', async () => {
    const today = new Date(Date.now() - 3 * 3_600_000).toISOString().slice(0, 10);
    expect(await everyLine({ from: today, to: today })).toEqual(await everyLine());
    expect((await page({ from: '2099-01-01' }).expect(200)).body).toEqual({ statement: [], nextCursor: null });
    expect((await page({ to: '2020-01-01' }).expect(200)).body).toEqual({ statement: [], nextCursor: null });
    const reversed = await page({ from: '2026-12-01', to: '2026-11-01' }).expect(400);
    expect(reversed.body).toEqual({ error: 'VALIDATION_ERROR', message: expect.any(String), details: { field: 'from', message: expect.any(String) } });
    expect((await page({ cursor: Buffer.from('["x", 1]').toString('base64url') }).expect(400)).body.details).toEqual({ field: 'cursor', message: expect.any(String) });
    expect((await page({ limit: 0 }).expect(400)).body.details).toEqual({ field: 'limit', message: expect.any(String) });
  });

  it("shows a seller none of another seller's movements", async () => {
    const other = await createSeller(t);
    expect((await t.http.get('/api/public/balance/statement').set(other.headers).expect(200)).body).toEqual({ statement: [], nextCursor: null });
  });

  it('the dashboard shows the statement and downloads a period as CSV that agrees with the API and the balance', async () => {
    const agent = request.agent(t.app.getHttpServer());
    const invitation = new URL((seller.body.invitation as { url: string }).url).pathname;
    const form = await agent.get(invitation).expect(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.text)?.[1];
    await agent.post(invitation).type('form').send({ _csrf: csrf, password: 'senha-do-extrato-1', passwordConfirmation: 'senha-do-extrato-1' }).expect(303);

    const pageHtml = await agent.get('/dashboard/statement').expect(200);
    expect(pageHtml.text).toContain('Extrato');
    expect(pageHtml.text).toContain('Estorno');
    const today = new Date(Date.now() - 3 * 3_600_000).toISOString().slice(0, 10);
    const csv = await agent.get('/dashboard/statement/csv').query({ from: today, to: today }).expect(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toBe(`attachment; filename="extrato-${today}-${today}.csv"`);
    const [header, ...rows] = csv.text.trimEnd().split('\r\n').map((line) => line.split(','));
    expect(header).toEqual(['id', 'data', 'tipo', 'descricao', 'referencia', 'disponivel', 'bloqueado', 'disponivel_apos', 'bloqueado_apos']);
    const api = await everyLine({ from: today, to: today });
    expect(rows.map((row) => Number(row[0]))).toEqual(api.map((line) => line.id));
    const toCents = (reais: string) => Math.round(Number(reais) * 100);
    const balance = await balanceOf(t, seller);
    expect(rows.reduce((sum, row) => sum + toCents(row[5]), 0)).toBe(balance.available);
    expect(rows.reduce((sum, row) => sum + toCents(row[6]), 0)).toBe(balance.blocked);
    expect([toCents(rows[0][7]), toCents(rows[0][8])]).toEqual([balance.available, balance.blocked]);
    expect((await agent.get('/dashboard/statement').query({ from: '2026-12-01', to: '2026-11-01' })).status).toBe(400);
  });

  // Issue 35 L5: the dashboard passed its dates to the query unchecked, and a date that is not one was a 500.
  it('the dashboard answers a date that is not one with a 400 page naming it, on the page and for the CSV', async () => {
    const agent = request.agent(t.app.getHttpServer());
    const invitation = (await t.http.post(`/admin/sellers/${seller.id}/invitation`).set(adminHeaders).expect(201)).body.url as string;
    const path = new URL(invitation).pathname;
    const csrf = /name="_csrf" value="([^"]+)"/.exec((await agent.get(path).expect(200)).text)?.[1];
    await agent.post(path).type('form').send({ _csrf: csrf, password: 'senha-do-extrato-2', passwordConfirmation: 'senha-do-extrato-2' }).expect(303);

    const garbage = await agent.get('/dashboard/statement').query({ from: 'garbage' });
    expect({ status: garbage.status, type: garbage.headers['content-type'] }).toEqual({ status: 400, type: expect.stringMatching(/^text\/html/) });
    expect(garbage.text).toContain('from must be a date YYYY-MM-DD');
    const cursor = await agent.get('/dashboard/statement').query({ cursor: '%%%' });
    expect(cursor.status).toBe(400);
    for (const query of [{ from: '2026-13-45' }, { to: 'amanhã' }, { cursor: '!' }]) {
      const csv = await agent.get('/dashboard/statement/csv').query(query);
      expect({ query, status: csv.status, type: csv.headers['content-type'] }).toEqual({ query, status: 400, type: expect.stringMatching(/^text\/html/) });
    }
  });
});
