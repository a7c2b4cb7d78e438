import { randomUUID } from 'node:crypto';
import { CieloSimulator } from './setup/cielo';
import { BOLETO_ADDRESS as address, BoletoGateway, startBoletoGateway } from './setup/cielo/boleto-gateway';
import { adminHeaders, createSeller as newSeller, TestSeller } from './setup/factories';
import { eventually } from './setup/processes';
import { customer, saleBody } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const ORDER_PREFIX = 'GWBR';
const CLEARING_DAYS = 2;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * Review of issue 40 (registered boletos through Cielo): cases the first suite left out, against the same
 * simulator. Each names what went wrong before its fix.
 */
describe('Boletos through Cielo: review (issue 40)', () => {
  let gateway: BoletoGateway;
  let cielo: CieloSimulator;
  let t: TestApp;

  beforeAll(async () => {
    gateway = await startBoletoGateway({ merchantKey: 'CIELOBOLETOSREVIEWKEY0123456789ABCDEFGHI', orderPrefix: ORDER_PREFIX, clearingDays: CLEARING_DAYS });
    ({ cielo, t } = gateway);
  });

  afterAll(() => gateway.close());

  afterEach(() => {
    expect(cielo.violations).toEqual([]);
  });

  const boletoSale = (overrides: Json = {}) => gateway.boletoSale(overrides);
  const issue = (seller: TestSeller, overrides: Json = {}) => gateway.issue(seller, overrides);
  const statusOf = async (seller: TestSeller, id: number) => ((await t.http.get(`/api/transactions/${id}`).set(seller.headers).expect(200)).body as Json).status as string;
  const scheduler = (seller: TestSeller, now?: Date) => gateway.scheduler(seller, now);
  const lapsePoll = (saleId: number) => gateway.lapsePoll(saleId);
  const postingsOf = (saleId: number) => gateway.postingsOf(saleId);
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
