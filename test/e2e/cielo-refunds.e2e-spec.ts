import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { checkProviderBacking } from '../../src/ledger/provider-backing';
import { RefundsService } from '../../src/payments/refunds.service';
import { CieloSimulator, makeCertificates, sandboxCard } from './setup/cielo';
import { PixCertificates } from './setup/api-pix';
import { adminHeaders, createSeller as newSeller, TestSeller } from './setup/factories';
import { eventually, freePort } from './setup/processes';
import { balanceOf, saleBody } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const run = promisify(execFile);

const MERCHANT_ID = '7a2e4c1d-5b3f-4e6a-9c8d-0f1e2d3c4b5a';
const MERCHANT_KEY = 'CIELOREFUNDSE2EKEY0123456789ABCDEFGHIJKL';
const ORDER_PREFIX = 'GWRF';
/** The static header Cielo is configured to send with each notification (ref §10), checked by the gateway. */
const HEADER_NAME = 'X-Cielo-Secret';
const HEADER_VALUE = randomBytes(18).toString('base64url');
/** Cielo's pause between two voids of one sale (ref §4.2). */
const VOID_PAUSE_MS = 5000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * Issue 39: refunds of Cielo sales by void (`PUT /1/sales/{PaymentId}/void?amount=`), never sent twice (the
 * payment fetched before any void), in turn and apart by Cielo's 5 s pause; and Cielo's notification post
 * (CIELO_NOTIFICATION_URL, its static header checked) kept in the one intake, with only `GET
 * /1/sales/{PaymentId}` moving anything: a Pending sale settled, a back-office void booked as a refund.
 * Against the Cielo simulator, which judges every request and answer by cielo-ecommerce-3.0.schemas.json.
 */
describe('Refunds and notifications through Cielo (issue 39)', () => {
  let certs: PixCertificates;
  let cielo: CieloSimulator;
  let t: TestApp;
  let notificationUrl: string;
  let seq = 0;
  const sellerIds: number[] = [];
  const createSeller = async (...args: Parameters<typeof newSeller>) => {
    const seller = await newSeller(...args);
    sellerIds.push(seller.id);
    return seller;
  };

  beforeAll(async () => {
    certs = await makeCertificates();
    cielo = await CieloSimulator.start({
      certs,
      merchantId: MERCHANT_ID,
      merchantKey: MERCHANT_KEY,
      notificationHeaders: { [HEADER_NAME]: HEADER_VALUE },
      mpi: { clientId: 'mpi-refunds-e2e', clientSecret: 'mpi-refunds-secret-0123456789' },
    });
    const port = await freePort();
    notificationUrl = `http://127.0.0.1:${port}/cielo/notifications/${randomBytes(16).toString('hex')}`;
    t = await startApp({
      ...cielo.gatewayEnv(notificationUrl),
      CIELO_NOTIFICATION_HEADER: `${HEADER_NAME}: ${HEADER_VALUE}`,
      CIELO_ORDER_ID_PREFIX: ORDER_PREFIX,
      CIELO_TIMEOUT_MS: '1500',
      CIELO_NOT_FOUND_AFTER_SECONDS: '4',
      PROVIDER_RECOVERY_AFTER_SECONDS: '1',
      // The janitor runs when a test asks, not on its own timer.
      JANITOR_SECONDS: '3600',
    });
    await t.app.listen(port, '127.0.0.1');
    cielo.setNotificationUrl(notificationUrl);
  });

  afterAll(async () => {
    await t.close();
    await cielo.close();
    await rm(certs.dir, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(cielo.violations).toEqual([]);
  });

  const cardNumber = (lastDigit: number) => sandboxCard(lastDigit, 'Visa', (seq += 1) + Math.floor(Math.random() * 1000) * 1000);
  const cardSale = (amount: number) =>
    saleBody('CREDIT_CARD', { amount, card: { number: cardNumber(1), holderName: 'Maria Souza', expirationMonth: '12', expirationYear: '2035', cvv: '123' } });
  const orderId = (saleId: number) => `${ORDER_PREFIX}${saleId}`;
  const lookup = async (seller: TestSeller, id: number) => (await t.http.get(`/api/transactions/${id}`).set(seller.headers).expect(200)).body as Json;
  const paidSale = async (seller: TestSeller, amount: number) => {
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(cardSale(amount)).expect(201)).body.sale as Json;
    expect(sale.status).toBe('PAGO');
    const [payment] = cielo.payments(orderId(sale.id));
    return { sale, paymentId: payment.paymentId };
  };
  const refund = async (seller: TestSeller, saleId: number, amount?: number) =>
    (await t.http.post(`/api/sales/${saleId}/refunds`).set(seller.headers).send(amount === undefined ? {} : { amount }).expect(201)).body as Json;
  const refundsOf = async (seller: TestSeller, saleId: number) => (await t.http.get(`/api/sales/${saleId}/refunds`).set(seller.headers).expect(200)).body as Json;
  const voidsOf = (paymentId: string) => cielo.requestsOf('void').filter((one) => one.paymentId === paymentId);
  /** The janitor's refunds kind (it runs for every seller, not through the sandbox scheduler route). */
  const retryRefunds = () => t.app.get(RefundsService).retryPending();
  /** A pending refund's last change (and send) a minute ago: the janitor's next pass takes it at once. */
  const ageRefund = (id: number) => t.db.query(`UPDATE sale_refunds SET updated_at = now() - interval '1 minute', requested_at = requested_at - interval '1 minute' WHERE id = $1`, [id]);
  const ledgerOfSale = async (saleId: number) =>
    (await t.db.query(`SELECT p.kind FROM ledger_postings p WHERE p.reference_type = 'SALE' AND p.reference_id = $1 ORDER BY p.id`, [saleId])).map((row: Json) => row.kind);

  it('refunds partially then in full by PUT /1/sales/{PaymentId}/void?amount= on the transactional host; a refund asked within Cielo’s 5 s pause waits its turn (PENDING), then is sent; ESTORNADO once covered', async () => {
    const seller = await createSeller(t);
    const { sale, paymentId } = await paidSale(seller, 10_000);
    const { netAmount } = await lookup(seller, sale.id);
    const balanceBefore = await balanceOf(t, seller);

    const first = await refund(seller, sale.id, 3_000);
    expect(first).toMatchObject({ saleId: sale.id, amount: 3_000, status: 'COMPLETED', failureReason: null });
    expect(voidsOf(paymentId).map((one) => ({ host: one.host, method: one.method, path: one.path }))).toEqual([
      { host: 'transactional', method: 'PUT', path: `/1/sales/${paymentId}/void?amount=3000` },
    ]);
    // Fetched (query host) before the void: its VoidedAmount is what tells a lost answer from a void not sent.
    expect(cielo.requestsOf('get-sale').some((one) => one.paymentId === paymentId && one.host === 'query')).toBe(true);
    const firstAt = Date.now();

    // Within the pause: not sent, not refused; it waits.
    const second = await refund(seller, sale.id, 2_000);
    expect(second).toMatchObject({ amount: 2_000, status: 'PENDING' });
    expect(voidsOf(paymentId)).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, VOID_PAUSE_MS - (Date.now() - firstAt)) + 300));
    await ageRefund(second.id);
    await retryRefunds();
    expect((await refundsOf(seller, sale.id)).refunds.find((one: Json) => one.id === second.id)).toMatchObject({ status: 'COMPLETED' });
    expect(voidsOf(paymentId).map((one) => one.path)).toEqual([`/1/sales/${paymentId}/void?amount=3000`, `/1/sales/${paymentId}/void?amount=2000`]);
    expect(cielo.payment(paymentId)).toMatchObject({ status: 2, voidedAmount: 5_000, voids: 2 });

    await new Promise((resolve) => setTimeout(resolve, VOID_PAUSE_MS + 300));
    const rest = await refund(seller, sale.id);
    expect(rest).toMatchObject({ amount: 5_000, status: 'COMPLETED' });
    expect(cielo.payment(paymentId)).toMatchObject({ status: 10, voidedAmount: 10_000, voids: 3 });
    expect(await lookup(seller, sale.id)).toMatchObject({ status: 'ESTORNADO' });
    const listed = await refundsOf(seller, sale.id);
    expect(listed).toMatchObject({ refundedAmount: 10_000, refundableAmount: 0 });
    expect(listed.refunds.map((one: Json) => [one.amount, one.status, one.initiatedBy])).toEqual([
      [3_000, 'COMPLETED', 'SELLER'],
      [2_000, 'COMPLETED', 'SELLER'],
      [5_000, 'COMPLETED', 'SELLER'],
    ]);
    const balanceAfter = await balanceOf(t, seller);
    const [{ debited }] = await t.db.query(`SELECT sum(seller_debit_cents)::int AS debited FROM sale_refunds WHERE sale_id = $1`, [sale.id]);
    expect(debited).toBe(netAmount);
    expect(balanceAfter.total).toBe(balanceBefore.total - debited);
  }, 60_000);

  it('a void Cielo refuses ends the refund FAILED with Cielo’s code and message, and gives the seller back what it took', async () => {
    const seller = await createSeller(t);
    const { sale, paymentId } = await paidSale(seller, 4_000);
    const before = await balanceOf(t, seller);
    cielo.failNext(1, { method: 'PUT', status: 400, body: [{ Code: 312, Message: 'Transaction not available to refund' }] });
    const refused = await refund(seller, sale.id, 1_500);
    expect(refused).toMatchObject({ status: 'FAILED', failureReason: expect.stringContaining('312 Transaction not available to refund') });
    expect(await balanceOf(t, seller)).toEqual(before);
    expect(cielo.payment(paymentId)).toMatchObject({ status: 2, voidedAmount: 0 });
    expect(await lookup(seller, sale.id)).toMatchObject({ status: 'PAGO' });
    expect(await refundsOf(seller, sale.id)).toMatchObject({ refundedAmount: 0, refundableAmount: 4_000 });
    expect(await ledgerOfSale(sale.id)).toEqual(expect.arrayContaining(['REFUND_REQUESTED', 'REFUND_FAILED']));
  });

  it('a void whose answer is lost (Cielo made it) stays PENDING; the janitor fetches the payment, sees it voided and completes the refund without a second void', async () => {
    const seller = await createSeller(t);
    const { sale, paymentId } = await paidSale(seller, 7_000);
    cielo.dropAnswerNext(1, { method: 'PUT' });
    const lost = await refund(seller, sale.id, 2_500);
    expect(lost).toMatchObject({ status: 'PENDING' });
    expect(cielo.payment(paymentId)).toMatchObject({ voidedAmount: 2_500, voids: 1 });

    // Asked again while the answer could still come (within CIELO_TIMEOUT_MS and the pause): nothing sent.
    await t.db.query(`UPDATE sale_refunds SET updated_at = now() - interval '1 minute' WHERE id = $1`, [lost.id]);
    await retryRefunds();
    expect((await refundsOf(seller, sale.id)).refunds[0]).toMatchObject({ status: 'PENDING' });
    expect(voidsOf(paymentId)).toHaveLength(1);

    const lookUps = cielo.requestsOf('get-sale').filter((one) => one.paymentId === paymentId).length;
    await ageRefund(lost.id);
    await retryRefunds();
    expect((await refundsOf(seller, sale.id)).refunds[0]).toMatchObject({ id: lost.id, status: 'COMPLETED' });
    expect(cielo.requestsOf('get-sale').filter((one) => one.paymentId === paymentId).length).toBeGreaterThan(lookUps);
    expect(voidsOf(paymentId)).toHaveLength(1);
    expect(cielo.payment(paymentId)).toMatchObject({ status: 2, voidedAmount: 2_500, voids: 1 });
    expect(await lookup(seller, sale.id)).toMatchObject({ status: 'PAGO' });
  });

  it('a void Cielo answered 503 (nothing made) is sent again by the janitor once: two passes at once (two instances) send one void between them', async () => {
    const seller = await createSeller(t);
    const { sale, paymentId } = await paidSale(seller, 9_000);
    cielo.failNext(1, { method: 'PUT', status: 503 });
    const pending = await refund(seller, sale.id, 4_000);
    expect(pending).toMatchObject({ status: 'PENDING' });
    expect(cielo.payment(paymentId)).toMatchObject({ voidedAmount: 0 });
    expect(voidsOf(paymentId)).toHaveLength(1);

    await ageRefund(pending.id);
    await Promise.all([retryRefunds(), retryRefunds()]);
    expect(voidsOf(paymentId)).toHaveLength(2);
    expect(cielo.payment(paymentId)).toMatchObject({ status: 2, voidedAmount: 4_000, voids: 1 });
    expect((await refundsOf(seller, sale.id)).refunds[0]).toMatchObject({ id: pending.id, status: 'COMPLETED' });
  });

  it('a debit sale takes one partial void only (ref §4.2): a second partial refund is FAILED without a void sent, the rest refunded in full', async () => {
    const seller = await createSeller(t);
    const number = cardNumber(1);
    const page = (await t.http.post('/api/cards/3ds-token').set(seller.headers).send({}).expect(200)).body as Json;
    const result = cielo.authenticate(page.accessToken, number);
    const threeDSecure = { cavv: result.Cavv, eci: result.Eci, version: result.Version, referenceId: result.ReferenceId };
    const card = { number, holderName: 'Maria Souza', expirationMonth: '12', expirationYear: '2035', cvv: '123', threeDSecure };
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(saleBody('DEBIT_CARD', { amount: 6_000, card })).expect(201)).body.sale as Json;
    expect(sale.status).toBe('PAGO');
    const [payment] = cielo.payments(orderId(sale.id));
    expect(payment.type).toBe('DebitCard');

    expect(await refund(seller, sale.id, 2_000)).toMatchObject({ status: 'COMPLETED' });
    await new Promise((resolve) => setTimeout(resolve, VOID_PAUSE_MS + 300));
    const second = await refund(seller, sale.id, 1_000);
    expect(second).toMatchObject({ status: 'FAILED', failureReason: expect.stringContaining('one partial void of a debit sale') });
    expect(voidsOf(payment.paymentId)).toHaveLength(1);
    expect(await refund(seller, sale.id)).toMatchObject({ amount: 4_000, status: 'COMPLETED' });
    expect(cielo.payment(payment.paymentId)).toMatchObject({ status: 10, voidedAmount: 6_000, voids: 2 });
    expect(await lookup(seller, sale.id)).toMatchObject({ status: 'ESTORNADO' });
  }, 30_000);

  it('a Pending sale (Status 12) is settled by Cielo’s notification: approved is PAGO, denied is RECUSADO, each after GET /1/sales/{PaymentId} on the query host', async () => {
    const seller = await createSeller(t);
    cielo.pendingNext(2);
    const approved = (await t.http.post('/api/sales').set(seller.headers).send(cardSale(6_000)).expect(201)).body.sale as Json;
    const denied = (await t.http.post('/api/sales').set(seller.headers).send(cardSale(3_000)).expect(201)).body.sale as Json;
    expect([approved.status, denied.status]).toEqual(['EM_PROCESSAMENTO', 'EM_PROCESSAMENTO']);
    const [approvedPayment] = cielo.payments(orderId(approved.id));
    const [deniedPayment] = cielo.payments(orderId(denied.id));

    await cielo.settle(approvedPayment.paymentId, 'approved');
    const notified = cielo.notifications[cielo.notifications.length - 1];
    expect(notified).toMatchObject({ status: 200, headerNames: [HEADER_NAME] });
    await cielo.settle(deniedPayment.paymentId, 'denied', { delivery: 'twice' });
    const paid = await eventually(() => lookup(seller, approved.id), (found) => found.status === 'PAGO', 'the approved sale paid');
    expect(paid).toMatchObject({ externalTransactionId: approvedPayment.paymentId });
    const refused = await eventually(() => lookup(seller, denied.id), (found) => found.status === 'RECUSADO', 'the denied sale refused');
    expect(refused).toMatchObject({ acquirerReturn: { code: '05' } });
    expect(cielo.requestsOf('get-sale').some((one) => one.paymentId === approvedPayment.paymentId && one.host === 'query')).toBe(true);
    expect(cielo.postsFor(orderId(approved.id))).toBe(1);
    expect((await balanceOf(t, seller)).total).toBe(paid.netAmount);
  });

  it('a forged notification changes nothing: without Cielo’s header 401 and nothing kept; with it, an unknown PaymentId is fetched (404) and dropped, a paid sale’s PaymentId re-fetched and left as Cielo shows it; a body that is not one is 400', async () => {
    const seller = await createSeller(t);
    const { sale, paymentId } = await paidSale(seller, 5_000);
    const before = await balanceOf(t, seller);
    const [{ count: inboxBefore }] = await t.db.query(`SELECT count(*)::int AS count FROM provider_inbox WHERE provider = 'cielo'`);

    const noHeader = await cielo.forgeNotification({ paymentId });
    expect(noHeader.status).toBe(401);
    const wrongHeader = await cielo.forgeNotification({ paymentId, headers: { [HEADER_NAME]: 'guessed' } });
    expect(wrongHeader.status).toBe(401);
    const [{ count: inboxAfter }] = await t.db.query(`SELECT count(*)::int AS count FROM provider_inbox WHERE provider = 'cielo'`);
    expect(inboxAfter).toBe(inboxBefore);

    const unknownCounted = async () => Number(/^acquirer_notifications_unknown_total\{provider="cielo"\} (\d+)$/m.exec((await t.http.get('/metrics').set(adminHeaders).expect(200)).text)?.[1] ?? 0);
    const countedBefore = await unknownCounted();
    const unknown = randomUUID();
    expect((await cielo.forgeNotification({ paymentId: unknown, headers: { [HEADER_NAME]: HEADER_VALUE } })).status).toBe(200);
    expect((await cielo.forgeNotification({ paymentId, changeType: '1', headers: { [HEADER_NAME]: HEADER_VALUE } })).status).toBe(200);
    const notOne = await t.http.post(new URL(notificationUrl).pathname).set(HEADER_NAME, HEADER_VALUE).send({ PaymentId: 'not-a-guid', ChangeType: 1 });
    expect(notOne.status).toBe(400);
    await eventually(
      async () => cielo.requestsOf('get-sale').some((one) => one.paymentId === unknown) && cielo.requestsOf('get-sale').filter((one) => one.paymentId === paymentId).length > 0,
      (fetched) => fetched,
      'both notified payments fetched',
    );
    await eventually(
      async () => (await t.db.query(`SELECT count(*)::int AS count FROM provider_inbox WHERE provider = 'cielo'`))[0].count as number,
      (waiting) => waiting === 0,
      'the intake emptied',
    );
    expect(await lookup(seller, sale.id)).toMatchObject({ status: 'PAGO' });
    expect(await refundsOf(seller, sale.id)).toMatchObject({ refunds: [], refundedAmount: 0 });
    expect(await balanceOf(t, seller)).toEqual(before);
    expect(voidsOf(paymentId)).toHaveLength(0);
    // The unknown PaymentId is counted for the operator's alerts; the paid sale's own is not.
    expect(await unknownCounted()).toBe(countedBefore + 1);
  });

  it('a refund made in Cielo’s back office, seen by its notification: the part booked as a refund (seller debited as a refund debits it), then the rest: ESTORNADO; a repeated notification books nothing twice', async () => {
    const seller = await createSeller(t);
    const { sale, paymentId } = await paidSale(seller, 8_000);
    const before = await balanceOf(t, seller);
    const found = await lookup(seller, sale.id);

    await cielo.backOfficeVoid(paymentId, { amount: 3_000, delivery: 'twice' });
    const partial = await eventually(() => refundsOf(seller, sale.id), (listed) => listed.refunds.length === 1, 'the back-office refund booked');
    expect(partial.refunds[0]).toMatchObject({ amount: 3_000, status: 'COMPLETED', initiatedBy: 'PSP', nature: 'ACQUIRER_VOID' });
    expect(await lookup(seller, sale.id)).toMatchObject({ status: 'PAGO' });

    await cielo.backOfficeVoid(paymentId, { delivery: 'twice' });
    await eventually(() => lookup(seller, sale.id), (now) => now.status === 'ESTORNADO', 'the sale ESTORNADO');
    await cielo.notify(paymentId);
    await eventually(
      async () => (await t.db.query(`SELECT count(*)::int AS count FROM provider_inbox WHERE provider = 'cielo'`))[0].count as number,
      (waiting) => waiting === 0,
      'the intake emptied',
    );
    const listed = await refundsOf(seller, sale.id);
    expect(listed.refunds.map((one: Json) => [one.amount, one.status])).toEqual([
      [3_000, 'COMPLETED'],
      [5_000, 'COMPLETED'],
    ]);
    expect(listed.refundedAmount).toBe(8_000);
    const [{ debited }] = await t.db.query(`SELECT sum(seller_debit_cents)::int AS debited FROM sale_refunds WHERE sale_id = $1`, [sale.id]);
    expect(debited).toBe(found.netAmount);
    expect((await balanceOf(t, seller)).total).toBe(before.total - debited);
    expect(await ledgerOfSale(sale.id)).toEqual(expect.arrayContaining(['REFUND_REQUESTED', 'REFUND_SETTLED']));
    // No void of the gateway's own: Cielo's back office made both.
    expect(voidsOf(paymentId)).toHaveLength(0);
  });

  it('ledger:verify passes: every posting balanced, balances equal their entries, paid Cielo sales backed by Cielo', async () => {
    const backing = await checkProviderBacking(t.db);
    expect(backing.problems).toEqual([]);
    const verified = await run(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/ledger/ledger-verify.ts'], {
      env: { ...process.env, DATABASE_URL: process.env.E2E_DATABASE_URL, LOG_FILE: undefined },
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(verified.stderr).toBe('');
    expect(verified.code).toBe(0);
  }, 90_000);
});
