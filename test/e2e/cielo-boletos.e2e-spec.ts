import { lineToBarcode } from '../../src/domain/boleto-line';
import { checkProviderBacking } from '../../src/ledger/provider-backing';
import { CieloSimulator } from './setup/cielo';
import { BOLETO_ADDRESS as address, BoletoGateway, startBoletoGateway } from './setup/cielo/boleto-gateway';
import { adminHeaders, createSeller as newSeller, TestSeller } from './setup/factories';
import { eventually } from './setup/processes';
import { balanceOf, customer, saleBody } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const ORDER_PREFIX = 'GWBL';
const SALE_POST = { path: /^\/1\/sales\/?$/, method: 'POST' };
const DAY_MS = 86_400_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * Issue 40: registered boletos through Cielo's API E-commerce 3.0 (BOLETO_PROVIDER=cielo), against the Cielo
 * simulator, which judges every request and answer by cielo-ecommerce-3.0.schemas.json. A boleto is issued
 * with the bank's own line, bar code and page; it is paid only on Cielo's word (its look-up by PaymentId),
 * whether a notification named it or the poll of open boletos asked; an unpaid one is cancelled after its due
 * date plus the clearing days, once Cielo says it is not paid; one paid after that is owed back to its payer
 * and listed for the operator.
 */
describe('Boletos through Cielo (issue 40)', () => {
  let gateway: BoletoGateway;
  let cielo: CieloSimulator;
  let t: TestApp;
  const sellerIds: number[] = [];
  const createSeller = async (...args: Parameters<typeof newSeller>) => {
    const seller = await newSeller(...args);
    sellerIds.push(seller.id);
    return seller;
  };

  beforeAll(async () => {
    gateway = await startBoletoGateway({
      merchantKey: 'CIELOBOLETOSE2EKEY0123456789ABCDEFGHIJKL',
      orderPrefix: ORDER_PREFIX,
      clearingDays: 2,
      env: { CIELO_BOLETO_ASSIGNOR: 'Gateway Pagamentos Ltda', CIELO_BOLETO_INSTRUCTIONS: 'Não receber após o vencimento' },
    });
    ({ cielo, t } = gateway);
  });

  afterAll(() => gateway.close());

  afterEach(() => {
    expect(cielo.violations).toEqual([]);
  });

  const orderId = (saleId: number) => gateway.orderId(saleId);
  const boletoSale = (overrides: Json = {}) => gateway.boletoSale(overrides);
  const issue = (seller: TestSeller, overrides: Json = {}) => gateway.issue(seller, overrides);
  const lookup = async (seller: TestSeller, id: number) => (await t.http.get(`/api/transactions/${id}`).set(seller.headers).expect(200)).body as Json;
  const scheduler = (seller: TestSeller, now?: Date) => gateway.scheduler(seller, now);
  const lapsePoll = (saleId: number) => gateway.lapsePoll(saleId);
  const postingsOf = (saleId: number) => gateway.postingsOf(saleId);
  const lastSaleRequest = (saleId: number) => gateway.lastSaleRequest(saleId);

  it('issues a registered boleto with Cielo’s line, bar code and page: the payer’s name, CPF and address, the nosso número and due date sent; PENDENTE', async () => {
    const seller = await createSeller(t);
    const { sale, paymentId } = await issue(seller);
    const issued = cielo.payment(paymentId);
    expect(sale).toMatchObject({ status: 'PENDENTE', paymentMethod: 'BOLETO', amount: '15700' });
    const boleto = sale.payment.boleto as Json;
    expect(boleto.code).toBe(issued?.boleto?.DigitableLine?.replace(/\D/g, ''));
    expect(boleto.barCode).toBe(issued?.boleto?.BarCodeNumber);
    expect(lineToBarcode(boleto.code)).toBe(boleto.barCode);
    expect(boleto.url).toBe(issued?.boleto?.Url);
    const dueDate = new Date(Date.now() + 5 * DAY_MS + 3 * 3_600_000).toISOString().slice(0, 10);
    expect(boleto.dueDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    // Cancelled unpaid at the end of its due date plus the two clearing days (Brasília, UTC-3).
    expect(Date.parse(boleto.expiresAt) - Date.parse(`${boleto.dueDate}T03:00:00.000Z`)).toBe(3 * DAY_MS);
    expect([dueDate, new Date(Date.parse(dueDate) - DAY_MS).toISOString().slice(0, 10)]).toContain(boleto.dueDate);

    const request = lastSaleRequest(sale.id);
    expect(request.MerchantOrderId).toBe(orderId(sale.id));
    expect(request.Customer).toEqual({
      Name: 'Joao da Silva',
      Identity: '52998224725',
      IdentityType: 'CPF',
      Address: { Street: 'Avenida Paulista', Number: '1000', Complement: 'Apto 12', ZipCode: '01310100', City: 'Sao Paulo', State: 'SP', Country: 'BRA', District: 'Bela Vista' },
    });
    expect(request.Payment).toMatchObject({
      Type: 'Boleto',
      Provider: 'Simulado',
      Amount: 15_700,
      BoletoNumber: String(sale.id),
      ExpirationDate: boleto.dueDate,
      Assignor: 'Gateway Pagamentos Ltda',
      Instructions: 'Não receber após o vencimento',
    });
    expect(await lookup(seller, sale.id)).toMatchObject({ status: 'PENDENTE', boletoCode: boleto.code, externalTransactionId: paymentId });
    expect(cielo.postsFor(orderId(sale.id))).toBe(1);
  });

  it('a boleto paid and notified moves PAGO on Cielo’s look-up, with the seller credited; the notification again changes nothing', async () => {
    const seller = await createSeller(t);
    const { sale, paymentId } = await issue(seller);
    const before = await balanceOf(t, seller);
    await cielo.payBoleto(paymentId);
    await eventually(() => lookup(seller, sale.id), (found) => found.status === 'PAGO', 'the boleto sale paid');
    const paid = await lookup(seller, sale.id);
    const after = await balanceOf(t, seller);
    expect(after.total - before.total).toBe(Number(paid.netAmount));
    expect(cielo.requestsOf('get-sale').some((one) => one.paymentId === paymentId && one.host === 'query')).toBe(true);
    await cielo.notify(paymentId);
    await cielo.whenIdle();
    expect(await postingsOf(sale.id)).toEqual(['SALE_PAID']);
    expect((await balanceOf(t, seller)).total).toBe(after.total);
  });

  it('a boleto paid with no notification (lost) is found by the poll of open boletos', async () => {
    const seller = await createSeller(t);
    const { sale, paymentId } = await issue(seller);
    await scheduler(seller);
    expect((await lookup(seller, sale.id)).status).toBe('PENDENTE');
    await cielo.payBoleto(paymentId, { delivery: 'never' });
    await lapsePoll(sale.id);
    const pass = await scheduler(seller);
    expect(pass).toBeDefined();
    expect((await lookup(seller, sale.id)).status).toBe('PAGO');
    expect(await postingsOf(sale.id)).toEqual(['SALE_PAID']);
  });

  it('an unpaid boleto is cancelled only after its due date plus the clearing days, once Cielo says it is not paid; one paid in between is applied', async () => {
    const seller = await createSeller(t);
    const unpaid = await issue(seller);
    const paidLate = await issue(seller);
    const expiresAt = new Date(unpaid.sale.payment.boleto.expiresAt as string);

    // The day after its due date: still within the clearing days.
    await lapsePoll(unpaid.sale.id);
    await scheduler(seller, new Date(expiresAt.getTime() - DAY_MS));
    expect((await lookup(seller, unpaid.sale.id)).status).toBe('PENDENTE');

    await cielo.payBoleto(paidLate.paymentId, { delivery: 'never' });
    const asked = cielo.requestsOf('get-sale').filter((one) => one.paymentId === unpaid.paymentId).length;
    await lapsePoll(unpaid.sale.id);
    await lapsePoll(paidLate.sale.id);
    await scheduler(seller, new Date(expiresAt.getTime() + 60_000));
    expect((await lookup(seller, unpaid.sale.id)).status).toBe('CANCELADO');
    expect(cielo.requestsOf('get-sale').filter((one) => one.paymentId === unpaid.paymentId).length).toBeGreaterThan(asked);
    expect((await lookup(seller, paidLate.sale.id)).status).toBe('PAGO');
    expect(await postingsOf(unpaid.sale.id)).toEqual([]);
  });

  it('a boleto paid after it was cancelled is owed back to its payer, listed for the operator, and marked returned once', async () => {
    const seller = await createSeller(t);
    const { sale, paymentId } = await issue(seller, { amount: 12_345 });
    await lapsePoll(sale.id);
    await scheduler(seller, new Date(Date.parse(sale.payment.boleto.expiresAt as string) + 60_000));
    expect((await lookup(seller, sale.id)).status).toBe('CANCELADO');
    const before = await balanceOf(t, seller);

    await cielo.payBoleto(paymentId);
    const listed = async () => ((await t.http.get('/admin/boleto-returns').set(adminHeaders).expect(200)).body as Json[]).filter((one) => one.saleId === sale.id);
    await eventually(listed, (found) => found.length === 1, 'the late payment listed');
    const [late] = await listed();
    expect(late).toMatchObject({ saleId: sale.id, sellerId: seller.id, provider: 'cielo', paymentId, amount: 12_345, seenBy: 'NOTIFICATION', status: 'DUE', returnedAt: null });
    expect((await lookup(seller, sale.id)).status).toBe('CANCELADO');
    expect((await balanceOf(t, seller)).total).toBe(before.total);
    expect(await postingsOf(sale.id)).toEqual(['BOLETO_RETURN_DUE']);

    // Seen again (the poll, a notification repeated): booked once.
    await lapsePoll(sale.id);
    await scheduler(seller);
    await cielo.notify(paymentId);
    await cielo.whenIdle();
    expect(await postingsOf(sale.id)).toEqual(['BOLETO_RETURN_DUE']);

    const returned = (await t.http.post(`/admin/boleto-returns/${late.id}/returned`).set(adminHeaders).send({ note: 'TED 2026-12-01' }).expect(200)).body as Json;
    expect(returned).toMatchObject({ id: late.id, status: 'RETURNED', returnNote: 'TED 2026-12-01' });
    await t.http.post(`/admin/boleto-returns/${late.id}/returned`).set(adminHeaders).send({ note: 'again' }).expect(409);
    await t.http.post(`/admin/boleto-returns/${late.id}/returned`).set(adminHeaders).send({}).expect(400);
    expect(await postingsOf(sale.id)).toEqual(['BOLETO_RETURN_DUE', 'BOLETO_RETURNED']);
    expect(await listed()).toEqual([]);
    const all = ((await t.http.get('/admin/boleto-returns?status=ALL').set(adminHeaders).expect(200)).body as Json[]).filter((one) => one.saleId === sale.id);
    expect(all).toHaveLength(1);
    await t.http.get('/admin/boleto-returns?status=NONE').set(adminHeaders).expect(400);
    await t.http.get('/admin/boleto-returns').expect(401);
  });

  it('a boleto sale without a usable address or CPF/CNPJ is a 400 naming the field, before anything is sent; a full shipping address serves', async () => {
    const seller = await createSeller(t);
    const posts = cielo.requestsOf('sale').length;
    const refuse = async (body: Json) => (await t.http.post('/api/sales').set(seller.headers).send(body).expect(400)).body as Json;

    const none = await refuse(saleBody('BOLETO', { customer }));
    expect(none).toMatchObject({ error: 'VALIDATION_ERROR' });
    expect(JSON.stringify(none)).toContain('customer.address');
    const partial = await refuse(saleBody('BOLETO', { customer: { ...customer, address: { ...address, zipCode: undefined } } }));
    expect(JSON.stringify(partial)).toContain('customer.address.zipCode');
    const noDocument = await refuse(saleBody('BOLETO', { customer: { name: customer.name, email: customer.email, address } }));
    expect(JSON.stringify(noDocument)).toContain('customer.document');
    expect(cielo.requestsOf('sale').length).toBe(posts);

    const shipped = (
      await t.http
        .post('/api/sales')
        .set(seller.headers)
        .send(saleBody('BOLETO', { customer, items: [{ title: 'Livro', unitPrice: 10_000, quantity: 1, tangible: true }], shipping: { ...address, country: 'br' } }))
        .expect(201)
    ).body.sale as Json;
    expect(lastSaleRequest(shipped.id).Customer.Address).toMatchObject({ Street: 'Avenida Paulista', ZipCode: '01310100', District: 'Bela Vista' });
  });

  it('an issuance Cielo refuses (an unknown CEP, a bank contract the store lacks) is a 422 PSP_REFUSED with Cielo’s reason, and no sale is written', async () => {
    const seller = await createSeller(t);
    const count = async () => Number((await t.db.query(`SELECT count(*) FROM sales WHERE seller_id = $1`, [seller.id]))[0].count);
    const badCep = (await t.http.post('/api/sales').set(seller.headers).send(boletoSale({ customer: { ...customer, address: { ...address, zipCode: '00012345' } } })).expect(422)).body;
    expect(badCep).toMatchObject({ error: 'PSP_REFUSED' });
    expect(badCep.message).toContain('CEP');
    cielo.setBoletoBanks(['BancoDoBrasil3']);
    try {
      const noContract = (await t.http.post('/api/sales').set(seller.headers).send(boletoSale()).expect(422)).body;
      expect(noContract.message).toContain('129');
    } finally {
      cielo.setBoletoBanks(['Simulado', 'BancoDoBrasil3']);
    }
    expect(await count()).toBe(0);
  });

  it('a lost answer to the issuance is recovered by MerchantOrderId: the sale gets the one boleto Cielo made', async () => {
    const seller = await createSeller(t);
    cielo.dropAnswerNext(1, SALE_POST);
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(boletoSale()).expect(201)).body.sale as Json;
    const made = cielo.payments(orderId(sale.id));
    expect(made).toHaveLength(1);
    expect(sale.payment.boleto.code).toBe(made[0].boleto?.DigitableLine?.replace(/\D/g, ''));
    expect(cielo.requestsOf('get-by-order').some((one) => one.merchantOrderId === orderId(sale.id))).toBe(true);
  });

  it('transfers are not taken while Cielo holds the bank-document rail (422 NOT_SUPPORTED); the sandbox’s events route cannot pay a Cielo boleto', async () => {
    const seller = await createSeller(t);
    const transfer = (await t.http.post('/api/sales').set(seller.headers).send(saleBody('TRANSFER')).expect(422)).body;
    expect(transfer).toMatchObject({ error: 'NOT_SUPPORTED' });
    const { sale } = await issue(seller);
    const event = await t.http.post(`/api/sandbox/sales/${sale.id}/events`).set(seller.headers).send({ event: 'PAYMENT_CONFIRMED' });
    expect(event.status).toBeGreaterThanOrEqual(400);
    expect(event.status).toBeLessThan(500);
    expect((await lookup(seller, sale.id)).status).toBe('PENDENTE');
  });

  it('Banco do Brasil (BancoDoBrasil3): the payer in upper case within its limits, the nosso número’s last 9 digits, the line read from the bar code', async () => {
    const bb = await startApp({
      ...cielo.gatewayEnv(),
      CARD_PROVIDER: 'sandbox',
      BOLETO_PROVIDER: 'cielo',
      CIELO_BOLETO_PROVIDER: 'BancoDoBrasil3',
      CIELO_BOLETO_INSTRUCTIONS: 'Não receber após o vencimento; dúvidas: (11) 4000-1234 ✓ obrigado',
      CIELO_ORDER_ID_PREFIX: ORDER_PREFIX,
      JANITOR_SECONDS: '3600',
    });
    try {
      const seller = await createSeller(bb);
      const long = { ...address, street: 'Rua Professor Doutor Joaquim de Oliveira Magalhães Sobrinho', complement: 'Bloco C, Apartamento 1203', city: 'São José dos Campos' };
      const sale = (
        await bb.http
          .post('/api/sales')
          .set(seller.headers)
          .send(boletoSale({ customer: { ...customer, name: 'Ana Lúcia D’Ávila-Souza', address: long } }))
          .expect(201)
      ).body.sale as Json;
      const [payment] = cielo.payments(orderId(sale.id));
      const request = lastSaleRequest(sale.id);
      expect(request.Payment).toMatchObject({ Provider: 'BancoDoBrasil3', BoletoNumber: String(sale.id).slice(-9) });
      expect(request.Customer.Name).toMatch(/^[A-Z '-]+$/);
      // Banco do Brasil keeps 50 characters of instructions, printed in upper case without accents.
      expect(request.Payment.Instructions).toBe('NAO RECEBER APOS O VENCIMENTO; DUVIDAS: (11) 4000-');
      const sent = request.Customer.Address as Json;
      expect(`${sent.Street}${sent.Number}${sent.Complement ?? ''}`.length).toBeLessThanOrEqual(60);
      expect(sent.City).toBe('SAO JOSE DOS CAMPO');
      expect(payment.boleto?.DigitableLine).toBeUndefined();
      expect(lineToBarcode(sale.payment.boleto.code)).toBe(payment.boleto?.BarCodeNumber);
    } finally {
      await bb.close();
    }
  });

  it('ledger:verify backs every paid Cielo boleto by the payment Cielo reported of its amount, and names one that is not', async () => {
    const seller = await createSeller(t);
    const { sale, paymentId } = await issue(seller, { amount: 9_900 });
    await cielo.payBoleto(paymentId);
    await eventually(() => lookup(seller, sale.id), (found) => found.status === 'PAGO', 'the boleto sale paid');
    const clean = await checkProviderBacking(t.db);
    expect(clean.problems).toEqual([]);
    await t.db.query(`UPDATE sales SET provider_amount_cents = 9800 WHERE id = $1`, [sale.id]);
    try {
      const tampered = await checkProviderBacking(t.db);
      expect(tampered.problems).toEqual([{ record: `sale ${sale.id}`, provider: 'cielo', problem: expect.stringContaining('no payment captured by Cielo of its amount') }]);
    } finally {
      await t.db.query(`UPDATE sales SET provider_amount_cents = 9900 WHERE id = $1`, [sale.id]);
    }
  });
});
