import { rm } from 'node:fs/promises';
import { PixCertificates } from './setup/api-pix';
import { CieloSimulator, makeCertificates } from './setup/cielo';
import { createSeller } from './setup/factories';
import { balanceOf, saleBody } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const MERCHANT_ID = '7a1d2c4b-8a9e-4f70-b6c5-d4e3f2a1b0c9';
const MERCHANT_KEY = 'CIELODEBITKEY0123456789ABCDEFGHIJKLMNOPQ';
const ORDER_PREFIX = 'GWDEB';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * Issue 39: debit through Cielo, authenticated by 3-D Secure 2.2. The seller's back end asks
 * POST /api/cards/3ds-token (the token of Cielo's MPI, POST /v2/auth/token at the simulator), its checkout
 * page runs BP.Mpi (played by CieloSimulator.authenticate, which spends the single-use token), and the
 * sale carries the script's answer in card.threeDSecure, sent to Cielo as Payment.ExternalAuthentication
 * with Authenticate true. A debit sale without it, or with an ECI that is no authentication, never
 * reaches Cielo.
 */
describe('Debit cards through Cielo with 3-D Secure 2.2 (issue 39)', () => {
  let certs: PixCertificates;
  let cielo: CieloSimulator;
  let t: TestApp;

  beforeAll(async () => {
    certs = await makeCertificates();
    cielo = await CieloSimulator.start({ certs, merchantId: MERCHANT_ID, merchantKey: MERCHANT_KEY, mpi: { clientId: 'mpi-client-e2e', clientSecret: 'mpi-secret-e2e-0123456789' } });
    t = await startApp({ ...cielo.gatewayEnv(), CIELO_ORDER_ID_PREFIX: ORDER_PREFIX, CIELO_TIMEOUT_MS: '5000', JANITOR_SECONDS: '3600' });
  });

  afterAll(async () => {
    await t.close();
    await cielo.close();
    await rm(certs.dir, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(cielo.violations).toEqual([]);
  });

  const debitCard = (number: string) => ({ number, holderName: 'Maria Souza', expirationMonth: '12', expirationYear: '2035', cvv: '123' });
  const token = async (headers: Record<string, string>) => (await t.http.post('/api/cards/3ds-token').set(headers).send({}).expect(200)).body as Json;

  it('a token from the MPI, the script’s answer in card.threeDSecure: the debit sale is PAGO, sent as DebitCard with Authenticate and ExternalAuthentication, once', async () => {
    const seller = await createSeller(t);
    const page = await token(seller.headers);
    expect(page).toEqual({ accessToken: expect.any(String), expiresAt: expect.any(String), environment: 'SDB', scriptUrl: `${cielo.mpiUrl}/Scripts/BP.Mpi.3ds21.min.js` });
    // The token's expiry read from its JWT's exp: about 20 minutes ahead.
    const lifetime = new Date(page.expiresAt).getTime() - Date.now();
    expect(lifetime).toBeGreaterThan(18 * 60_000);
    expect(lifetime).toBeLessThan(21 * 60_000);
    expect(cielo.requestsOf('mpi-token').at(-1)?.body).toEqual({ EstablishmentCode: '1234567890', MerchantName: 'Loja Exemplo', MCC: '5912' });

    for (const [number, eci] of [
      ['4000000000001000', '05'],
      ['5200000000001096', '02'],
    ] as const) {
      // One token per checkout load: each sale's page asks for its own.
      const result = cielo.authenticate((await token(seller.headers)).accessToken, number);
      expect(result).toMatchObject({ event: 'onSuccess', Eci: eci });
      const threeDSecure = { cavv: result.Cavv, eci: result.Eci, version: result.Version, referenceId: result.ReferenceId };
      const created = await t.http.post('/api/sales').set(seller.headers).send(saleBody('DEBIT_CARD', { amount: 5_000, card: { ...debitCard(number), threeDSecure } })).expect(201);
      const sale = created.body.sale as Json;
      expect(sale).toMatchObject({ status: 'PAGO', payment: { method: 'DEBIT_CARD', installments: null } });
      const posts = cielo.requestsOf('sale').filter((request) => request.merchantOrderId === `${ORDER_PREFIX}${sale.id}`);
      expect(posts).toHaveLength(1);
      expect(posts[0].body).toMatchObject({
        Payment: {
          Type: 'DebitCard',
          Amount: 5_000,
          Installments: 1,
          Capture: true,
          Authenticate: true,
          ExternalAuthentication: { Eci: eci, Version: '2', ReferenceId: result.ReferenceId },
          DebitCard: { Brand: number.startsWith('4') ? 'Visa' : 'Master' },
        },
      });
      expect((posts[0].body as Json).Payment.CreditCard).toBeUndefined();
      // Never stored: neither the cryptogram nor the reference of the authentication.
      const [row] = await t.db.query(`SELECT row_to_json(s)::text AS text FROM sales s WHERE id = $1`, [sale.id]);
      expect(row.text).not.toContain(result.ReferenceId);
      expect(row.text).not.toContain(result.Cavv);
    }
    const fee = (await t.db.query(`SELECT COALESCE(SUM(net_amount_cents), 0)::int AS net FROM sales WHERE seller_id = $1 AND status = 'PAGO'`, [seller.id]))[0].net as number;
    expect((await balanceOf(t, seller)).total).toBe(fee);
  });

  it('an authentication that failed (the MPI’s test card) is refused 400 on card.threeDSecure.eci, and one without threeDSecure 400 on card.threeDSecure: Cielo is never asked', async () => {
    const seller = await createSeller(t);
    const posts = cielo.requestsOf('sale').length;
    const failed = cielo.authenticate((await token(seller.headers)).accessToken, '4000000000001018');
    expect(failed).toMatchObject({ event: 'onFailure' });
    const threeDSecure = { cavv: 'AAABB2gHA1B5EFNjWQcDAAAAAAA=', eci: failed.Eci, version: failed.Version, referenceId: failed.ReferenceId };
    const refused = await t.http.post('/api/sales').set(seller.headers).send(saleBody('DEBIT_CARD', { card: { ...debitCard('4000000000001018'), threeDSecure } })).expect(400);
    expect(refused.body.details).toEqual({ field: 'card.threeDSecure.eci', message: expect.stringContaining(`ECI ${failed.Eci} means the VISA cardholder was not authenticated`) });
    const without = await t.http.post('/api/sales').set(seller.headers).send(saleBody('DEBIT_CARD', { card: debitCard('4000000000001000') })).expect(400);
    expect(without.body.details.field).toBe('card.threeDSecure');
    expect(cielo.requestsOf('sale')).toHaveLength(posts);
    const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM sales WHERE seller_id = $1`, [seller.id]);
    expect(count).toBe(0);
  });

  it('a credit sale with a 3-D Secure result sends it too (liability to the issuer); one without sends none', async () => {
    const seller = await createSeller(t);
    const result = cielo.authenticate((await token(seller.headers)).accessToken, '4000000000001000');
    const threeDSecure = { cavv: result.Cavv, eci: result.Eci, version: result.Version, referenceId: result.ReferenceId };
    const authenticated = (await t.http.post('/api/sales').set(seller.headers).send(saleBody('CREDIT_CARD', { card: { ...debitCard('4000000000001000'), threeDSecure } })).expect(201)).body.sale as Json;
    const plain = (await t.http.post('/api/sales').set(seller.headers).send(saleBody('CREDIT_CARD', { card: debitCard('4000000000001000') })).expect(201)).body.sale as Json;
    const bodyOf = (id: number) => cielo.requestsOf('sale').find((request) => request.merchantOrderId === `${ORDER_PREFIX}${id}`)?.body as Json;
    expect(bodyOf(authenticated.id).Payment).toMatchObject({ Type: 'CreditCard', Authenticate: true, ExternalAuthentication: { Eci: '05', ReferenceId: result.ReferenceId } });
    expect(bodyOf(plain.id).Payment.ExternalAuthentication).toBeUndefined();
    expect(bodyOf(plain.id).Payment.Authenticate).toBeUndefined();
  });
});
