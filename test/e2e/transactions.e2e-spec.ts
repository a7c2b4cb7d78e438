import { createSeller, TestSeller } from './setup/factories';
import { createSale, digitalItem, saleBody, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

describe('GET /api/transactions/{id} (spec 2.3, 7.2) and the revenue of GET /api/seller (spec 2.9)', () => {
  let t: TestApp;
  let seller: TestSeller;

  beforeAll(async () => {
    t = await startApp();
    seller = await createSeller(t);
  });
  afterAll(() => t.close());

  it('answers every field of a paid PIX sale', async () => {
    const sale = await createSale(t, seller, saleBody('PIX', { items: [{ ...digitalItem, id: 'sku-1' }, { title: 'Livro', unitPrice: 500, quantity: 2, tangible: true }], shipping: { city: 'Recife', state: 'PE' } }));
    await sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED');
    const { body } = await t.http.get(`/api/transactions/${sale.id}`).set(seller.headers).expect(200);
    expect(body).toEqual({
      id: sale.id,
      status: 'PAGO',
      amount: 10000,
      netAmount: 9901,
      systemFee: 99,
      reserveAmount: 0,
      paymentMethod: 'PIX',
      date: sale.createdAt,
      completedAt: expect.stringMatching(/Z$/),
      customer: { name: 'João da Silva', email: 'joao@example.com', document: '52998224725', phone: '11987654321' },
      items: [
        { id: expect.any(Number), title: 'Curso online', unitPrice: 10000, quantity: 1, tangible: false },
        { id: expect.any(Number), title: 'Livro', unitPrice: 500, quantity: 2, tangible: true },
      ],
      pixKey: (sale.payment as { pix: { key: string } }).pix.key,
      cardLastFour: null,
      cardBrand: null,
      boletoCode: null,
      externalTransactionId: expect.any(String),
      shipping: { city: 'Recife', state: 'PE' },
    });
  });

  it('answers a card sale with its last four, brand and installments, and leaves the amounts out until paid', async () => {
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD', { installments: { number: 6 } }));
    const { body } = await t.http.get(`/api/transactions/${sale.id}`).set(seller.headers).expect(200);
    expect(body).toMatchObject({ cardLastFour: '1111', cardBrand: 'VISA', installments: 6, pixKey: null, systemFee: 438, reserveAmount: 956 });
    const pending = await createSale(t, seller, saleBody('BOLETO'));
    const boleto = await t.http.get(`/api/transactions/${pending.id}`).set(seller.headers).expect(200);
    expect(boleto.body).toMatchObject({ completedAt: null, boletoCode: expect.stringMatching(/^\d{47}$/) });
    // Spec 2.3 types them "number", optional, never "or null": absent until the sale is paid.
    expect(Object.keys(boleto.body)).toEqual(expect.not.arrayContaining(['netAmount', 'systemFee', 'reserveAmount', 'installments', 'shipping']));
  });

  it.each(['abc', '1.5', '-1', '0', '99999999999'])('answers 400 {message, error} for the id %s', async (id) => {
    const response = await t.http.get(`/api/transactions/${id}`).set(seller.headers).expect(400);
    expect(response.body).toEqual({ message: expect.any(String), error: 'INVALID_ID', details: { field: 'id', message: expect.any(String) } });
  });

  it('answers 403 for another seller’s sale and 404 for an unknown one', async () => {
    const other = await createSeller(t);
    const sale = await createSale(t, seller, saleBody('PIX'));
    const forbidden = await t.http.get(`/api/transactions/${sale.id}`).set(other.headers).expect(403);
    expect(forbidden.body).toEqual({ message: expect.any(String), error: 'FORBIDDEN' });
    const missing = await t.http.get('/api/transactions/2147483647').set(seller.headers).expect(404);
    expect(missing.body).toEqual({ message: expect.any(String), error: 'NOT_FOUND' });
    const unauthorized = await t.http.get(`/api/transactions/${sale.id}`).expect(401);
    expect(unauthorized.body).toEqual({ message: expect.any(String), error: 'UNAUTHORIZED' });
  });

  it('counts revenue from the sales: PAGO now by method, confirmed chargebacks and refunds once each', async () => {
    const own = await createSeller(t);
    const pix = await createSale(t, own, saleBody('PIX', { amount: 1000 }));
    await sendEvent(t, own, pix.id, 'PAYMENT_CONFIRMED');
    const boleto = await createSale(t, own, saleBody('BOLETO', { amount: 2000 }));
    await sendEvent(t, own, boleto.id, 'PAYMENT_CONFIRMED');
    await createSale(t, own, saleBody('CREDIT_CARD', { amount: 3000 }));
    const chargeback = await createSale(t, own, saleBody('CREDIT_CARD', { amount: 4000 }));
    await sendEvent(t, own, chargeback.id, 'CHARGEBACK_OPENED');
    await sendEvent(t, own, chargeback.id, 'CHARGEBACK_CONFIRMED');
    const refunded = await createSale(t, own, saleBody('PIX', { amount: 5000 }));
    await sendEvent(t, own, refunded.id, 'PAYMENT_CONFIRMED');
    await sendEvent(t, own, refunded.id, 'REFUNDED');
    await createSale(t, own, saleBody('PIX', { amount: 6000 })); // pending: not revenue

    const { body } = await t.http.get('/api/seller').set(own.headers).expect(200);
    expect(body.revenue).toEqual({
      totalAmount: 6000,
      totalCount: 3,
      cardAmount: 3000,
      cardCount: 1,
      pixAmount: 1000,
      pixCount: 1,
      boletoAmount: 2000,
      boletoCount: 1,
      chargebackAmount: 4000,
      chargebackCount: 1,
      refundAmount: 5000,
      refundCount: 1,
    });
  });
});
