import { answerViolation, deliveryViolation } from './setup/contract/contract';
import * as S from './setup/contract/spec-schemas';
import { createSeller, TestSeller } from './setup/factories';
import { Receiver } from './setup/receiver';
import { card, customer, sendEvent } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

/**
 * Issue 18: the answers typed as the spec types them. The check itself (setup/contract) runs on every
 * answer of every e2e file; here it is shown to refuse what it must, and the two answers that broke it
 * (product.id null, a 400 without details) are tried from outside.
 */
describe('Spec contract (issue 18)', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startApp({ POSTBACK_ALLOW_PRIVATE_NETWORKS: 'true' });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const subscriptionSale = (title: string, extra: Record<string, unknown> = {}, item: Record<string, unknown> = {}) => ({
    amount: 4990,
    paymentMethod: 'CREDIT_CARD',
    customer,
    card: card(),
    items: [{ title, unitPrice: 4990, quantity: 1, tangible: false, ...item }],
    subscription: { enabled: true, billingCycle: 'MONTHLY' },
    ...extra,
  });
  const createSubscription = async (seller: TestSeller, body: Record<string, unknown>): Promise<number> =>
    (await t.http.post('/api/sales').set(seller.headers).send(body).expect(201)).body.sale.subscription.id;
  const productOf = async (seller: TestSeller, id: number) => (await t.http.get(`/api/subscriptions/${id}`).set(seller.headers).expect(200)).body.data.product;

  describe('the check refuses what the spec does not allow', () => {
    const transaction = {
      id: 1,
      status: 'PAGO',
      amount: 1000,
      paymentMethod: 'PIX',
      date: '2026-11-25T10:00:00.000Z',
      customer: { name: 'A', email: 'a@example.com', document: '', phone: '' },
      items: [{ id: 1, title: 'x', unitPrice: 1000, quantity: 1, tangible: false }],
    };
    const subscription = {
      id: 3,
      status: 'ACTIVE',
      billingCycle: 'MONTHLY',
      amount: 4990,
      nextBillingDate: '2026-12-25T10:00:00.000Z',
      trialEndsAt: null,
      customerEmail: 'a@example.com',
      customerName: 'A',
      paymentMethod: 'CREDIT_CARD',
      product: { id: 7, name: 'Plano' },
      createdAt: '2026-11-25T10:00:00.000Z',
    };

    it('accepts a well-typed transaction and refuses a null integer, a null where the spec has no "or null", and an unknown status', () => {
      expect(answerViolation('GET', '/api/transactions/1', 200, 'application/json', transaction)).toBeNull();
      expect(answerViolation('GET', '/api/transactions/1', 200, 'application/json', { ...transaction, amount: null })).toMatch(/body\/amount must be integer/);
      expect(answerViolation('GET', '/api/transactions/1', 200, 'application/json', { ...transaction, netAmount: null })).toMatch(/body\/netAmount must be integer/);
      expect(answerViolation('GET', '/api/transactions/1', 200, 'application/json', { ...transaction, status: 'PAID' })).toMatch(/body\/status must be equal to one of the allowed values/);
      expect(answerViolation('GET', '/api/transactions/1', 200, 'application/json', { ...transaction, completedAt: null })).toBeNull();
    });

    it('refuses a subscription list item whose product.id is null (the answer of issue 18)', () => {
      const list = { success: true, data: { subscriptions: [subscription], pagination: { page: 1, limit: 20, total: 1, totalPages: 1 } } };
      expect(answerViolation('GET', '/api/subscriptions', 200, 'application/json', list)).toBeNull();
      const broken = { ...list, data: { ...list.data, subscriptions: [{ ...subscription, product: { id: null, name: 'Plano' } }] } };
      expect(answerViolation('GET', '/api/subscriptions', 200, 'application/json', broken)).toMatch(/subscriptions\/0\/product\/id must be integer/);
    });

    it('refuses a sales 400 without details, and accepts one with missingFields or {field, message}', () => {
      expect(answerViolation('POST', '/api/sales', 400, 'application/json', { message: 'bad', error: 'MALFORMED_JSON' })).toMatch(/must have required property 'details'/);
      expect(answerViolation('POST', '/api/sales', 400, 'application/json', { message: 'bad', error: 'MISSING_FIELDS', details: { missingFields: ['items'] } })).toBeNull();
      expect(answerViolation('POST', '/api/sales', 400, 'application/json', { message: 'bad', error: 'MALFORMED_JSON', details: { field: 'body', message: 'bad' } })).toBeNull();
      expect(answerViolation('POST', '/api/sales', 401, 'application/json', { message: 'Unauthorized', details: 'bad pair' })).toBeNull();
    });

    it("refuses each family's error answer in another family's shape", () => {
      expect(answerViolation('GET', '/api/subscriptions/1', 404, 'application/json', { error: 'NOT_FOUND', message: 'x' })).not.toBeNull();
      expect(answerViolation('GET', '/api/subscriptions/1', 404, 'application/json', { success: false, error: { code: 'NOT_FOUND', message: 'x' } })).toBeNull();
      expect(answerViolation('GET', '/api/public/balance', 401, 'application/json', { success: false, error: { code: 'UNAUTHORIZED', message: 'x' } })).not.toBeNull();
      expect(answerViolation('POST', '/api/public/cashout', 422, 'application/json', { message: 'x', errorType: 'NOT_A_CODE' })).not.toBeNull();
      expect(answerViolation('POST', '/api/public/cashout', 422, 'application/json', { message: 'x', errorType: 'MINIMUM_VALUE' })).toBeNull();
    });

    it('refuses a JSON answer on a route it has no contract for, and a balance whose total is not available plus blocked', () => {
      expect(answerViolation('GET', '/api/unknown-success', 200, 'application/json', {})).toMatch(/no contract/);
      expect(answerViolation('GET', '/api/public/balance', 200, 'application/json', { available: 1, blocked: 2, total: 4 })).toMatch(/total/);
    });

    it('refuses a postback without X-Signature and a withdrawal webhook with null where 6.2 has no "or null"', () => {
      const postback = { id: 'e1', type: 'transaction.status_changed', previousStatus: 'PENDENTE', status: 'PAGO', changedAt: '2026-11-25T10:00:00.000Z', sequence: 1, data: transaction };
      expect(deliveryViolation({ 'x-signature': 't=1,v1=ab' }, postback)).toBeNull();
      expect(deliveryViolation({}, postback)).toMatch(/without X-Signature/);
      const webhook = {
        id: 1,
        userId: 2,
        amount: '150.00',
        pixKey: null,
        pixKeyType: null,
        status: 'COMPLETED',
        externalId: null,
        createdAt: '2026-11-25T10:00:00.000Z',
        updatedAt: '2026-11-25T10:00:00.000Z',
        processedAt: null,
        user: { id: 2, name: 'L', email: 'l@example.com' },
        type: 'WITHDRAWAL',
      };
      expect(deliveryViolation({}, webhook)).toBeNull();
      expect(deliveryViolation({}, { ...webhook, userId: null })).toMatch(/userId must be integer/);
    });
  });

  describe('product.id (spec 2.6) is an integer for a subscription created without productId', () => {
    it('answers the same integer in the lookup, the list and every postback, stable across renewals of state', async () => {
      const seller = await createSeller(t);
      const id = await createSubscription(seller, subscriptionSale('Plano sem id', { postbackUrl: `${receiver.url}/p/${seller.id}` }));
      const product = await productOf(seller, id);
      expect(product).toEqual({ id: expect.any(Number), name: 'Plano sem id' });
      expect(Number.isSafeInteger(product.id) && product.id > 0).toBe(true);

      const list = (await t.http.get('/api/subscriptions').set(seller.headers).expect(200)).body.data.subscriptions;
      expect(list.map((s: { id: number; product: unknown }) => [s.id, s.product])).toEqual([[id, product]]);

      await t.http.post(`/api/subscriptions/${id}/pause`).set(seller.headers).expect(200);
      await t.http.post(`/api/subscriptions/${id}/resume`).set(seller.headers).expect(200);
      await receiver.waitFor((all) => all.some((r) => r.path === `/p/${seller.id}` && r.body.status === 'ACTIVE' && r.body.previousStatus === 'PAUSED'));
      const postbacks = receiver.received.filter((r) => r.path === `/p/${seller.id}` && r.body.type === 'subscription.status_changed');
      expect(postbacks.length).toBeGreaterThanOrEqual(3);
      for (const postback of postbacks) expect((postback.body.data as { product: unknown }).product).toEqual(product);
      expect(await productOf(seller, id)).toEqual(product);
    });

    it("reuses the gateway's product for the same title, gives another title its own id, and never takes an id the seller sent", async () => {
      const seller = await createSeller(t);
      const own = await createSubscription(seller, subscriptionSale('Plano do vendedor', {}, { productId: 40 }));
      const first = await createSubscription(seller, subscriptionSale('Plano A'));
      const again = await createSubscription(seller, subscriptionSale('Plano A'));
      const other = await createSubscription(seller, subscriptionSale('Plano B'));
      const [ownProduct, a1, a2, b] = await Promise.all([own, first, again, other].map((id) => productOf(seller, id)));
      expect(ownProduct).toEqual({ id: 40, name: 'Plano do vendedor' });
      expect(a1).toEqual({ id: 41, name: 'Plano A' });
      expect(a2).toEqual(a1);
      expect(b).toEqual({ id: 42, name: 'Plano B' });

      const elsewhere = await createSeller(t);
      expect(await productOf(elsewhere, await createSubscription(elsewhere, subscriptionSale('Plano A')))).toEqual({ id: 1, name: 'Plano A' });
    });

    it('gives 12 concurrent first subscriptions of one new title one product, and of 12 new titles 12 products', async () => {
      const seller = await createSeller(t);
      const same = await Promise.all(Array.from({ length: 12 }, () => createSubscription(seller, subscriptionSale('Plano concorrido'))));
      const sameIds = new Set(await Promise.all(same.map(async (id) => (await productOf(seller, id)).id)));
      expect(sameIds.size).toBe(1);

      const distinct = await Promise.all(Array.from({ length: 12 }, (_, i) => createSubscription(seller, subscriptionSale(`Plano ${i}`))));
      const distinctIds = new Set(await Promise.all(distinct.map(async (id) => (await productOf(seller, id)).id)));
      expect(distinctIds.size).toBe(12);
      expect(distinctIds.has([...sameIds][0])).toBe(false);
      const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM subscriptions WHERE seller_id = $1 AND product_id IS NULL`, [seller.id]);
      expect(count).toBe(0);
    });
  });

  describe('every 400 carries details', () => {
    it('answers malformed JSON on POST /api/sales 400 with {message, error, details: {field, message}}', async () => {
      const seller = await createSeller(t);
      const response = await t.http.post('/api/sales').set(seller.headers).set('Content-Type', 'application/json').send('{"amount": 10,');
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ message: expect.any(String), error: 'MALFORMED_JSON', details: { field: 'body', message: expect.any(String) } });
    });

    it('answers a body that is not an object, a bad Idempotency-Key and a bad id with the field they are about', async () => {
      const seller = await createSeller(t);
      const notObject = await t.http.post('/api/sales').set(seller.headers).send([1, 2]);
      expect(notObject.status).toBe(400);
      expect(notObject.body.details).toEqual(expect.objectContaining({ field: expect.any(String), message: expect.any(String) }));
      const key = await t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', 'ü'.repeat(3)).send({});
      expect(key.status).toBe(400);
      const id = await t.http.get('/api/transactions/abc').set(seller.headers);
      expect(id.body).toEqual({ message: expect.any(String), error: 'INVALID_ID', details: { field: 'id', message: expect.any(String) } });
      const subscription = await t.http.get('/api/subscriptions/abc').set(seller.headers);
      expect(subscription.body).toEqual({ success: false, error: { code: 'INVALID_ID', message: expect.any(String), details: { field: 'id', message: expect.any(String) } } });
    });
  });

  describe('the OpenAPI document (/docs-json)', () => {
    /** Each spec table and the component schema that documents it. */
    const DOCUMENTED: Array<[string, Record<string, unknown>]> = [
      ['SaleResponse', S.sale],
      ['SaleSubscriptionResponse', S.saleSubscription],
      ['TransactionResponse', S.transaction],
      ['SubscriptionListItem', S.subscriptionListItem],
      ['SubscriptionResponse', S.subscription],
      ['SellerAccountResponse', S.sellerAccount],
      ['WithdrawalLookupResponse', S.withdrawalLookup],
    ];

    type JsonSchema = { type?: string; properties?: Record<string, JsonSchema>; required?: string[]; anyOf?: JsonSchema[]; nullable?: boolean; $ref?: string; allOf?: JsonSchema[] };
    const specNullable = (schema: JsonSchema): boolean => (schema.anyOf ?? []).some((s) => s.type === 'null');

    it('marks a field nullable exactly where the spec says "or null", and required wherever the spec requires it', async () => {
      const document = (await t.http.get('/docs-json').expect(200)).body as { components: { schemas: Record<string, JsonSchema> } };
      const mismatches: string[] = [];
      const compare = (name: string, spec: JsonSchema, documented: JsonSchema) => {
        const resolved = documented.$ref ? document.components.schemas[documented.$ref.split('/').pop() as string] : documented;
        for (const [field, fieldSpec] of Object.entries(spec.properties ?? {})) {
          const doc = resolved.properties?.[field];
          if (!doc) {
            mismatches.push(`${name}.${field}: not documented`);
            continue;
          }
          const docNullable = doc.nullable === true || (doc.allOf ?? []).some((s) => s.nullable === true);
          if (docNullable !== specNullable(fieldSpec)) mismatches.push(`${name}.${field}: nullable ${docNullable}, spec ${specNullable(fieldSpec)}`);
          // Always present where the spec allows absence is fine; absent where the spec requires is not.
          if ((spec.required ?? []).includes(field) && !(resolved.required ?? []).includes(field)) mismatches.push(`${name}.${field}: optional, the spec requires it`);
          const inner = fieldSpec.properties ? fieldSpec : (fieldSpec.anyOf ?? []).find((s) => s.properties);
          const docInner = doc.$ref ? doc : (doc.allOf ?? []).find((s) => s.$ref);
          if (inner && docInner) compare(`${name}.${field}`, inner, docInner);
        }
      };
      for (const [component, spec] of DOCUMENTED) {
        expect(document.components.schemas[component]).toBeDefined();
        compare(component, spec as JsonSchema, { $ref: `#/components/schemas/${component}` });
      }
      expect(mismatches).toEqual([]);
    });
  });

  it('a PIX sale confirmed through the sandbox sends postbacks the check accepts (the receiver checks each one)', async () => {
    const seller = await createSeller(t);
    const sale = (await t.http.post('/api/sales').set(seller.headers).send({
      amount: 2500,
      paymentMethod: 'PIX',
      pix: {},
      customer,
      items: [{ title: 'Curso', unitPrice: 2500, quantity: 1, tangible: false }],
      postbackUrl: `${receiver.url}/pix/${seller.id}`,
    }).expect(201)).body.sale;
    expect((await sendEvent(t, seller, sale.id, 'PAYMENT_CONFIRMED')).status).toBe(200);
    const paid = (r: { path: string; body: Record<string, unknown> }) => r.path === `/pix/${seller.id}` && r.body.status === 'PAGO';
    const postback = (await receiver.waitFor((all) => all.some(paid))).find(paid)!;
    expect(deliveryViolation(postback.headers as Record<string, unknown>, postback.body)).toBeNull();
    expect((postback.body.data as { netAmount: number }).netAmount).toEqual(expect.any(Number));
  });
});
