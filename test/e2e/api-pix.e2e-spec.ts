import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiPixSimulator, makeCertificates, PixCertificates } from './setup/api-pix';
import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { balanceOf, saleBody } from './setup/sales';
import { eventually, freePort } from './setup/processes';
import { startApp, TestApp } from './setup/test-app';
import { PixReceiptsRepository } from '../../src/pix/pix-receipts.repository';

const RECEIVER_KEY = randomUUID();
const CLIENT_ID = 'gateway-e2e';
const CLIENT_SECRET = randomBytes(16).toString('hex');

/**
 * Issue 21: real PIX through the BCB's API Pix, against a simulated PSP over real sockets (HTTPS with
 * mutual TLS, OAuth 2.0 client credentials) that checks every request the gateway sends and every answer
 * it gives against the BCB's OpenAPI document.
 */
describe('PIX through API Pix (issue 21)', () => {
  let certs: PixCertificates;
  let psp: ApiPixSimulator;
  let t: TestApp;
  let seller: TestSeller;
  let webhookPath: string;

  beforeAll(async () => {
    certs = await makeCertificates();
    psp = await ApiPixSimulator.start({ certs, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, receiverKey: RECEIVER_KEY });
    const port = await freePort();
    webhookPath = `/psp/notifications/${randomBytes(16).toString('hex')}`;
    t = await startApp({
      PIX_PROVIDER: 'api-pix',
      API_PIX_BASE_URL: psp.baseUrl,
      API_PIX_TOKEN_URL: psp.tokenUrl,
      API_PIX_CLIENT_ID: CLIENT_ID,
      API_PIX_CLIENT_SECRET: CLIENT_SECRET,
      API_PIX_CERT_FILE: certs.clientCertFile,
      API_PIX_KEY_FILE: certs.clientKeyFile,
      API_PIX_CA_FILE: certs.caFile,
      API_PIX_RECEIVER_KEY: RECEIVER_KEY,
      API_PIX_WEBHOOK_URL: `http://127.0.0.1:${port}${webhookPath}`,
      API_PIX_RECONCILE_SECONDS: '1',
      // The sandbox's clock drives the jobs on the simulator's records (a test environment).
      SANDBOX_CLOCK_MOVES_REAL_RECORDS: 'true',
      API_PIX_TIMEOUT_MS: '1500',
    });
    await t.app.listen(port, '127.0.0.1');
    seller = await createSeller(t);
    await eventually(async () => psp.webhookUrl(RECEIVER_KEY), (url) => url !== undefined, 'the webhook registration');
  });

  afterAll(async () => {
    await t.close();
    await psp.close();
  });

  afterEach(() => {
    psp.autoSettleRefunds(null);
    // Every request the gateway sent and every answer the PSP gave, against the BCB's document.
    expect(psp.violations).toEqual([]);
  });

  const createPixSale = async (overrides: Record<string, unknown> = {}) => {
    const response = await t.http.post('/api/sales').set(seller.headers).send(saleBody('PIX', overrides)).expect(201);
    return response.body.sale as { id: number; status: string; payment: { pix: { key: string; qrCodeBase64: string; expiresAt: string | null } } };
  };
  const transaction = async (id: number) => (await t.http.get(`/api/transactions/${id}`).set(seller.headers).expect(200)).body;
  const txidOf = async (id: number) => (await transaction(id)).externalTransactionId as string;
  const receipt = async (endToEndId: string) => (await t.db.query(`SELECT outcome, seen_by, return_status, sale_id FROM pix_receipts WHERE end_to_end_id = $1`, [endToEndId]))[0];

  it('registers its webhook and creates the charge at the PSP: the BR Code is the PSP’s, the txid the sale’s', async () => {
    expect(psp.webhookUrl(RECEIVER_KEY)).toBe(`http://127.0.0.1:${new URL(psp.webhookUrl(RECEIVER_KEY) as string).port}${webhookPath}`);
    const sale = await createPixSale({ amount: 12345, pix: { expiresInDays: 2 } });
    const txid = await txidOf(sale.id);
    expect(txid).toMatch(/^[a-zA-Z0-9]{26,35}$/);
    const cob = psp.cob(txid);
    expect(cob).toMatchObject({ status: 'ATIVA', chave: RECEIVER_KEY, valor: { original: '123.45' }, calendario: { expiracao: 2 * 86400 } });
    expect(cob?.devedor).toMatchObject({ cpf: '52998224725', nome: 'João da Silva' });
    expect(sale.payment.pix.key).toBe(cob?.pixCopiaECola);
    expect(sale.payment.pix.qrCodeBase64).toMatch(/^data:image\/png;base64,/);
  });

  it('a sale with no expiry gets a 30-day charge at the PSP and expires with it', async () => {
    const sale = await createPixSale();
    const cob = psp.cob(await txidOf(sale.id));
    expect(cob?.calendario.expiracao).toBe(30 * 86400);
    expect(Date.parse(sale.payment.pix.expiresAt as string) - Date.now()).toBeGreaterThan(29 * 86400_000);
  });

  it('a paid Pix notified by the PSP makes the sale PAGO once, with its E2E id, even when notified twice', async () => {
    const sale = await createPixSale({ amount: 5000 });
    const pix = await psp.pay(await txidOf(sale.id), { notify: 'twice' });
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'PAGO', 'the sale paid');
    await sleep(300);
    const [row] = await t.db.query(`SELECT pix_end_to_end_id FROM sales WHERE id = $1`, [sale.id]);
    expect(row.pix_end_to_end_id).toBe(pix.endToEndId);
    expect(await receipt(pix.endToEndId)).toMatchObject({ outcome: 'APPLIED', seen_by: 'NOTIFICATION' });
    const paid = await t.db.query(`SELECT count(*)::int AS n FROM ledger_postings WHERE reference_type = 'SALE' AND reference_id = $1 AND kind = 'SALE_PAID'`, [sale.id]);
    expect(paid[0].n).toBe(1);
    expect(psp.callbacks.filter((callback) => callback.status === 200).length).toBeGreaterThanOrEqual(2);
  });

  it('a payment whose notification never comes is applied by reconciliation alone', async () => {
    const sale = await createPixSale({ amount: 7000 });
    const pix = await psp.pay(await txidOf(sale.id), { notify: 'never' });
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'PAGO', 'reconciliation to apply the payment');
    expect(await receipt(pix.endToEndId)).toMatchObject({ outcome: 'APPLIED', seen_by: 'RECONCILIATION' });
  });

  it('a reconciliation pass cut short by a killed process (its lease taken a minute ago, never renewed) does not hold the next passes back', async () => {
    // What a SIGKILL mid-pass leaves: the cursor leased by a pass whose process is gone. This test takes the
    // lease itself (so no pass of the service holds or frees it meanwhile), then "dies": its lease is left as
    // taken 61 s ago, never renewed (a live pass renews it every 20 s).
    const receipts = t.app.get(PixReceiptsRepository);
    await eventually(() => receipts.claimReconciliation(new Date()), (claimed) => claimed !== null, 'the reconciliation lease', 30_000);
    const sale = await createPixSale({ amount: 7100 });
    await t.db.query(`UPDATE pix_reconciliation_cursor SET claimed_at = now() - interval '61 seconds' WHERE id = 1`);
    const pix = await psp.pay(await txidOf(sale.id), { notify: 'never' });
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'PAGO', 'reconciliation to apply the payment');
    expect(await receipt(pix.endToEndId)).toMatchObject({ outcome: 'APPLIED', seen_by: 'RECONCILIATION' });
  });

  it('a forged notification (a Pix the PSP does not have) changes nothing', async () => {
    const sale = await createPixSale({ amount: 8000 });
    const forged = randomBytes(16).toString('hex');
    await t.http.post(`${webhookPath}/pix`).send({ pix: [{ endToEndId: forged, txid: await txidOf(sale.id), valor: '80.00', horario: new Date().toISOString() }] }).expect(200);
    await eventually(async () => (await t.db.query(`SELECT count(*)::int AS n FROM provider_inbox WHERE kind = 'pix' AND object_id = $1`, [forged]))[0].n, (n) => n === 0, 'the notification checked');
    expect(await receipt(forged)).toBeUndefined();
    expect((await transaction(sale.id)).status).toBe('PENDENTE');
    await t.http.post(`${webhookPath}/pix`).send({ pix: 'nothing' }).expect(400);
  });

  // Issue 35 L3: a body over 64 KB is read only from a known sender; the PSP's is known by its secret path.
  it('a notification over 64 KB on the secret path is read (and found not to be one), and the same body elsewhere is refused 413 unread', async () => {
    const padded = JSON.stringify({ pix: 'nothing' }) + ' '.repeat(100_000);
    const read = await t.http.post(`${webhookPath}/pix`).set('Content-Type', 'application/json').send(padded);
    expect({ status: read.status, title: read.body.title }).toEqual({ status: 400, title: 'Not a Pix notification' });
    const elsewhere = await t.http.post('/nothing-here').set('Content-Type', 'application/json').send(padded);
    expect({ status: elsewhere.status, error: elsewhere.body.error }).toEqual({ status: 413, error: 'PAYLOAD_TOO_LARGE' });
  });

  it('a Pix after the sale expired, or of another amount, is returned to its payer in full and shown to the operator', async () => {
    psp.autoSettleRefunds('DEVOLVIDO');
    const late = await createPixSale({ amount: 4000, pix: { expiresInDays: 1 } });
    await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({ now: new Date(Date.now() + 2 * 86400_000).toISOString() }).expect(200);
    expect((await transaction(late.id)).status).toBe('CANCELADO');
    const lateTxid = await txidOf(late.id);
    await eventually(async () => psp.cob(lateTxid)?.status, (status) => status === 'REMOVIDA_PELO_USUARIO_RECEBEDOR', 'the charge removed at the PSP');
    const latePix = await psp.pay(lateTxid, { force: true });
    const other = await createPixSale({ amount: 4500 });
    const otherPix = await psp.pay(await txidOf(other.id), { amount: '44.00' });

    await eventually(() => receipt(latePix.endToEndId), (r) => r?.return_status === 'DEVOLVIDO', 'the late Pix returned');
    await eventually(() => receipt(otherPix.endToEndId), (r) => r?.return_status === 'DEVOLVIDO', 'the mismatched Pix returned');
    expect(await receipt(latePix.endToEndId)).toMatchObject({ outcome: 'LATE', sale_id: late.id });
    expect(await receipt(otherPix.endToEndId)).toMatchObject({ outcome: 'AMOUNT_MISMATCH', sale_id: other.id });
    expect((await transaction(late.id)).status).toBe('CANCELADO');
    expect((await transaction(other.id)).status).toBe('PENDENTE');
    const returned = psp.refunds().filter((r) => [latePix.endToEndId, otherPix.endToEndId].includes(r.e2eid));
    expect(returned.map((r) => r.devolucao.valor).sort()).toEqual(['40.00', '44.00']);
    // Owed back, then returned: the platform keeps nothing that belongs to no sale.
    const [owed] = await t.db.query(`SELECT COALESCE(sum(amount_cents), 0)::int AS sum FROM ledger_entries WHERE account = 'PAYER_RETURNS_DUE'`);
    expect(owed.sum).toBe(0);
    const from = new Date(Date.now() - 3600_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const report = await t.http.get('/admin/reconciliation').query({ from, to }).set(adminHeaders).expect(200);
    expect(report.body.differences).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'LATE', endToEndId: latePix.endToEndId, saleId: late.id, amount: 4000, returnStatus: 'DEVOLVIDO' }),
        expect.objectContaining({ kind: 'AMOUNT_MISMATCH', endToEndId: otherPix.endToEndId, saleId: other.id, amount: 4400, returnStatus: 'DEVOLVIDO' }),
      ]),
    );
    // Other tests share the database: only this seller's sales (and this PSP's Pix) are this test's.
    const mine = new Set(((await t.db.query(`SELECT id FROM sales WHERE seller_id = $1`, [seller.id])) as Array<{ id: number }>).map((row) => row.id));
    expect(
      report.body.differences.filter((d: { kind: string; saleId: number | null }) => (d.kind === 'NOT_BOOKED' || d.kind === 'NOT_AT_PSP') && (d.saleId === null || mine.has(d.saleId))),
    ).toEqual([]);
    const metrics = await t.http.get('/metrics').set(adminHeaders).expect(200);
    expect(metrics.text).toMatch(/pix_reconciliation_differences_total\{kind="LATE"\} [1-9]/);
  });

  it('refunds a PIX sale in part and in full: PENDING until the PSP settles it, money back when it is not made', async () => {
    const sale = await createPixSale({ amount: 10000 });
    await psp.pay(await txidOf(sale.id));
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'PAGO', 'the sale paid');
    const paid = await balanceOf(t, seller);

    const partial = await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 3000 }).expect(201);
    expect(partial.body).toMatchObject({ amount: 3000, status: 'PENDING' });
    await psp.settleRefunds('DEVOLVIDO');
    const refunds = () => t.http.get(`/api/sales/${sale.id}/refunds`).set(seller.headers).expect(200).then((r) => r.body);
    await eventually(refunds, (body) => body.refunds[0].status === 'COMPLETED', 'the partial refund settled');

    const rest = await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({}).expect(201);
    expect(rest.body).toMatchObject({ amount: 7000, status: 'PENDING' });
    await psp.settleRefunds('NAO_REALIZADO', { motivo: 'Conta do pagador encerrada' });
    const after = await eventually(refunds, (body) => body.refunds[1].status === 'FAILED', 'the refund refused');
    expect(after.refunds[1].failureReason).toContain('Conta do pagador encerrada');
    expect(after).toMatchObject({ refundedAmount: 3000, refundableAmount: 7000 });
    const net = Number((await t.db.query(`SELECT net_amount_cents FROM sales WHERE id = $1`, [sale.id]))[0].net_amount_cents);
    expect(paid.total - (await balanceOf(t, seller)).total).toBe(Math.floor((net * 3000) / 10000));

    await t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({}).expect(201);
    await psp.settleRefunds('DEVOLVIDO');
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'ESTORNADO', 'the sale refunded in full');
    expect(paid.total - (await balanceOf(t, seller)).total).toBe(net);
  });

  it('never refunds more than a PIX sale when 8 refunds of a quarter are asked for at once: 4 made at the PSP, 4 refused', async () => {
    const sale = await createPixSale({ amount: 10000 });
    const pix = await psp.pay(await txidOf(sale.id));
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'PAGO', 'the sale paid');

    const answers = await Promise.all(Array.from({ length: 8 }, () => t.http.post(`/api/sales/${sale.id}/refunds`).set(seller.headers).send({ amount: 2500 })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 201, 201, 201, 422, 422, 422, 422]);
    for (const answer of answers.filter((a) => a.status === 201)) expect(answer.body).toMatchObject({ saleId: sale.id, amount: 2500, status: 'PENDING' });
    for (const answer of answers.filter((a) => a.status === 422)) expect(answer.body).toMatchObject({ error: 'REFUND_EXCEEDS_REMAINING', message: expect.any(String) });

    // At the PSP: four returns of this Pix, each under its own id, adding up to exactly the sale.
    const returns = psp.refunds().filter((r) => r.e2eid === pix.endToEndId);
    expect(returns).toHaveLength(4);
    expect(new Set(returns.map((r) => r.devolucao.id)).size).toBe(4);
    expect(returns.map((r) => r.devolucao.valor)).toEqual(['25.00', '25.00', '25.00', '25.00']);
    expect(psp.requests.filter((r) => r.method === 'PUT' && r.path.startsWith(`/v2/pix/${pix.endToEndId}/devolucao/`) && r.status !== 201)).toEqual([]);

    await psp.settleRefunds('DEVOLVIDO');
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'ESTORNADO', 'the sale refunded in full');
    const list = await t.http.get(`/api/sales/${sale.id}/refunds`).set(seller.headers).expect(200);
    expect(list.body).toMatchObject({ refundedAmount: 10000, refundableAmount: 0 });
    expect(list.body.refunds.map((r: { status: string }) => r.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED']);
  });

  const salesOfSeller = async () => (await t.db.query(`SELECT count(*)::int AS n FROM sales WHERE seller_id = $1`, [seller.id]))[0].n as number;
  const cobPuts = () => psp.requests.filter((r) => r.method === 'PUT' && r.path.startsWith('/v2/cob/')).length;

  it('a PIX charge the PSP refuses (RFC 7807, 4xx) is answered 422 PSP_REFUSED with the PSP’s reason, is not retried, and leaves no sale', async () => {
    const sales = await salesOfSeller();
    const puts = cobPuts();
    const detail = 'O campo cob.valor.original excede o limite de valor por cobrança deste recebedor.';
    psp.refuseNext(1, 'CobOperacaoInvalida', { method: 'PUT', path: /\/cob\// , detail });
    const refused = await t.http.post('/api/sales').set(seller.headers).send(saleBody('PIX', { amount: 3100 })).expect(422);
    expect(refused.body).toEqual({ error: 'PSP_REFUSED', message: expect.stringContaining(`400 Cobrança inválida.: ${detail}`) });
    expect(refused.headers['retry-after']).toBeUndefined();
    expect(JSON.stringify(refused.body)).not.toContain(CLIENT_SECRET);
    expect(cobPuts()).toBe(puts + 1);
    expect(await salesOfSeller()).toBe(sales);
    // The PSP's refusal was of that request only: the next sale goes through.
    await createPixSale({ amount: 3100 });
  });

  it('a PSP that stays unavailable through every retry is answered 503 SERVICE_UNAVAILABLE with Retry-After, and leaves no sale', async () => {
    const sales = await salesOfSeller();
    const puts = cobPuts();
    psp.failNext(3, { status: 503, method: 'PUT', path: /\/cob\// });
    const busy = await t.http.post('/api/sales').set(seller.headers).send(saleBody('PIX', { amount: 3200 })).expect(503);
    expect(busy.body).toEqual({ error: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('retry'), requestId: expect.any(String) });
    expect(busy.headers['retry-after']).toBe('1');
    expect(cobPuts()).toBe(puts + 3);
    expect(await salesOfSeller()).toBe(sales);
  });

  // Issue 35 L6: the 503 quoted "API Pix PUT /cob/… failed: … 401 Unauthorized", the PSP's call and answer.
  it('with the PSP refusing its token endpoint, the seller is told only that the provider is unavailable; the detail goes to the log', async () => {
    const sales = await salesOfSeller();
    psp.expireTokens();
    // Enough refusals for the sale's three tries and the reconciliation running beside it (every second here).
    psp.failNext(20, { status: 401, method: 'POST', path: /^\/oauth\/token/ });
    const busy = await t.http.post('/api/sales').set(seller.headers).send(saleBody('PIX', { amount: 3250 })).expect(503);
    expect(busy.body).toEqual({ error: 'SERVICE_UNAVAILABLE', message: 'The PIX provider is unavailable now: retry after the Retry-After delay', requestId: expect.any(String) });
    expect(busy.headers['retry-after']).toBe('1');
    expect(await salesOfSeller()).toBe(sales);
    const logged = await eventually(
      async () => readFileSync(process.env.LOG_FILE as string, 'utf8').split('\n').filter((line) => line.includes(busy.body.requestId)),
      (lines) => lines.some((line) => line.includes('401')),
      'the log line of the refusal',
    );
    expect(logged.find((line) => line.includes('401'))).toMatch(/PIX provider unavailable/);
    // A new token once the PSP serves again (the refusals left are used up by the reconciliation meanwhile).
    await eventually(() => t.http.post('/api/sales').set(seller.headers).send(saleBody('PIX', { amount: 3260 })), (answer) => answer.status === 201, 'a sale once the PSP serves again', 60_000);
  });

  it('removes at the PSP the charges that requests racing on one Idempotency-Key issued for sales never written', async () => {
    const key = `race-${randomUUID()}`;
    const body = saleBody('PIX', { amount: 3300 });
    const cobs = () => psp.requests.filter((r) => r.method === 'PUT' && r.path.startsWith('/v2/cob/')).map((r) => r.path.split('/').pop() as string);
    const before = new Set(cobs());
    const answers = await Promise.all(Array.from({ length: 4 }, () => t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', key).send(body)));
    const created = answers.filter((answer) => answer.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((answer) => answer.body.sale.id)).size).toBe(1);
    const kept = await txidOf(created[0].body.sale.id);
    const issued = [...new Set(cobs())].filter((txid) => !before.has(txid));
    expect(issued).toContain(kept);
    // The requests ran at once: each issued a charge before the key's claim showed the others' sale.
    expect(issued.length).toBeGreaterThan(1);
    // Every other charge issued by the race was removed at the PSP: only the written sale's can be paid.
    await eventually(
      async () => issued.filter((txid) => txid !== kept).map((txid) => psp.cob(txid)?.status),
      (statuses) => statuses.every((status) => status === 'REMOVIDA_PELO_USUARIO_RECEBEDOR'),
      'the unwritten sales’ charges removed',
    );
    expect(psp.cob(kept)?.status).toBe('ATIVA');
  });

  it('keeps working through an expired token and 5xx answers, retried with backoff', async () => {
    psp.expireTokens();
    const issued = psp.tokensIssued;
    const first = await createPixSale({ amount: 2500 });
    expect(psp.tokensIssued).toBe(issued + 1);
    expect(psp.cob(await txidOf(first.id))).toBeDefined();
    psp.failNext(2, { status: 503, path: /\/cob\// });
    const second = await createPixSale({ amount: 2600 });
    expect(psp.cob(await txidOf(second.id))?.valor.original).toBe('26.00');
    // The PSP holds the next answer past the client's timeout (API_PIX_TIMEOUT_MS, 1500 above): the client
    // gives up on it, sends the same PUT again, and answers with the retry's charge before the first is even handled.
    psp.delayNext(1, 2500, { path: /\/cob\// });
    const started = Date.now();
    const third = await createPixSale({ amount: 2700 });
    expect(Date.now() - started).toBeLessThan(2500);
    const thirdTxid = await txidOf(third.id);
    expect(psp.cob(thirdTxid)?.valor.original).toBe('27.00');
    const puts = () => psp.requests.filter((r) => r.method === 'PUT' && r.path === `/v2/cob/${thirdTxid}`);
    // The one given up on is logged by the simulator once it is handled, 2.5 s after it arrived.
    await eventually(async () => puts().length, (n) => n >= 2, 'the timed-out PUT handled by the PSP');
    expect(puts()).toHaveLength(2);
  });
});
