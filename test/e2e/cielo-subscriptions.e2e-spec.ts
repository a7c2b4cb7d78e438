import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { decryptSecret, encryptSecret, keyId } from '../../src/common/crypto/secrets';
import { DEVELOPMENT_ENCRYPTION_KEY } from '../../src/config/app-config';
import { checkProviderBacking } from '../../src/ledger/provider-backing';
import { CieloRecordedRequest, CieloSimulator, makeCertificates, sandboxCard } from './setup/cielo';
import { PixCertificates } from './setup/api-pix';
import { createSeller as newSeller, TestSeller } from './setup/factories';
import { saleBody } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const run = promisify(execFile);

const MERCHANT_ID = '7c2e9a41-5b3d-4e8f-9a10-b2c3d4e5f607';
const MERCHANT_KEY = 'CIELOSUBSE2EKEY0123456789ABCDEFGHIJKLMNO';
const ORDER_PREFIX = 'GWSUB';
const DAY = 86_400_000;

/** A JSON body, read by the fields each step names. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * Issue 39's subscriptions on stored cards through Cielo (CARD_PROVIDER=cielo), against the Cielo simulator,
 * which judges every request against cielo-ecommerce-3.0.schemas.json: the first charge saves the card
 * (SaveCard, CardOnFile First/Recurring) and its CardToken is kept sealed on the subscription; renewals and
 * retries are charged with the token, without CVV, CardOnFile Used/Recurring, each POSTed once; a trial is
 * charged at once and saves the card the same way; the issuer's NewCard replaces the stored token. Renewals
 * run through the sandbox scheduler route with its own `now`.
 */
describe('Subscriptions on stored cards through Cielo (issue 39)', () => {
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
      CIELO_TIMEOUT_MS: '3000',
      // Renewals are run ahead of the real clock through the sandbox scheduler route.
      SANDBOX_CLOCK_MOVES_REAL_RECORDS: 'true',
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

  const cardNumber = (lastDigit: number, brand: 'Visa' | 'Master' | 'Elo' = 'Visa') => sandboxCard(lastDigit, brand, (seq += 1) + Math.floor(Math.random() * 1000) * 1000);
  const subscriptionSale = (number: string, subscription: Record<string, unknown> = {}) =>
    saleBody('CREDIT_CARD', {
      amount: 4990,
      card: { number, holderName: 'Ana Souza', expirationMonth: '12', expirationYear: '2035', cvv: '4821' },
      items: [{ title: 'Plano Pro', unitPrice: 4990, quantity: 1, tangible: false }],
      subscription: { enabled: true, billingCycle: 'MONTHLY', ...subscription },
    });
  const orderId = (saleId: number) => `${ORDER_PREFIX}${saleId}`;
  const scheduler = async (seller: TestSeller, at: Date | number) =>
    (await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({ now: new Date(at).toISOString() }).expect(200)).body as Json;
  const subscriptionRow = async (id: number) =>
    (await t.db.query(`SELECT status, card_token, card_token_sealed, card_last_four, card_brand, next_billing_date, next_retry_at, successful_billings FROM subscriptions WHERE id = $1`, [id]))[0] as Json;
  const salesOf = async (subscriptionId: number) =>
    (await t.db.query(`SELECT id, status, billing_period, billing_attempt, card_token, acquirer_return_code FROM sales WHERE subscription_id = $1 ORDER BY id`, [subscriptionId])) as Json[];
  const saleRequest = (saleId: number): CieloRecordedRequest => {
    const found = cielo.requestsOf('sale').filter((one) => one.merchantOrderId === orderId(saleId));
    expect(found).toHaveLength(1);
    return found[0];
  };
  /** How many rows of any table hold `text` anywhere. */
  const rowsHolding = async (text: string) => {
    const tables: Array<{ name: string }> = await t.db.query(`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`);
    const found: Array<{ table: string; count: number }> = [];
    for (const { name } of tables) {
      const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM "${name}" x WHERE x::text ILIKE $1`, [`%${text}%`]);
      if (count > 0) found.push({ table: name, count });
    }
    return found;
  };
  /** The first charge's request saved the card, and the token it answered is the subscription's, sealed. */
  const expectCardSaved = async (saleId: number, subscriptionId: number, brand: string) => {
    const request = saleRequest(saleId);
    expect((request.body as Json).Payment.CreditCard).toMatchObject({ SecurityCode: '[redacted]', Brand: brand, SaveCard: true, CardOnFile: { Usage: 'First', Reason: 'Recurring' } });
    const [payment] = cielo.payments(orderId(saleId));
    expect(payment).toMatchObject({ status: 2, securityCodeSent: true, cardToken: expect.any(String) });
    const row = await subscriptionRow(subscriptionId);
    expect(row.card_token).toBeNull();
    expect(row.card_token_sealed).toMatch(/^v2\./);
    expect(row.card_token_sealed).not.toContain(payment.cardToken);
    return payment.cardToken as string;
  };
  /** The renewal's sale was POSTed once, with the token, without CVV, Recurrent with CardOnFile Used/Recurring. */
  const expectChargedByToken = (saleId: number, token: string, brand: string) => {
    expect(cielo.postsFor(orderId(saleId))).toBe(1);
    const body = saleRequest(saleId).body as Json;
    expect(body.Payment).toMatchObject({ Recurrent: true, Installments: 1, CreditCard: { CardToken: `[redacted …${token.slice(-4)}]`, Brand: brand, CardOnFile: { Usage: 'Used', Reason: 'Recurring' } } });
    expect(body.Payment.CreditCard).not.toHaveProperty('SecurityCode');
    expect(body.Payment.CreditCard).not.toHaveProperty('CardNumber');
    const [payment] = cielo.payments(orderId(saleId));
    expect(payment).toMatchObject({ chargedWithToken: token, securityCodeSent: false, recurrent: true, cardOnFile: { Usage: 'Used', Reason: 'Recurring' } });
    return payment;
  };

  it('the first charge saves the card (SaveCard, CardOnFile First/Recurring) and three renewals are charged by its token without CVV, CardOnFile Used/Recurring, each POSTed once; the token in clear in no table', async () => {
    const seller = await createSeller(t);
    const pan = cardNumber(1);
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(subscriptionSale(pan)).expect(201)).body.sale as Json;
    expect(sale).toMatchObject({ status: 'PAGO', subscription: { status: 'ACTIVE' } });
    const subscriptionId = sale.subscription.id as number;
    const token = await expectCardSaved(sale.id, subscriptionId, 'Visa');

    for (let renewal = 1; renewal <= 3; renewal += 1) {
      const due = (await subscriptionRow(subscriptionId)).next_billing_date as Date;
      const ran = await scheduler(seller, due.getTime() + 60_000);
      expect(ran.subscriptions.renewals).toBe(1);
      const sales = await salesOf(subscriptionId);
      expect(sales).toHaveLength(renewal + 1);
      const latest = sales[renewal];
      expect(latest).toMatchObject({ status: 'PAGO', billing_period: renewal, billing_attempt: 0, card_token: null });
      const payment = expectChargedByToken(latest.id, token, 'Visa');
      expect(payment).toMatchObject({ status: 2, amount: 4990, capturedAmount: 4990 });
    }
    expect(await subscriptionRow(subscriptionId)).toMatchObject({ status: 'ACTIVE', successful_billings: 4 });
    expect((await t.http.get(`/api/subscriptions/${subscriptionId}`).set(seller.headers).expect(200)).body.data).toMatchObject({ status: 'ACTIVE' });

    // Neither the token nor the card number is in clear in any row of any table.
    expect(await rowsHolding(token)).toEqual([]);
    expect(await rowsHolding(pan)).toEqual([]);
  }, 90_000);

  it('a subscription with a trial is charged at once, saving the card the same way (Mastercard: InitiatedTransactionIndicator C1, then M1); its renewal at the trial’s end is charged by token', async () => {
    const seller = await createSeller(t);
    const pan = cardNumber(4, 'Master');
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(subscriptionSale(pan, { trialDays: 7 })).expect(201)).body.sale as Json;
    expect(sale).toMatchObject({ status: 'PAGO', subscription: { status: 'TRIALING' } });
    const subscriptionId = sale.subscription.id as number;
    const token = await expectCardSaved(sale.id, subscriptionId, 'Master');
    expect((saleRequest(sale.id).body as Json).Payment.InitiatedTransactionIndicator).toEqual({ Category: 'C1', Subcategory: 'Subscription' });

    const trialEndsAt = Date.parse(sale.subscription.trialEndsAt as string);
    expect(Math.abs(trialEndsAt - (Date.now() + 7 * DAY))).toBeLessThan(60_000);
    expect((await scheduler(seller, trialEndsAt + 60_000)).subscriptions.renewals).toBe(1);
    const [, renewal] = await salesOf(subscriptionId);
    expect(renewal).toMatchObject({ status: 'PAGO', billing_period: 1 });
    expectChargedByToken(renewal.id, token, 'Master');
    expect((saleRequest(renewal.id).body as Json).Payment.InitiatedTransactionIndicator).toEqual({ Category: 'M1', Subcategory: 'Subscription' });
    expect(await subscriptionRow(subscriptionId)).toMatchObject({ status: 'ACTIVE', successful_billings: 2 });
    expect(await rowsHolding(token)).toEqual([]);
  }, 60_000);

  it('the issuer’s new card (NewCard) on a refused renewal is tokenized and replaces the stored token, sealed; the retry is charged with it and pays', async () => {
    const seller = await createSeller(t);
    const pan = cardNumber(1);
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(subscriptionSale(pan)).expect(201)).body.sale as Json;
    const subscriptionId = sale.subscription.id as number;
    const token = await expectCardSaved(sale.id, subscriptionId, 'Visa');
    const sealedBefore = (await subscriptionRow(subscriptionId)).card_token_sealed as string;

    const newCard = cielo.issuerUpdate(pan);
    const tokenizationsBefore = cielo.requestsOf('card-token').length;
    const due = (await subscriptionRow(subscriptionId)).next_billing_date as Date;
    expect((await scheduler(seller, due.getTime() + 60_000)).subscriptions.renewals).toBe(1);
    const [, refused] = await salesOf(subscriptionId);
    expect(refused).toMatchObject({ status: 'RECUSADO', billing_period: 1, acquirer_return_code: 'KA' });
    expectChargedByToken(refused.id, token, 'Visa');
    expect(cielo.payments(orderId(refused.id))[0].newCard).toMatchObject({ CardNumber: newCard.CardNumber });

    // The new card was tokenized once (POST /1/card/, its number masked in the record), and that token is the subscription's now, sealed.
    const tokenizations = cielo.requestsOf('card-token').slice(tokenizationsBefore);
    expect(tokenizations).toHaveLength(1);
    expect(tokenizations[0]).toMatchObject({ host: 'transactional', method: 'POST', status: 201, body: { CardNumber: `${newCard.CardNumber.slice(0, 6)}******${newCard.CardNumber.slice(-4)}`, ExpirationDate: newCard.ExpirationDate, Brand: 'Visa' } });
    const after = await subscriptionRow(subscriptionId);
    expect(after.status).toBe('PAST_DUE');
    expect(after.card_token_sealed).toMatch(/^v2\./);
    expect(after.card_token_sealed).not.toBe(sealedBefore);
    // The subscription shows, and is charged as, the new card.
    expect(after).toMatchObject({ card_last_four: newCard.CardNumber.slice(-4), card_brand: 'VISA' });

    // The retry (dunning) is charged with the new card's token, and pays.
    expect((await scheduler(seller, (after.next_retry_at as Date).getTime() + 60_000)).subscriptions.retries).toBe(1);
    const [, , retry] = await salesOf(subscriptionId);
    expect(retry).toMatchObject({ status: 'PAGO', billing_period: 1, billing_attempt: 1 });
    const retried = cielo.payments(orderId(retry.id))[0];
    expect(retried.chargedWithToken).not.toBe(token);
    expect(cielo.cardNumberOf(retried.chargedWithToken as string)).toBe(newCard.CardNumber);
    expectChargedByToken(retry.id, retried.chargedWithToken as string, 'Visa');
    expect(await subscriptionRow(subscriptionId)).toMatchObject({ status: 'ACTIVE' });
    expect(await rowsHolding(retried.chargedWithToken as string)).toEqual([]);
    expect(await rowsHolding(newCard.CardNumber)).toEqual([]);
  }, 90_000);

  it('secrets:reencrypt reseals the stored card tokens with a new ENCRYPTION_KEY: once the old key is gone, the renewal is still charged by its token', async () => {
    const seller = await createSeller(t);
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(subscriptionSale(cardNumber(1))).expect(201)).body.sale as Json;
    const subscriptionId = sale.subscription.id as number;
    const token = await expectCardSaved(sale.id as number, subscriptionId, 'Visa');
    // The token as a key of its own sealed it (so that the command, which reseals every token its keyring
    // opens, leaves the other tests' tokens, sealed with the development key, unreadable and untouched).
    const oldKey = 'd'.repeat(64);
    const newKey = 'c'.repeat(64);
    const developmentSealed = (await subscriptionRow(subscriptionId)).card_token_sealed as string;
    const before = encryptSecret(decryptSecret(developmentSealed, { current: Buffer.from(DEVELOPMENT_ENCRYPTION_KEY, 'hex'), previous: [] }), Buffer.from(oldKey, 'hex'));
    await t.db.query(`UPDATE subscriptions SET card_token_sealed = $2 WHERE id = $1`, [subscriptionId, before]);

    // The operator's command, with the new key and the old one kept to read what it sealed.
    const reencrypted = await run(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/cli.ts', 'secrets:reencrypt'], {
      env: { ...process.env, DATABASE_URL: process.env.E2E_DATABASE_URL, LOG_FILE: undefined, ENCRYPTION_KEY: newKey, ENCRYPTION_KEYS: oldKey },
    });
    const result = JSON.parse(reencrypted.stdout) as Json;
    expect(result.cardTokens.reencrypted).toBe(1);
    const after = (await subscriptionRow(subscriptionId)).card_token_sealed as string;
    expect(after).not.toBe(before);
    expect(after.startsWith(`v2.${keyId(Buffer.from(newKey, 'hex'))}.`)).toBe(true);
    expect(await rowsHolding(token)).toEqual([]);

    // A service with only the new key renews the subscription with the same token.
    const rotated = await startApp({ ...cielo.gatewayEnv(), CIELO_ORDER_ID_PREFIX: ORDER_PREFIX, CIELO_TIMEOUT_MS: '3000', SANDBOX_CLOCK_MOVES_REAL_RECORDS: 'true', JANITOR_SECONDS: '3600', ENCRYPTION_KEY: newKey });
    try {
      const due = (await subscriptionRow(subscriptionId)).next_billing_date as Date;
      await rotated.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({ now: new Date(due.getTime() + 60_000).toISOString() }).expect(200);
      const renewal = (await salesOf(subscriptionId)).at(-1) as Json;
      expect(renewal).toMatchObject({ status: 'PAGO', billing_period: 1 });
      expectChargedByToken(renewal.id as number, token, 'Visa');
    } finally {
      await rotated.close();
    }
  }, 90_000);

  it('a stored token no key of the service opens fails its own renewal, unsent (FALHA, for dunning); the renewals billed with it are charged', async () => {
    const seller = await createSeller(t);
    const good = (await t.http.post('/api/sales').set(seller.headers).send(subscriptionSale(cardNumber(1))).expect(201)).body.sale as Json;
    const lost = (await t.http.post('/api/sales').set(seller.headers).send(subscriptionSale(cardNumber(4))).expect(201)).body.sale as Json;
    const goodToken = await expectCardSaved(good.id as number, good.subscription.id as number, 'Visa');
    await expectCardSaved(lost.id as number, lost.subscription.id as number, 'Visa');
    // Sealed with a key this service does not hold (dropped from ENCRYPTION_KEYS before secrets:reencrypt ran).
    await t.db.query(`UPDATE subscriptions SET card_token_sealed = $2 WHERE id = $1`, [lost.subscription.id, encryptSecret('a-token-nobody-can-open', Buffer.from('e'.repeat(64), 'hex'))]);
    const posts = cielo.requestsOf('sale').length;
    const due = (await subscriptionRow(good.subscription.id as number)).next_billing_date as Date;
    expect((await scheduler(seller, due.getTime() + 60_000)).subscriptions.renewals).toBe(2);
    const renewed = (await salesOf(good.subscription.id as number)).at(-1) as Json;
    expect(renewed).toMatchObject({ status: 'PAGO', billing_period: 1 });
    expectChargedByToken(renewed.id as number, goodToken, 'Visa');
    const unsent = (await salesOf(lost.subscription.id as number)).at(-1) as Json;
    expect(unsent).toMatchObject({ status: 'FALHA', billing_period: 1 });
    expect(cielo.postsFor(orderId(unsent.id as number))).toBe(0);
    expect(cielo.requestsOf('sale').length).toBe(posts + 1);
    expect((await subscriptionRow(lost.subscription.id as number)).status).toBe('PAST_DUE');
  }, 90_000);

  it('ledger:verify is clean: every paid Cielo sale of these subscriptions, first charges and renewals, backed by the payment Cielo captured', async () => {
    const seller = await createSeller(t);
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(subscriptionSale(cardNumber(0, 'Elo'))).expect(201)).body.sale as Json;
    const due = (await subscriptionRow(sale.subscription.id as number)).next_billing_date as Date;
    expect((await scheduler(seller, due.getTime() + 60_000)).subscriptions.renewals).toBe(1);
    const paid: Array<{ id: number; amount_cents: string; external_transaction_id: string }> = await t.db.query(
      `SELECT id, amount_cents, external_transaction_id FROM sales WHERE provider = 'cielo' AND status = 'PAGO' AND seller_id = ANY($1::int[])`,
      [sellerIds],
    );
    expect(paid.length).toBeGreaterThanOrEqual(2);
    for (const one of paid) expect(cielo.payment(one.external_transaction_id)).toMatchObject({ status: 2, capturedAmount: Number(one.amount_cents), merchantOrderId: orderId(one.id) });
    expect((await checkProviderBacking(t.db)).problems).toEqual([]);
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
