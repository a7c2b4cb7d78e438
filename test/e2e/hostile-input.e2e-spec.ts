import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { recordReliability } from './setup/reliability-report';
import { saleBody } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

/**
 * Hostile bodies and queries (issue 10): text PostgreSQL cannot store, deep nesting, huge arrays and
 * wrong JSON types are refused with a 400 in the route family's shape, naming the field, quickly, and
 * nothing is written.
 */
describe('Hostile input is a 4xx, never a 5xx, and writes nothing', () => {
  let t: TestApp;
  let seller: TestSeller;

  beforeAll(async () => {
    t = await startApp();
    seller = await createSeller(t);
  });
  afterAll(() => t.close());
  afterEach(() => recordReliability({ hostileInputs: 1 }));

  const counts = async () =>
    (await t.db.query(
      `SELECT (SELECT count(*) FROM sales WHERE seller_id = $1)::int AS sales, (SELECT count(*) FROM withdrawals WHERE seller_id = $1)::int AS withdrawals,
              (SELECT count(*) FROM sellers)::int AS sellers`,
      [seller.id],
    ))[0];

  let deep: unknown = 1;
  for (let i = 0; i < 3000; i += 1) deep = { a: deep };
  const cases: Array<[string, string, string, unknown, string | RegExp]> = [
    ['a NUL in customer.name', 'post', '/api/sales', saleBody('PIX', { customer: { name: 'Jo\u0000ão', email: 'joao@example.com' } }), 'customer.name'],
    ['a lone surrogate inside metadata', 'post', '/api/sales', saleBody('PIX', { metadata: { note: 'x\ud800y' } }), 'metadata.note'],
    ['a body nested 3,000 levels deep', 'post', '/api/sales', { ...saleBody('PIX'), metadata: deep }, /^metadata/],
    ['5,000 items (under the 1 MB body limit)', 'post', '/api/sales', saleBody('PIX', { items: Array.from({ length: 5_000 }, () => ({ title: 'x', unitPrice: 1, quantity: 1, tangible: false })) }), 'items'],
    ['an array where the amount belongs', 'post', '/api/sales', saleBody('PIX', { amount: [10000] }), 'amount'],
    ['an object where the amount belongs (cashout)', 'post', '/api/public/cashout', { amount: { value: 150 }, pixKey: '52998224725' }, 'amount'],
    ['a NUL in a pixKey (cashout)', 'post', '/api/public/cashout', { amount: 150, pixKey: '529982\u000024725' }, 'pixKey'],
    ['a NUL in the operator API', 'post', '/admin/sellers', { name: 'Lo\u0000ja', email: 'x@example.com' }, 'name'],
    ['an array where a name belongs (operator API)', 'post', '/admin/sellers', { name: ['Loja'], email: 'x@example.com' }, 'name'],
  ];

  it.each(cases)('%s: 400 naming the field, nothing written', async (_title, method, path, body, field) => {
    const before = await counts();
    const started = Date.now();
    const request = t.http[method as 'post'](path).set({ ...seller.headers, ...adminHeaders }).send(body as object);
    const response = await request;
    expect(response.status).toBe(400);
    const details = response.body.details ?? response.body.error?.details ?? {};
    const named = [details.field, ...(details.missingFields ?? []), ...(details.errors ?? []).map((e: { field: string }) => e.field)].filter(Boolean);
    expect(named.some((name: string) => (typeof field === 'string' ? name === field : field.test(name)))).toBe(true);
    expect(JSON.stringify(response.body).length).toBeLessThan(5_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await counts()).toEqual(before);
  });

  it('refuses a NUL in a query string with a 400 in the family shape', async () => {
    const response = await t.http.get('/api/subscriptions?search=a%00b').set(seller.headers);
    expect({ status: response.status, success: response.body.success, code: response.body.error?.code }).toEqual({ status: 400, success: false, code: 'VALIDATION_ERROR' });
  });
});
