import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { checkProviderBacking } from '../../src/ledger/provider-backing';
import { CieloSimulator, makeCertificates, sandboxCard } from './setup/cielo';
import { PixCertificates } from './setup/api-pix';
import { createSeller as newSeller, TestSeller } from './setup/factories';
import { eventually } from './setup/processes';
import { balanceOf, saleBody, threeDSecure } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const run = promisify(execFile);

const MERCHANT_ID = '3f1d2c4b-8a9e-4f70-b6c5-d4e3f2a1b0c9';
const MERCHANT_KEY = 'CIELOE2EKEY0123456789ABCDEFGHIJKLMNOPQRS';
const ORDER_PREFIX = 'GWE2E';
/** Seconds after its POST a sale with no payment at Cielo is taken as never made (short here; 900 by default). */
const NOT_FOUND_AFTER_SECONDS = 4;

/** A JSON body, read by the fields each step names. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * Issue 39: credit card sales through Cielo's API E-commerce 3.0 (CARD_PROVIDER=cielo), against the Cielo
 * simulator (test/e2e/setup/cielo), which judges every request the gateway sends against
 * cielo-ecommerce-3.0.schemas.json. Outcomes by the sandbox's card endings (ref §3.2: 0, 1, 4 approved; 2,
 * 5, 7… refused with their ReturnCode); a lost answer, a timeout and a 5xx each leave the sale
 * EM_PROCESSAMENTO, and the janitor settles it by GET /1/sales?merchantOrderId= without ever posting the
 * sale again; ledger:verify backs every paid Cielo sale by the payment Cielo captured.
 */
describe('Credit card sales through Cielo (issue 39)', () => {
  let certs: PixCertificates;
  let cielo: CieloSimulator;
  let t: TestApp;
  let seq = 0;
  /** This file's sellers (other files' apps may share the run's database). */
  const sellerIds: number[] = [];
  const createSeller = async (...args: Parameters<typeof newSeller>) => {
    const seller = await newSeller(...args);
    sellerIds.push(seller.id);
    return seller;
  };

  beforeAll(async () => {
    certs = await makeCertificates();
    cielo = await CieloSimulator.start({ certs, merchantId: MERCHANT_ID, merchantKey: MERCHANT_KEY });
    t = await startApp({
      ...cielo.gatewayEnv(),
      CIELO_ORDER_ID_PREFIX: ORDER_PREFIX,
      CIELO_TIMEOUT_MS: '1500',
      CIELO_NOT_FOUND_AFTER_SECONDS: String(NOT_FOUND_AFTER_SECONDS),
      PROVIDER_RECOVERY_AFTER_SECONDS: '1',
      // The janitor runs when a test asks (the sandbox scheduler route, for its seller), not on its own timer.
      JANITOR_SECONDS: '3600',
    });
  });

  afterAll(async () => {
    await t.close();
    await cielo.close();
    await rm(certs.dir, { recursive: true, force: true });
  });

  afterEach(() => {
    // Every request the gateway sent, and every answer the simulator gave, against Cielo's schemas.
    expect(cielo.violations).toEqual([]);
  });

  /** A distinct Luhn-valid number of `brand` ending in `lastDigit` (the sandbox's outcome, ref §3.2). */
  const cardNumber = (lastDigit: number, brand: 'Visa' | 'Master' | 'Elo' = 'Visa') => sandboxCard(lastDigit, brand, (seq += 1) + Math.floor(Math.random() * 1000) * 1000);
  const cardSale = (number: string, overrides: Record<string, unknown> = {}) =>
    saleBody('CREDIT_CARD', { card: { number, holderName: 'João da Silva', expirationMonth: '12', expirationYear: '2035', cvv: '7359' }, ...overrides });
  const lookup = async (seller: TestSeller, id: number) => (await t.http.get(`/api/transactions/${id}`).set(seller.headers).expect(200)).body as Json;
  const orderId = (saleId: number) => `${ORDER_PREFIX}${saleId}`;
  const janitor = (seller: TestSeller) => t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({}).expect(200);
  const saleRow = async (id: number) =>
    (await t.db.query(`SELECT status, external_transaction_id, provider_amount_cents, acquirer_return_code, card_token, card_last_four, card_brand FROM sales WHERE id = $1`, [id]))[0] as Json;
  /** The recovery lease (a minute) of a sale the janitor asked about, lapsed: the next pass asks again at once. */
  const lapseRecoveryLease = (id: number) => t.db.query(`UPDATE sales SET provider_checked_at = NULL WHERE id = $1`, [id]);

  it('approves a sale in 3 instalments: POST /1/sales with MerchantOrderId, Installments, Interest ByMerchant, Capture, the SoftDescriptor and Cielo’s brand; PAGO with the PaymentId; neither the PAN nor the CVV kept anywhere', async () => {
    const seller = await createSeller(t, { commercialName: 'Loja Exemplo de Cursos Online' });
    const pan = cardNumber(1);
    const response = await t.http.post('/api/sales').set(seller.headers).send(cardSale(pan, { amount: 15_000, installments: { number: 3 } })).expect(201);
    const sale = response.body.sale as Json;
    expect(sale).toMatchObject({ status: 'PAGO', payment: { method: 'CREDIT_CARD', installments: 3, card: { lastDigits: pan.slice(-4), brand: 'VISA' } } });

    const [payment] = cielo.payments(orderId(sale.id));
    expect(cielo.payments(orderId(sale.id))).toHaveLength(1);
    expect(payment).toMatchObject({ status: 2, amount: 15_000, installments: 3, interest: 'ByMerchant', capture: true, brand: 'Visa', securityCodeSent: true });
    const [request] = cielo.requestsOf('sale').filter((one) => one.merchantOrderId === orderId(sale.id));
    expect(request.host).toBe('transactional');
    expect(request.body).toMatchObject({
      MerchantOrderId: orderId(sale.id),
      Customer: { Name: 'João da Silva', Identity: '52998224725', IdentityType: 'CPF' },
      Payment: {
        Type: 'CreditCard',
        Amount: 15_000,
        Installments: 3,
        Interest: 'ByMerchant',
        Capture: true,
        // The seller's invoice descriptor, LOJA EXEMPLO DE CURSOS, within Cielo's 13 characters.
        SoftDescriptor: 'LOJA EXEMPLO',
        CreditCard: { CardNumber: `${pan.slice(0, 6)}******${pan.slice(-4)}`, Holder: 'Joao da Silva', ExpirationDate: '12/2035', SecurityCode: '[redacted]', Brand: 'Visa' },
      },
    });

    const found = await lookup(seller, sale.id);
    expect(found).toMatchObject({ status: 'PAGO', installments: 3, externalTransactionId: payment.paymentId, acquirerReturn: { code: '6', message: 'Operation Successful' } });
    expect(await saleRow(sale.id)).toMatchObject({ status: 'PAGO', provider_amount_cents: '15000', card_token: null, card_last_four: pan.slice(-4), card_brand: 'VISA' });
    const balance = await balanceOf(t, seller);
    expect(balance.available + balance.blocked).toBe(found.netAmount);

    // The card number is in no row of any table; the CVV in none of the sale's rows nor its idempotency key's.
    const tables: Array<{ name: string }> = await t.db.query(`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`);
    for (const { name } of tables) {
      const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM "${name}" x WHERE x::text LIKE $1`, [`%${pan}%`]);
      expect({ table: name, count }).toEqual({ table: name, count: 0 });
    }
    const [{ cvv }] = await t.db.query(`SELECT count(*)::int AS cvv FROM sales s WHERE s.id = $1 AND s::text LIKE '%7359%'`, [sale.id]);
    expect(cvv).toBe(0);
  });

  it('names each brand as Cielo spells it (Master, Elo), and takes the Idempotency-Key replay without a second POST', async () => {
    const seller = await createSeller(t);
    for (const [brand, ours] of [['Master', 'MASTERCARD'], ['Elo', 'ELO']] as const) {
      const pan = cardNumber(4, brand);
      const body = cardSale(pan, { amount: 4990 });
      const key = `cielo-${brand}-${Date.now()}`;
      const first = (await t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', key).send(body).expect(201)).body.sale as Json;
      expect(first).toMatchObject({ status: 'PAGO', payment: { card: { brand: ours } } });
      const again = (await t.http.post('/api/sales').set(seller.headers).set('Idempotency-Key', key).send(body).expect(201)).body.sale as Json;
      expect(again).toMatchObject({ id: first.id, status: 'PAGO' });
      expect(cielo.payments(orderId(first.id)).map((one) => one.brand)).toEqual([brand]);
      expect(cielo.postsFor(orderId(first.id))).toBe(1);
    }
  });

  it('refuses by the card’s ending: RECUSADO with Cielo’s ReturnCode and ReturnMessage in the lookup (acquirerReturn), the balance untouched', async () => {
    const seller = await createSeller(t);
    for (const [digit, code, message] of [
      [2, '05', 'Não Autorizada'],
      [5, '78', 'Cartão Bloqueado'],
      [7, '77', 'Cartão Cancelado'],
    ] as const) {
      const sale = (await t.http.post('/api/sales').set(seller.headers).send(cardSale(cardNumber(digit), { amount: 12_000, installments: { number: 2 } })).expect(201)).body.sale as Json;
      expect(sale.status).toBe('RECUSADO');
      const [payment] = cielo.payments(orderId(sale.id));
      expect(payment).toMatchObject({ status: 3, returnCode: code, installments: 2 });
      expect(await lookup(seller, sale.id)).toMatchObject({ status: 'RECUSADO', externalTransactionId: payment.paymentId, acquirerReturn: { code, message } });
    }
    expect(await balanceOf(t, seller)).toEqual({ available: 0, blocked: 0, total: 0 });
  });

  it('refuses before anything is sent what Cielo does not take: debit of a brand Cielo takes no debit of, a brand Cielo does not name; no 3-D Secure token without CIELO_3DS_*', async () => {
    const seller = await createSeller(t);
    const posts = cielo.requestsOf('sale').length;
    const amexDebit = { ...(cardSale('378282246310005').card as Json), threeDSecure: threeDSecure() };
    const debit = await t.http.post('/api/sales').set(seller.headers).send(saleBody('DEBIT_CARD', { card: amexDebit })).expect(422);
    expect(debit.body).toMatchObject({ error: 'NOT_SUPPORTED', message: 'Cielo takes debit cards of VISA, MASTERCARD, ELO only, not AMEX' });
    const token = await t.http.post('/api/cards/3ds-token').set(seller.headers).send({}).expect(422);
    expect(token.body).toMatchObject({ error: 'NOT_SUPPORTED', message: expect.stringContaining('CIELO_3DS_') });
    // Card subscriptions are taken: cielo-subscriptions.e2e-spec.ts.
    // 637095: a Hiper BIN (credit-card-type), a brand Cielo's documented list does not name.
    const hiper = await t.http.post('/api/sales').set(seller.headers).send(cardSale('6370950000000005')).expect(422);
    expect(hiper.body).toMatchObject({ error: 'NOT_SUPPORTED', message: expect.stringContaining('HIPER') });
    expect(cielo.requestsOf('sale')).toHaveLength(posts);
    const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM sales WHERE seller_id = $1`, [seller.id]);
    expect(count).toBe(0);
  });

  it('a lost answer (the connection cut after Cielo made the payment) leaves the sale EM_PROCESSAMENTO; the janitor finds it by merchantOrderId on the query host and applies it: one POST, one payment', async () => {
    const seller = await createSeller(t);
    cielo.dropAnswerNext(1, { method: 'POST' });
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(cardSale(cardNumber(0), { amount: 8_000 })).expect(201)).body.sale as Json;
    expect(sale.status).toBe('EM_PROCESSAMENTO');
    expect(cielo.payments(orderId(sale.id))).toHaveLength(1);

    const settled = await eventually(
      async () => {
        await janitor(seller);
        return lookup(seller, sale.id);
      },
      (found) => found.status === 'PAGO',
      'the sale found at Cielo and paid',
    );
    const [payment] = cielo.payments(orderId(sale.id));
    expect(settled.externalTransactionId).toBe(payment.paymentId);
    expect(cielo.postsFor(orderId(sale.id))).toBe(1);
    const lookups = cielo.requestsOf('get-by-order').filter((one) => one.merchantOrderId === orderId(sale.id));
    expect(lookups.length).toBeGreaterThanOrEqual(1);
    expect(lookups.every((one) => one.host === 'query')).toBe(true);
    expect(cielo.requestsOf('get-sale').some((one) => one.paymentId === payment.paymentId && one.host === 'query')).toBe(true);
    expect(await saleRow(sale.id)).toMatchObject({ status: 'PAGO', provider_amount_cents: '8000' });
    expect((await balanceOf(t, seller)).total).toBe(settled.netAmount);
  });

  it('a timeout (Cielo answers after CIELO_TIMEOUT_MS) is settled the same way: the payment Cielo made is applied, never posted again', async () => {
    const seller = await createSeller(t);
    cielo.holdAnswerNext(1, 4000, { method: 'POST' });
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(cardSale(cardNumber(2), { amount: 6_000 })).expect(201)).body.sale as Json;
    expect(sale.status).toBe('EM_PROCESSAMENTO');
    const settled = await eventually(
      async () => {
        await janitor(seller);
        return lookup(seller, sale.id);
      },
      (found) => found.status !== 'EM_PROCESSAMENTO',
      'the sale found at Cielo',
    );
    // A card ending in 2 is refused: what Cielo decided is what the sale shows.
    expect(settled).toMatchObject({ status: 'RECUSADO', acquirerReturn: { code: '05' } });
    expect(cielo.postsFor(orderId(sale.id))).toBe(1);
  });

  it('a 5xx before Cielo made anything: the sale waits while "none found" could still be a payment on its way, then FALHA after CIELO_NOT_FOUND_AFTER_SECONDS; nothing posted again', async () => {
    const seller = await createSeller(t);
    cielo.failNext(1, { method: 'POST', status: 503 });
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(cardSale(cardNumber(1), { amount: 7_000 })).expect(201)).body.sale as Json;
    expect(sale.status).toBe('EM_PROCESSAMENTO');
    const sentAt = Date.now();

    // Asked about past PROVIDER_RECOVERY_AFTER_SECONDS, before the safe delay: none found, and still waiting.
    const lookUps = () => cielo.requestsOf('get-by-order').filter((one) => one.merchantOrderId === orderId(sale.id)).length;
    await eventually(
      async () => {
        await janitor(seller);
        return lookUps();
      },
      (asked) => asked > 0,
      'the janitor’s first look-up',
    );
    expect(Date.now() - sentAt).toBeLessThan(NOT_FOUND_AFTER_SECONDS * 1000);
    expect((await lookup(seller, sale.id)).status).toBe('EM_PROCESSAMENTO');

    await new Promise((resolve) => setTimeout(resolve, NOT_FOUND_AFTER_SECONDS * 1000 - (Date.now() - sentAt) + 200));
    await lapseRecoveryLease(sale.id);
    await janitor(seller);
    expect(await lookup(seller, sale.id)).toMatchObject({ status: 'FALHA' });
    expect(cielo.postsFor(orderId(sale.id))).toBe(1);
    expect(cielo.payments(orderId(sale.id))).toHaveLength(0);
    expect(await balanceOf(t, seller)).toEqual({ available: 0, blocked: 0, total: 0 });
  });

  it('a Pending answer (Status 12) keeps the sale EM_PROCESSAMENTO until Cielo decides; the janitor then applies it', async () => {
    const seller = await createSeller(t);
    cielo.pendingNext(1);
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(cardSale(cardNumber(1), { amount: 5_500 })).expect(201)).body.sale as Json;
    expect(sale.status).toBe('EM_PROCESSAMENTO');
    const [payment] = cielo.payments(orderId(sale.id));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await janitor(seller);
    expect((await lookup(seller, sale.id)).status).toBe('EM_PROCESSAMENTO');
    await cielo.settle(payment.paymentId, 'approved');
    await lapseRecoveryLease(sale.id);
    await janitor(seller);
    expect(await lookup(seller, sale.id)).toMatchObject({ status: 'PAGO', externalTransactionId: payment.paymentId });
    expect(cielo.postsFor(orderId(sale.id))).toBe(1);
  });

  it('ledger:verify backs every paid Cielo sale by the payment Cielo captured of its amount, and names one that is not', async () => {
    const seller = await createSeller(t);
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(cardSale(cardNumber(4), { amount: 9_900 })).expect(201)).body.sale as Json;
    expect(sale.status).toBe('PAGO');
    // What the gateway holds as paid agrees with the simulator's own record of what it captured.
    const paid: Array<{ id: number; amount_cents: string; external_transaction_id: string }> = await t.db.query(
      `SELECT id, amount_cents, external_transaction_id FROM sales WHERE provider = 'cielo' AND status = 'PAGO' AND seller_id = ANY($1::int[])`,
      [sellerIds],
    );
    expect(paid.length).toBeGreaterThan(0);
    for (const one of paid) expect(cielo.payment(one.external_transaction_id)).toMatchObject({ status: 2, capturedAmount: Number(one.amount_cents), merchantOrderId: orderId(one.id) });

    const clean = await checkProviderBacking(t.db);
    expect(clean.problems).toEqual([]);
    expect(clean.heldAsPaid.find((held) => held.provider === 'cielo')?.sales).toBeGreaterThanOrEqual(paid.length);

    await t.db.query(`UPDATE sales SET provider_amount_cents = 9800 WHERE id = $1`, [sale.id]);
    try {
      const tampered = await checkProviderBacking(t.db);
      expect(tampered.problems).toEqual([{ record: `sale ${sale.id}`, provider: 'cielo', problem: expect.stringContaining('no payment captured by Cielo of its amount') }]);
    } finally {
      await t.db.query(`UPDATE sales SET provider_amount_cents = 9900 WHERE id = $1`, [sale.id]);
    }
    const verified = await run(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/ledger/ledger-verify.ts'], {
      env: { ...process.env, DATABASE_URL: process.env.E2E_DATABASE_URL, LOG_FILE: undefined },
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(verified.stderr).toBe('');
    expect(verified.stdout).toMatch(/sales held as paid, by provider: .*cielo \d+/);
    expect(verified.code).toBe(0);
  }, 90_000);
});
