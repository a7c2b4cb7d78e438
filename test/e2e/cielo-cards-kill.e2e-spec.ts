import { rm } from 'node:fs/promises';
import { DataSource } from 'typeorm';
import { CieloSimulator, makeCertificates, sandboxCard } from './setup/cielo';
import { PixCertificates } from './setup/api-pix';
import { ServiceProcess, startServiceProcess, until } from './setup/processes';
import { saleBody } from './setup/sales';
import { ADMIN_TOKEN } from './setup/test-app';

const MERCHANT_ID = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const MERCHANT_KEY = 'CIELOKILLKEY0123456789ABCDEFGHIJKLMNOPQR';
const ORDER_PREFIX = 'GWKILL';

/** A JSON answer, read by the fields each step names. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * Issue 39: the process killed between Cielo's making a card payment and its answer reaching the gateway.
 * POST /1/sales has no idempotency, so nothing may send the sale again: the sale is left EM_PROCESSAMENTO
 * with nothing recorded of the payment; the process started again (its janitor on its own timer) finds it
 * by GET /1/sales?merchantOrderId= and the sale ends PAGO, charged once, its amount credited once.
 */
describe('A Cielo card sale whose process is killed between the POST and its answer (issue 39)', () => {
  let certs: PixCertificates;
  let cielo: CieloSimulator;
  let db: DataSource;
  let service: ServiceProcess | null = null;

  beforeAll(async () => {
    certs = await makeCertificates();
    cielo = await CieloSimulator.start({ certs, merchantId: MERCHANT_ID, merchantKey: MERCHANT_KEY });
    db = await new DataSource({ type: 'postgres', url: process.env.E2E_DATABASE_URL, extra: { max: 1 } }).initialize();
  });

  afterAll(async () => {
    await service?.stop();
    await cielo.close();
    await db.destroy();
    await rm(certs.dir, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(cielo.violations).toEqual([]);
  });

  async function call(path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: Json }> {
    const response = await fetch(`${(service as ServiceProcess).base}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Json };
  }

  it('ends PAGO with the payment Cielo made, posted once, the seller credited once', async () => {
    const env = {
      DATABASE_URL: process.env.E2E_DATABASE_URL,
      ...cielo.gatewayEnv(),
      CIELO_ORDER_ID_PREFIX: ORDER_PREFIX,
      // Long enough that the client does not give up on the held answer before the kill.
      CIELO_TIMEOUT_MS: '20000',
      CIELO_NOT_FOUND_AFTER_SECONDS: '60',
      PROVIDER_RECOVERY_AFTER_SECONDS: '1',
      JANITOR_SECONDS: '1',
    };
    service = await startServiceProcess(env);
    const admin = { 'X-Admin-Token': ADMIN_TOKEN };
    const created = await call('/admin/sellers', admin, { name: 'Loja Kill', email: `cielo-kill-${Date.now()}@example.com` });
    expect(created.status).toBe(201);
    const { credentials, seller } = created.body as { seller: { id: number }; credentials: { publicKey: string; privateKey: string } };
    const keys = { 'X-Api-Public-Key': credentials.publicKey, 'X-Api-Private-Key': credentials.privateKey };

    // Cielo makes the payment at once; its answer is held, and the process dies before it comes.
    cielo.holdAnswerNext(1, 60_000, { method: 'POST' });
    const pan = sandboxCard(1, 'Visa', 4242);
    const answer = call('/api/sales', keys, saleBody('CREDIT_CARD', { amount: 25_000, card: { number: pan, holderName: 'ANA KILL', expirationMonth: '12', expirationYear: '2035', cvv: '123' } })).catch(
      (error: unknown) => error,
    );
    const payment = await until('the payment made at Cielo', async () => cielo.payments().find((one) => one.merchantOrderId.startsWith(ORDER_PREFIX)));
    await service.kill();
    // The request died with its process: no answer came.
    expect(String(await answer)).toMatch(/fetch failed/);
    const saleId = Number(payment.merchantOrderId.slice(ORDER_PREFIX.length));
    const [left] = await db.query(`SELECT seller_id, status, external_transaction_id FROM sales WHERE id = $1`, [saleId]);
    expect(left).toEqual({ seller_id: seller.id, status: 'EM_PROCESSAMENTO', external_transaction_id: null });

    service = await startServiceProcess(env);
    await until('the sale found at Cielo by its MerchantOrderId', async () => (await db.query(`SELECT status FROM sales WHERE id = $1`, [saleId]))[0].status === 'PAGO', 30_000);

    expect(cielo.postsFor(payment.merchantOrderId)).toBe(1);
    expect(cielo.payments(payment.merchantOrderId)).toHaveLength(1);
    expect(cielo.requestsOf('get-by-order').some((one) => one.merchantOrderId === payment.merchantOrderId && one.host === 'query')).toBe(true);
    const [row] = await db.query(`SELECT external_transaction_id, provider_amount_cents, amount_cents, net_amount_cents FROM sales WHERE id = $1`, [saleId]);
    expect(row).toMatchObject({ external_transaction_id: payment.paymentId, provider_amount_cents: '25000', amount_cents: '25000' });
    const balance = (await call('/api/public/balance', keys)).body as { available: number; blocked: number };
    expect(balance.available + balance.blocked).toBe(Number(row.net_amount_cents));
    const [{ postings }] = await db.query(`SELECT count(*)::int AS postings FROM ledger_postings WHERE reference_type = 'SALE' AND reference_id = $1`, [saleId]);
    expect(postings).toBe(1);
  }, 180_000);
});
