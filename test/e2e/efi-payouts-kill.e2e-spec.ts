import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApiPixSimulator, makeCertificates, PixCertificates } from './setup/api-pix';
import { freePort, ServiceProcess, startServiceProcess, until } from './setup/processes';
import { saleBody } from './setup/sales';
import { ADMIN_TOKEN } from './setup/test-app';

const RECEIVER_KEY = randomUUID();
const CLIENT_ID = 'gateway-efi-kill';
const CLIENT_SECRET = randomBytes(16).toString('hex');
const SELLER_CPF = '52998224725';
const KEY = 'loja-kill@example.com';

/** A JSON answer, read by the fields each step names. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * Issue 38: the process killed between Efí's registering a send and its answer reaching the gateway. The
 * withdrawal is left PENDING with nothing recorded of the send; the process started again finds it by
 * its idEnvio (the janitor's look-up, or the payout job's retry answered 409 and resolved by the look-up)
 * and it ends COMPLETED, paid once.
 */
describe('A payout through Efí whose process is killed between the send and its answer (issue 38)', () => {
  let certs: PixCertificates;
  let psp: ApiPixSimulator;
  let db: DataSource;
  let service: ServiceProcess | null = null;

  beforeAll(async () => {
    certs = await makeCertificates();
    psp = await ApiPixSimulator.start({
      certs,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      receiverKey: RECEIVER_KEY,
      efi: { keyOwners: { [KEY]: { nome: 'Loja Kill', cpf: SELLER_CPF } } },
    });
    db = await new DataSource({ type: 'postgres', url: process.env.E2E_DATABASE_URL, extra: { max: 1 } }).initialize();
  });

  afterAll(async () => {
    await service?.stop();
    await psp.close();
    await db.destroy();
  });

  async function call(path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: Json }> {
    const response = await fetch(`${(service as ServiceProcess).base}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Json };
  }

  it('ends COMPLETED, sent once, its amount out of the seller’s balance once', async () => {
    const port = await freePort();
    const env = {
      DATABASE_URL: process.env.E2E_DATABASE_URL,
      PORT: String(port),
      ...psp.gatewayEnv(`http://127.0.0.1:${port}/psp/notifications/${randomBytes(16).toString('hex')}`),
      PAYOUT_PROVIDER: 'efi',
      API_PIX_RECONCILE_SECONDS: '3600',
      // Long enough that the client does not give up on the held answer before the kill.
      API_PIX_TIMEOUT_MS: '20000',
      EFI_RESEND_AFTER_SECONDS: '25',
      PROVIDER_RECOVERY_AFTER_SECONDS: '1',
      JANITOR_SECONDS: '1',
      QUEUE_LOCK_DURATION_MS: '2000',
    };
    service = await startServiceProcess(env);
    const admin = { 'X-Admin-Token': ADMIN_TOKEN };
    const created = await call('/admin/sellers', admin, { name: 'Loja Kill', email: `kill-${Date.now()}@example.com`, document: { type: 'cpf', number: SELLER_CPF } });
    expect(created.status).toBe(201);
    const { credentials } = created.body as { credentials: { publicKey: string; privateKey: string } };
    const keys = { 'X-Api-Public-Key': credentials.publicKey, 'X-Api-Private-Key': credentials.privateKey };
    const sale = await call('/api/sales', keys, saleBody('PIX', { amount: 50_000 }));
    expect(sale.status).toBe(201);
    const txid = (await call(`/api/transactions/${(sale.body as { sale: { id: number } }).sale.id}`, keys)).body.externalTransactionId as string;
    await psp.pay(txid);
    const available = await until('the sale paid', async () => {
      const balance = (await call('/api/public/balance', keys)).body as { available: number };
      return balance.available > 20_000 && balance.available;
    });

    // The send is registered at Efí; its answer is held, and the process dies before it comes.
    psp.efi.holdAnswerNextSend(1, 60_000);
    const withdrawal = await call('/api/public/cashout', keys, { amount: 200, pixKey: KEY, pixKeyType: 'EMAIL' });
    expect(withdrawal.status).toBe(201);
    const id = (withdrawal.body as { id: number }).id;
    const sendId = `GWSAQUE${id}`;
    await until('the send registered at Efí', async () => psp.efi.send(sendId) !== undefined);
    await service.kill();
    const [left] = await db.query(`SELECT status, external_id FROM withdrawals WHERE id = $1`, [id]);
    expect(left).toEqual({ status: 'PENDING', external_id: null });

    service = await startServiceProcess(env);
    await until('the withdrawal found at Efí by its idEnvio', async () => (await db.query(`SELECT status FROM withdrawals WHERE id = $1`, [id]))[0].status === 'PROCESSING', 30_000);
    await psp.efi.settleSend(sendId, 'REALIZADO');
    await until('the withdrawal completed', async () => (await db.query(`SELECT status FROM withdrawals WHERE id = $1`, [id]))[0].status === 'COMPLETED', 30_000);

    expect(psp.efi.allSends().filter((send) => send.idEnvio === sendId)).toHaveLength(1);
    const [row] = await db.query(`SELECT external_id, provider_amount_cents, net_amount_cents FROM withdrawals WHERE id = $1`, [id]);
    expect(row.external_id).toBe(psp.efi.send(sendId)?.endToEndId);
    expect(row.provider_amount_cents).toBe(row.net_amount_cents);
    const balance = (await call('/api/public/balance', keys)).body as { available: number; blocked: number };
    expect(balance).toMatchObject({ available: available - 20_000, blocked: 0 });
  }, 180_000);
});
