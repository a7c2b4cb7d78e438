import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { CieloSimulator, makeCertificates } from './setup/cielo';
import { PixCertificates } from './setup/api-pix';
import { adminHeaders, createSeller as newSeller, TestSeller } from './setup/factories';
import { eventually, freePort } from './setup/processes';
import { customer, saleBody } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const MERCHANT_ID = '3c9d1e2f-4a5b-4c6d-8e7f-0a1b2c3d4e5f';
const MERCHANT_KEY = 'CIELOBOLETOSREVIEWKEY0123456789ABCDEFGHI';
const ORDER_PREFIX = 'GWBR';
const HEADER_NAME = 'X-Cielo-Secret';
const HEADER_VALUE = randomBytes(18).toString('base64url');
const CLEARING_DAYS = 2;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const address = { street: 'Avenida Paulista', streetNumber: '1000', complement: 'Apto 12', zipCode: '01310100', neighborhood: 'Bela Vista', city: 'São Paulo', state: 'SP' };

/**
 * Review of issue 40 (registered boletos through Cielo): cases the first suite left out, against the same
 * simulator. Each names what went wrong before its fix.
 */
describe('Boletos through Cielo: review (issue 40)', () => {
  let certs: PixCertificates;
  let cielo: CieloSimulator;
  let t: TestApp;

  beforeAll(async () => {
    certs = await makeCertificates();
    cielo = await CieloSimulator.start({ certs, merchantId: MERCHANT_ID, merchantKey: MERCHANT_KEY, notificationHeaders: { [HEADER_NAME]: HEADER_VALUE }, boletoBanks: ['Simulado', 'BancoDoBrasil3'] });
    const port = await freePort();
    const notificationUrl = `http://127.0.0.1:${port}/cielo/notifications/${randomBytes(16).toString('hex')}`;
    t = await startApp({
      ...cielo.gatewayEnv(notificationUrl),
      CARD_PROVIDER: 'sandbox',
      BOLETO_PROVIDER: 'cielo',
      CIELO_BOLETO_PROVIDER: 'Simulado',
      CIELO_BOLETO_CLEARING_DAYS: String(CLEARING_DAYS),
      CIELO_BOLETO_POLL_SECONDS: '1',
      CIELO_NOTIFICATION_HEADER: `${HEADER_NAME}: ${HEADER_VALUE}`,
      CIELO_ORDER_ID_PREFIX: ORDER_PREFIX,
      CIELO_TIMEOUT_MS: '1500',
      SANDBOX_CLOCK_MOVES_REAL_RECORDS: 'true',
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

  const orderId = (saleId: number) => `${ORDER_PREFIX}${saleId}`;
  const boletoSale = (overrides: Json = {}) => saleBody('BOLETO', { amount: 15_700, boleto: { expiresInDays: 5 }, customer: { ...customer, address }, ...overrides });
  const issue = async (seller: TestSeller, overrides: Json = {}) => {
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(boletoSale(overrides)).expect(201)).body.sale as Json;
    const [payment] = cielo.payments(orderId(sale.id));
    return { sale, paymentId: payment.paymentId as string };
  };
  const statusOf = async (seller: TestSeller, id: number) => ((await t.http.get(`/api/transactions/${id}`).set(seller.headers).expect(200)).body as Json).status as string;
  const scheduler = async (seller: TestSeller, now?: Date) =>
    (await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send(now ? { now: now.toISOString() } : {}).expect(200)).body as Json;
  const lapsePoll = (saleId: number) => t.db.query(`UPDATE sales SET provider_checked_at = NULL WHERE id = $1`, [saleId]);
  const postingsOf = async (saleId: number) =>
    (await t.db.query(`SELECT kind FROM ledger_postings WHERE reference_type = 'SALE' AND reference_id = $1 ORDER BY id`, [saleId])).map((row: Json) => row.kind);
  /** The fields a 400 of sale creation names (spec 7.1: `details` is one field and its message, or `errors`). */
  const fieldsOf = (body: Json): string[] => {
    const details = (body.details ?? {}) as Json;
    return details.errors ? (details.errors as Json[]).map((one) => one.field as string) : [details.field as string];
  };

  it('a boleto Cielo still shows NotFinished (Status 0, in doubt) is not cancelled before its time: it stays PENDENTE and its payment is applied', async () => {
    const seller = await createSeller();
    const { sale, paymentId } = await issue(seller);
    const record = cielo.payment(paymentId) as NonNullable<ReturnType<CieloSimulator['payment']>>;
    record.status = 0;
    await lapsePoll(sale.id);
    await scheduler(seller);
    // Before the fix: Status 0 was read as cancelled, and the sale CANCELADO days before its due date.
    expect(await statusOf(seller, sale.id)).toBe('PENDENTE');

    record.status = 1;
    await cielo.payBoleto(paymentId);
    await eventually(() => statusOf(seller, sale.id), (status) => status === 'PAGO', 'the boleto sale paid');
    expect(await postingsOf(sale.id)).toEqual(['SALE_PAID']);
  });

  it('Banco do Brasil: a payer address field with nothing the bank can print is a 400 naming it (customer.address.* or shipping.*), nothing sent', async () => {
    const bb = await startApp({ ...cielo.gatewayEnv(), CARD_PROVIDER: 'sandbox', BOLETO_PROVIDER: 'cielo', CIELO_BOLETO_PROVIDER: 'BancoDoBrasil3', CIELO_ORDER_ID_PREFIX: ORDER_PREFIX, JANITOR_SECONDS: '3600' });
    try {
      const seller = await newSeller(bb);
      const posts = cielo.requestsOf('sale').length;
      const refused = async (body: Json) => (await bb.http.post('/api/sales').set(seller.headers).send(body).expect(400)).body as Json;
      // Before the fix: issued (201) with City '' (every letter outside A-Z dropped), a field the bank requires.
      const city = await refused(boletoSale({ customer: { ...customer, address: { ...address, city: '東京' } } }));
      expect(city).toMatchObject({ error: 'VALIDATION_ERROR' });
      expect(fieldsOf(city)).toEqual(['customer.address.city']);
      const street = await refused(boletoSale({ customer: { ...customer, address: { ...address, street: '№ ☆' } } }));
      expect(fieldsOf(street)).toEqual(['customer.address.street']);
      const shipped = await refused(
        saleBody('BOLETO', { customer, items: [{ title: 'Livro', unitPrice: 10_000, quantity: 1, tangible: true }], shipping: { ...address, neighborhood: '«»', country: 'br' } }),
      );
      expect(fieldsOf(shipped)).toEqual(['shipping.neighborhood']);
      expect(cielo.requestsOf('sale').length).toBe(posts);
    } finally {
      await bb.close();
    }
  });

  // The poll cancels a boleto at its expiry on a look-up made before the sale's lock (no provider call inside a
  // transaction); a payment Cielo reports between that look-up and the cancellation comes after the time the
  // boleto ends here, like any late one: owed back to its payer and listed for the operator, never lost nor
  // booked twice (CANCELADO is final, spec 3.1).
  it('a payment Cielo reports while the poll cancels on an older look-up is a late one: the sale CANCELADO, the payment owed back once and listed', async () => {
    const seller = await createSeller();
    const { sale, paymentId } = await issue(seller, { amount: 4_321 });
    const expiresAt = Date.parse(sale.payment.boleto.expiresAt as string);
    await lapsePoll(sale.id);
    const asked = cielo.requestsOf('get-sale').filter((one) => one.paymentId === paymentId).length;
    // The poll's look-up is handled at once (open) and its answer arrives 0.8 s later (CIELO_TIMEOUT_MS is 1.5 s).
    cielo.holdAnswerNext(1, 800, { path: new RegExp(`^/1/sales/${paymentId}$`), method: 'GET' });
    const pass = scheduler(seller, new Date(expiresAt + 60_000));
    await eventually(
      async () => cielo.requestsOf('get-sale').filter((one) => one.paymentId === paymentId).length,
      (count) => count > asked,
      'the poll asked',
    );
    // Paid at Cielo before the poll's pass (and its cancellation) ends.
    await cielo.payBoleto(paymentId, { delivery: 'never' });
    await pass;
    await cielo.notify(paymentId);
    await cielo.whenIdle();
    await eventually(() => postingsOf(sale.id), (kinds) => kinds.length > 0, 'the payment booked');
    expect(await statusOf(seller, sale.id)).toBe('CANCELADO');
    expect(await postingsOf(sale.id)).toEqual(['BOLETO_RETURN_DUE']);
    const listed = ((await t.http.get('/admin/boleto-returns').set(adminHeaders).expect(200)).body as Array<Record<string, unknown>>).filter((one) => one.saleId === sale.id);
    expect(listed).toEqual([expect.objectContaining({ paymentId, amount: 4_321, status: 'DUE' })]);
  });

  it('an answer that registers no boleto (Status 3 denied, 13 aborted) is a 422 PSP_REFUSED with Cielo’s reason: no sale is written, no line shown', async () => {
    const seller = await createSeller();
    const denied = { MerchantOrderId: 'GWBR0', Payment: { PaymentId: randomUUID(), Type: 'Boleto', Status: 3, ReturnCode: '99', ReturnMessage: 'Boleto não registrado' } };
    cielo.failNext(1, { path: /^\/1\/sales\/?$/, method: 'POST', status: 201, body: denied });
    const refused = (await t.http.post('/api/sales').set(seller.headers).send(boletoSale()).expect(422)).body as Json;
    expect(refused).toMatchObject({ error: 'PSP_REFUSED' });
    expect(refused.message).toContain('Status 3');
    expect(Number((await t.db.query(`SELECT count(*) FROM sales WHERE seller_id = $1`, [seller.id]))[0].count)).toBe(0);
  });

  it('a boleto is due within what Cielo can still be asked about (its sales of the last three months): a later due date is a 400 naming boleto.expiresInDays', async () => {
    const seller = await createSeller();
    const posts = cielo.requestsOf('sale').length;
    // Before the fix: issued (201) due in 120 days; Cielo's look-up answers 404 after three months, so a
    // payment in its last weeks was never learned and the sale stayed PENDENTE for ever (never cancelled either).
    const far = (await t.http.post('/api/sales').set(seller.headers).send(boletoSale({ boleto: { expiresInDays: 120 } })).expect(400)).body as Json;
    expect(far).toMatchObject({ error: 'VALIDATION_ERROR' });
    expect(fieldsOf(far)).toEqual(['boleto.expiresInDays']);
    expect(cielo.requestsOf('sale').length).toBe(posts);
  });

  it('the longest due date taken is followed to its end: paid on the last day Cielo counts, it is found and applied', async () => {
    const seller = await createSeller();
    const days = 87 - CLEARING_DAYS;
    const { sale, paymentId } = await issue(seller, { boleto: { expiresInDays: days } });
    const expiresAt = Date.parse(sale.payment.boleto.expiresAt as string);
    await t.http.post('/api/sales').set(seller.headers).send(boletoSale({ boleto: { expiresInDays: days + 1 } })).expect(400);

    // Cielo learns of the payment on the last day of the clearing; the poll asks after the expiry.
    cielo.advanceClock(expiresAt - Date.now() - 3_600_000);
    await cielo.payBoleto(paymentId, { delivery: 'never' });
    await lapsePoll(sale.id);
    await scheduler(seller, new Date(expiresAt + 60_000));
    expect(await statusOf(seller, sale.id)).toBe('PAGO');
    expect(await postingsOf(sale.id)).toEqual(['SALE_PAID']);
  });

  async function createSeller(): Promise<TestSeller> {
    return newSeller(t);
  }
});
