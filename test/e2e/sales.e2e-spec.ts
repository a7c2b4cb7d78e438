import { randomUUID } from 'node:crypto';
import { identificarDataComNovoFator2025, validarBoleto } from '@mrmgomes/boleto-utils';
import jsQR from 'jsqr';
import { hasError, parsePix } from 'pix-utils';
import { PNG } from 'pngjs';
import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { balanceOf, card, customer, digitalItem, saleBody, threeDSecure } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /api/sales (spec 2.1, 2.2, 7.1)', () => {
  let t: TestApp;
  let seller: TestSeller;

  beforeAll(async () => {
    t = await startApp();
    seller = await createSeller(t);
  });
  afterAll(() => t.close());

  const post = (body: unknown, who: TestSeller = seller) => t.http.post('/api/sales').set(who.headers).send(body as object);

  describe('each payment method', () => {
    it('PIX: PENDENTE with a BR Code, its QR PNG and no expiry by default', async () => {
      const response = await post(saleBody('PIX')).expect(201);
      expect(response.body).toEqual({
        message: expect.any(String),
        sale: {
          id: expect.any(Number),
          amount: '10000',
          status: 'PENDENTE',
          paymentMethod: 'PIX',
          customer: { name: 'João da Silva', email: 'joao@example.com', document: '52998224725', phone: '11987654321' },
          payment: {
            method: 'PIX',
            installments: null,
            pix: { key: expect.stringMatching(/^000201/), qrCodeBase64: expect.stringMatching(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/), expiresAt: null },
          },
          shipping: null,
          createdAt: expect.stringMatching(ISO),
        },
      });
      expect(response.body.sale.payment.pix.key).toContain('br.gov.bcb.pix');
      expect(response.body.sale.payment.pix.key).toContain('5406100.00');
    });

    it('PIX: the QR PNG decodes back to payment.pix.key, which an independent BR Code parser reads with the right amount', async () => {
      const response = await post(saleBody('PIX', { amount: 12345 })).expect(201);
      const { key, qrCodeBase64 } = response.body.sale.payment.pix;
      const png = PNG.sync.read(Buffer.from(qrCodeBase64.replace(/^data:image\/png;base64,/, ''), 'base64'));
      expect(jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data).toBe(key);
      const parsed = parsePix(key);
      expect(hasError(parsed)).toBe(false);
      expect(parsed).toMatchObject({ transactionAmount: 123.45, merchantCity: 'SAO PAULO', merchantName: 'LOJA TESTE', txid: `SALE${response.body.sale.id}` });
    });

    it('BOLETO: an independent validator accepts boletoCode with the right amount and due date', async () => {
      const response = await post(saleBody('BOLETO', { amount: 45678, boleto: { expiresInDays: 5 } })).expect(201);
      const { code, dueDate } = response.body.sale.payment.boleto;
      expect(validarBoleto(code)).toMatchObject({ sucesso: true, tipoBoleto: 'BANCO', valor: 456.78 });
      expect(identificarDataComNovoFator2025(code, 'LINHA_DIGITAVEL').toISOString().slice(0, 10)).toBe(dueDate);
      const tx = await t.http.get(`/api/transactions/${response.body.sale.id}`).set(seller.headers).expect(200);
      expect(tx.body.boletoCode).toBe(code);
    });

    it('PIX: expiresAt follows pix.expiresInDays, and pix.key is the receiver key in the code', async () => {
      const before = Date.now();
      const response = await post(saleBody('PIX', { pix: { expiresInDays: 2, key: 'loja@example.com' } })).expect(201);
      const expiresAt = Date.parse(response.body.sale.payment.pix.expiresAt);
      expect(expiresAt - before).toBeGreaterThanOrEqual(2 * 86_400_000 - 1000);
      expect(expiresAt - before).toBeLessThan(2 * 86_400_000 + 60_000);
      expect(response.body.sale.payment.pix.key).toContain('loja@example.com');
    });

    it.each([
      ['4111111111111111', 'VISA', 'PAGO'],
      ['5555555555554444', 'MASTERCARD', 'PAGO'],
      ['6362970000457013', 'ELO', 'PAGO'],
      ['4000000000000002', 'VISA', 'RECUSADO'],
      ['4000000000000119', 'VISA', 'FALHA'],
      ['4000000000000341', 'VISA', 'PAGO'],
      ['378282246310005', 'AMEX', 'PAGO'],
    ])('CREDIT_CARD %s: brand %s, status %s, only the last four digits kept', async (number, brand, status) => {
      const response = await post(saleBody('CREDIT_CARD', { card: card(number), installments: { number: 3 } })).expect(201);
      expect(response.body.sale).toMatchObject({
        status,
        paymentMethod: 'CREDIT_CARD',
        payment: { method: 'CREDIT_CARD', installments: 3, card: { lastDigits: number.slice(-4), brand } },
      });
      const [row] = await t.db.query('SELECT * FROM sales WHERE id = $1', [response.body.sale.id]);
      const stored = JSON.stringify(row);
      expect(stored).not.toContain(number);
      expect(stored).not.toContain('"123"');
      expect(row.card_token).toMatch(/^tok_sbx_/);
    });

    it('DEBIT_CARD: charged at once, no installments', async () => {
      const response = await post(saleBody('DEBIT_CARD')).expect(201);
      expect(response.body.sale).toMatchObject({ status: 'PAGO', payment: { method: 'DEBIT_CARD', installments: null, card: { lastDigits: '1111', brand: 'VISA' } } });
    });

    it('BOLETO: PENDENTE with a 47-digit line due in 3 days by default', async () => {
      const response = await post(saleBody('BOLETO')).expect(201);
      expect(response.body.sale).toMatchObject({ status: 'PENDENTE', paymentMethod: 'BOLETO' });
      const boleto = response.body.sale.payment.boleto;
      expect(boleto.code).toMatch(/^\d{47}$/);
      expect(boleto.code.slice(-10)).toBe('0000010000'); // the value field: R$ 100.00
      const due = new Date(Date.now() + 3 * 86_400_000 - 3 * 3_600_000).toISOString().slice(0, 10);
      expect(boleto.dueDate).toBe(due);
    });

    it('TRANSFER: PENDENTE, paid like PIX', async () => {
      const response = await post(saleBody('TRANSFER')).expect(201);
      expect(response.body.sale).toMatchObject({ status: 'PENDENTE', paymentMethod: 'TRANSFER', payment: { method: 'TRANSFER', installments: null } });
    });

    it('keeps shipping as a JSON string for physical goods', async () => {
      const shipping = { street: 'Rua A', streetNumber: '10', zipCode: '01310100', city: 'São Paulo', state: 'SP', country: 'br' };
      const response = await post(saleBody('PIX', { items: [{ ...digitalItem, tangible: true }], shipping })).expect(201);
      expect(JSON.parse(response.body.sale.shipping)).toEqual(shipping);
    });

    it('answers customer.document and phone as empty strings when not given', async () => {
      const response = await post(saleBody('PIX', { customer: { name: 'Ana', email: 'ana@example.com' } })).expect(201);
      expect(response.body.sale.customer).toEqual({ name: 'Ana', email: 'ana@example.com', document: '', phone: '' });
    });
  });

  describe('validation (spec 7.1, platform.md §7)', () => {
    it('lists every missing field by its path', async () => {
      const response = await post({ paymentMethod: 'PIX', pix: {}, customer: { name: 'Ana' }, subscription: { enabled: true } }).expect(400);
      expect(response.body).toEqual({
        message: expect.any(String),
        error: 'MISSING_FIELDS',
        details: { missingFields: expect.arrayContaining(['amount', 'customer.email', 'items', 'subscription.billingCycle']) },
      });
    });

    it.each([
      ['CREDIT_CARD', 'card'],
      ['DEBIT_CARD', 'card'],
      ['PIX', 'pix'],
      ['BOLETO', 'boleto'],
    ])('%s without %s: missing field', async (method, field) => {
      const body = saleBody(method as 'PIX');
      delete (body as Record<string, unknown>)[field];
      const response = await post(body).expect(400);
      expect(response.body.details.missingFields).toEqual([field]);
    });

    it('requires shipping when an item is tangible', async () => {
      const response = await post(saleBody('PIX', { items: [{ ...digitalItem, tangible: true }] })).expect(400);
      expect(response.body.details.missingFields).toEqual(['shipping']);
    });

    it('requires the fields of each item', async () => {
      const response = await post(saleBody('PIX', { items: [{ title: 'x' }] })).expect(400);
      expect(response.body.details.missingFields).toEqual(['items[0].unitPrice', 'items[0].quantity', 'items[0].tangible']);
    });

    const invalid: Array<[string, Record<string, unknown>, string, RegExp?]> = [
      ['zero amount', { amount: 0 }, 'amount'],
      ['negative amount', { amount: -100 }, 'amount'],
      ['amount as a string', { amount: '10000' }, 'amount'],
      ['decimal amount', { amount: 100.5 }, 'amount'],
      ['unknown paymentMethod', { paymentMethod: 'CASH' }, 'paymentMethod'],
      ['bad e-mail', { customer: { ...customer, email: 'nope' } }, 'customer.email'],
      ['bad CPF', { customer: { ...customer, document: { type: 'cpf', number: '11111111111' } } }, 'customer.document.number'],
      ['phone with symbols', { customer: { ...customer, phone: '(11) 98765-4321' } }, 'customer.phone'],
      ['empty items', { items: [] }, 'items'],
      ['items not an array', { items: 'x' }, 'items'],
      ['negative unitPrice', { items: [{ ...digitalItem, unitPrice: -1 }] }, 'items[0].unitPrice'],
      ['zero quantity', { items: [{ ...digitalItem, quantity: 0 }] }, 'items[0].quantity'],
      ['tangible not boolean', { items: [{ ...digitalItem, tangible: 'yes' }] }, 'items[0].tangible'],
      ['lower-case state', { items: [{ ...digitalItem, tangible: true }], shipping: { state: 'sp' } }, 'shipping.state'],
      ['postbackUrl not http', { postbackUrl: 'ftp://example.com/x' }, 'postbackUrl'],
      ['utmSource not a string', { utmSource: 5 }, 'utmSource'],
      ['metadata not an object', { metadata: 'x' }, 'metadata'],
      ['installments on PIX', { installments: { number: 2 } }, 'installments.number'],
      ['pix.expiresInDays zero', { pix: { expiresInDays: 0 } }, 'pix.expiresInDays'],
      ['bad billingCycle', { subscription: { enabled: true, billingCycle: 'DAILY' } }, 'subscription.billingCycle', /WEEKLY, BIWEEKLY, MONTHLY, QUARTERLY, SEMIANNUAL, YEARLY/],
      ['trialDays above 90', { subscription: { enabled: true, billingCycle: 'MONTHLY', trialDays: 91 } }, 'subscription.trialDays', /0 and 90/],
      ['trialDays below 0', { subscription: { enabled: true, billingCycle: 'MONTHLY', trialDays: -1 } }, 'subscription.trialDays', /0 and 90/],
    ];
    it.each(invalid.map(([name, overrides, field, message]) => [name, overrides, field, message ?? null] as const))(
      '%s: 400 naming the field',
      async (_name, overrides, field, message) => {
      const response = await post(saleBody('PIX', overrides)).expect(400);
      expect(response.body).toMatchObject({ message: expect.any(String), error: 'VALIDATION_ERROR', details: { field, message: expect.any(String) } });
      if (message) expect(response.body.details.message).toMatch(message);
      },
    );

    const cardInvalid: Array<[string, Record<string, unknown>, string]> = [
      ['a number failing Luhn', { card: card('4111111111111112') }, 'card.number'],
      ['letters in the number', { card: card('4111abcd11111111') }, 'card.number'],
      ['a bad month', { card: { ...card(), expirationMonth: '13' } }, 'card.expirationMonth'],
      ['an expired card', { card: { ...card(), expirationYear: '2020' } }, 'card.expirationYear'],
      ['a bad cvv', { card: { ...card(), cvv: '12' } }, 'card.cvv'],
      ['13 installments', { installments: { number: 13 } }, 'installments.number'],
      ['0 installments', { installments: { number: 0 } }, 'installments.number'],
      ['13 installments as card.installments', { card: { ...card(), installments: 13 } }, 'card.installments'],
    ];
    it.each(cardInvalid)('CREDIT_CARD with %s: 400', async (_name, overrides, field) => {
      const response = await post(saleBody('CREDIT_CARD', overrides)).expect(400);
      expect(response.body.details.field).toBe(field);
    });

    it('refuses installments on a debit card', async () => {
      const response = await post(saleBody('DEBIT_CARD', { installments: { number: 2 } })).expect(400);
      expect(response.body.details.field).toBe('installments.number');
    });

    it('refuses a debit sale without 3-D Secure, with an ECI that is no authentication, or with a malformed result; before anything is charged (issue 39)', async () => {
      const { card: debitCard } = saleBody('DEBIT_CARD') as { card: Record<string, unknown> };
      const without = await post(saleBody('DEBIT_CARD', { card: { ...debitCard, threeDSecure: undefined } })).expect(400);
      expect(without.body.details).toEqual({ field: 'card.threeDSecure', message: expect.stringContaining('must be authenticated by 3-D Secure') });
      const dataOnly = await post(saleBody('DEBIT_CARD', { card: { ...debitCard, threeDSecure: threeDSecure('07') } })).expect(400);
      expect(dataOnly.body.details).toEqual({ field: 'card.threeDSecure.eci', message: expect.stringContaining('ECI 07 means the VISA cardholder was not authenticated') });
      const malformed = await post(saleBody('DEBIT_CARD', { card: { ...debitCard, threeDSecure: { ...threeDSecure(), cavv: 'not base64!' } } })).expect(400);
      expect(malformed.body.details.field).toBe('card.threeDSecure.cavv');
      const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM sales WHERE seller_id = $1 AND payment_method = 'DEBIT_CARD' AND status <> 'PAGO'`, [seller.id]);
      expect(count).toBe(0);
    });

    it('gives a 3-D Secure token for the checkout page: under the sandbox a placeholder, no script (issue 39)', async () => {
      const response = await t.http.post('/api/cards/3ds-token').set(seller.headers).send({}).expect(200);
      expect(response.body).toEqual({ accessToken: expect.stringMatching(/^sbx_3ds_[0-9a-f]{32}$/), expiresAt: expect.any(String), environment: 'SANDBOX', scriptUrl: null });
      expect(new Date(response.body.expiresAt).getTime()).toBeGreaterThan(Date.now());
      await t.http.post('/api/cards/3ds-token').send({}).expect(401);
    });

    it('refuses a subscription paid by boleto', async () => {
      const response = await post(saleBody('BOLETO', { subscription: { enabled: true, billingCycle: 'MONTHLY' } })).expect(400);
      expect(response.body.details).toEqual({ field: 'paymentMethod', message: expect.stringContaining('CREDIT_CARD or PIX') });
    });

    it('answers 422 MINIMUM_AMOUNT for a positive amount under 100 cents', async () => {
      const response = await post(saleBody('PIX', { amount: 99 })).expect(422);
      expect(response.body).toEqual({ message: expect.any(String), error: 'MINIMUM_AMOUNT' });
      await post(saleBody('PIX', { amount: 100 })).expect(201);
    });

    it('answers a body that is not an object, or malformed JSON, with 400', async () => {
      await post([1, 2]).expect(400);
      const malformed = await t.http.post('/api/sales').set(seller.headers).set('Content-Type', 'application/json').send('{"amount":');
      expect(malformed.status).toBe(400);
      expect(malformed.body).toEqual({ message: expect.any(String), error: 'MALFORMED_JSON', details: { field: 'body', message: expect.any(String) } });
    });

    it('answers 401 as {message, details}', async () => {
      const response = await t.http.post('/api/sales').send(saleBody('PIX')).expect(401);
      expect(response.body).toEqual({ message: expect.any(String), details: expect.any(String) });
    });

    it.each([
      ['isPixAvailable', 'PIX'],
      ['isCreditCardAvailable', 'CREDIT_CARD'],
      ['isCreditCardAvailable', 'DEBIT_CARD'],
      ['isBoletoAvailable', 'BOLETO'],
    ])('answers 403 FORBIDDEN when %s is off for %s', async (permission, method) => {
      const own = await createSeller(t);
      await t.http.patch(`/admin/sellers/${own.id}`).set(adminHeaders).send({ permissions: { [permission]: false } }).expect(200);
      const response = await post(saleBody(method as 'PIX'), own).expect(403);
      expect(response.body).toEqual({ message: expect.any(String), error: 'FORBIDDEN' });
    });
  });

  describe('Idempotency-Key (platform.md §6)', () => {
    it('replays the first answer for the same key and body, and creates nothing more', async () => {
      const own = await createSeller(t);
      const key = randomUUID();
      const first = await t.http.post('/api/sales').set(own.headers).set('Idempotency-Key', key).send(saleBody('CREDIT_CARD')).expect(201);
      const second = await t.http.post('/api/sales').set(own.headers).set('Idempotency-Key', key).send(saleBody('CREDIT_CARD')).expect(201);
      expect(second.body).toEqual(first.body);
      expect(second.headers['idempotent-replayed']).toBe('true');
      const [{ count }] = await t.db.query('SELECT count(*)::int AS count FROM sales WHERE seller_id = $1', [own.id]);
      expect(count).toBe(1);
      expect((await balanceOf(t, own)).total).toBe(9562);
    });

    it('answers 422 IDEMPOTENCY_KEY_REUSED for the same key with another body', async () => {
      const key = randomUUID();
      await t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', key).send(saleBody('PIX')).expect(201);
      const response = await t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', key).send(saleBody('PIX', { amount: 20000 })).expect(422);
      expect(response.body).toEqual({ message: expect.any(String), error: 'IDEMPOTENCY_KEY_REUSED' });
    });

    it('gives ten concurrent requests with one key one sale', async () => {
      const own = await createSeller(t);
      const key = randomUUID();
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => t.http.post('/api/sales').set(own.headers).set('Idempotency-Key', key).send(saleBody('PIX'))),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(10).fill(201));
      expect(new Set(responses.map((r) => r.body.sale.id)).size).toBe(1);
      const [{ count }] = await t.db.query('SELECT count(*)::int AS count FROM sales WHERE seller_id = $1', [own.id]);
      expect(count).toBe(1);
    });
  });
});
