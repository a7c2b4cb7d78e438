import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiPixSimulator, makeCertificates, PixCertificates } from './setup/api-pix';
import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { eventually, freePort } from './setup/processes';
import { Receiver } from './setup/receiver';
import { balanceOf, saleBody } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const RECEIVER_KEY = randomUUID();
const CLIENT_ID = 'gateway-efi-review';
const CLIENT_SECRET = randomBytes(16).toString('hex');
const PREFIX = 'GWSAQUE';
const SELLER_CPF = '52998224725';
const OWN_KEY = 'loja@example.com';
const DENIED_KEY = 'negado@example.com';
/** API_PIX_TIMEOUT_MS below: a send slot is held at most 2 × this + 5 s (8 s). */
const TIMEOUT_MS = 1500;
/** EFI_RESEND_AFTER_SECONDS below: two sends of one withdrawal are at least this far apart. */
const RESEND_AFTER_S = 5;

/**
 * Review of issue 38 (c0544ed): the money properties of the Efí payout adapter against the simulator,
 * each in the scenario that breaks it (or, for the guards, the property worth keeping).
 */
describe('Payouts through Efí: review of issue 38', () => {
  jest.setTimeout(90_000);
  let certs: PixCertificates;
  let psp: ApiPixSimulator;
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    certs = await makeCertificates();
    psp = await ApiPixSimulator.start({
      certs,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      receiverKey: RECEIVER_KEY,
      efi: {
        keyOwners: {
          [OWN_KEY]: { nome: 'Loja Teste', cpf: SELLER_CPF },
          [DENIED_KEY]: { nome: 'Loja Teste', cpf: SELLER_CPF, denied: true },
          'alguem@example.com': { nome: 'Outra Pessoa', cpf: '11144477735' },
        },
      },
    });
    receiver = await Receiver.start();
    t = await gateway(PREFIX);
  });

  /** The gateway on its own port, its sends' idEnvio starting with `prefix`. */
  async function gateway(prefix: string): Promise<TestApp> {
    const port = await freePort();
    const app = await startApp({
      ...psp.gatewayEnv(`http://127.0.0.1:${port}/psp/notifications/${randomBytes(16).toString('hex')}`),
      PAYOUT_PROVIDER: 'efi',
      API_PIX_RECONCILE_SECONDS: '3600',
      API_PIX_TIMEOUT_MS: String(TIMEOUT_MS),
      EFI_RESEND_AFTER_SECONDS: String(RESEND_AFTER_S),
      EFI_SEND_ID_PREFIX: prefix,
      PROVIDER_RECOVERY_AFTER_SECONDS: '1',
      SANDBOX_CLOCK_MOVES_REAL_RECORDS: 'true',
      OUTBOX_POLL_MS: '100',
      POSTBACK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    await app.app.listen(port, '127.0.0.1');
    await eventually(async () => psp.webhookUrl(RECEIVER_KEY), (url) => url?.includes(`:${port}/`) === true, 'the webhook registration');
    return app;
  }

  afterAll(async () => {
    await t.close();
    await receiver.close();
    await psp.close();
  });

  async function fundedSeller(cents: number): Promise<TestSeller> {
    const seller = await createSeller(t, { document: { type: 'cpf', number: SELLER_CPF } });
    await t.http.patch(`/admin/sellers/${seller.id}`).set(adminHeaders).send({ fees: { pixPercentBps: 0, pixFixedCents: 0 } }).expect(200);
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(saleBody('PIX', { amount: cents })).expect(201)).body.sale as { id: number };
    const txid = (await t.http.get(`/api/transactions/${sale.id}`).set(seller.headers).expect(200)).body.externalTransactionId as string;
    await psp.pay(txid);
    await eventually(() => balanceOf(t, seller), (balance) => balance.available === cents, 'the sale paid');
    return seller;
  }

  const withdraw = async (seller: TestSeller, amount: number, pixKey = OWN_KEY) =>
    (await t.http.post('/api/public/cashout').set(seller.headers).send({ amount, pixKey, pixKeyType: 'EMAIL' }).expect(201)).body as { id: number; status: string };
  const row = async (id: number) =>
    (await t.db.query(`SELECT status, external_id, failure_reason, provider_amount_cents, net_amount_cents FROM withdrawals WHERE id = $1`, [id]))[0] as {
      status: string;
      external_id: string | null;
      failure_reason: string | null;
      provider_amount_cents: string | null;
      net_amount_cents: string;
    };
  const sendIdOf = (id: number) => `${PREFIX}${id}`;
  const runJanitor = (seller: TestSeller) => t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({}).expect(200);
  /** The id the next withdrawal will get (the tests of this file create them one at a time). */
  const nextWithdrawalId = async () => {
    const [{ seq }] = await t.db.query(`SELECT pg_get_serial_sequence('withdrawals', 'id') AS seq`);
    const [{ last_value: last, is_called: called }] = await t.db.query(`SELECT last_value, is_called FROM ${seq as string}`);
    return called ? Number(last) + 1 : Number(last);
  };
  /** The janitor run every 500 ms for `ms`, then the withdrawal's row. */
  const janitorFor = async (seller: TestSeller, id: number, ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      await runJanitor(seller);
      await sleep(500);
    }
    return row(id);
  };

  it('a send slot is given back after a send that timed out: the next withdrawal is sent at once, not after the slot’s 8 s lease', async () => {
    const seller = await fundedSeller(30_000);
    psp.efi.holdAnswerNextSend(1, TIMEOUT_MS + 1_000);
    const first = await withdraw(seller, 100);
    await eventually(async () => psp.efi.sendRequests(sendIdOf(first.id)).length, (n) => n >= 1, 'the first send', 15_000);
    await sleep(TIMEOUT_MS + 500);
    const started = Date.now();
    const second = await withdraw(seller, 100);
    await eventually(() => row(second.id), (r) => r.status === 'PROCESSING', 'the second withdrawal sent', 8_000);
    expect(Date.now() - started).toBeLessThan(6_000);
    // And the first is found by its idEnvio (sent once), never sent under another id.
    await eventually(
      async () => {
        await runJanitor(seller);
        return (await row(first.id)).status;
      },
      (status) => status === 'PROCESSING',
      'the first found by its look-up',
    );
    expect(psp.efi.allSends().filter((s) => s.idEnvio === sendIdOf(first.id))).toHaveLength(1);
  });

  it('a send already under the withdrawal’s idEnvio that is not its own (another key, a gateway sharing the account or a reset sequence) is not adopted as the withdrawal’s payment', async () => {
    const seller = await fundedSeller(30_000);
    const id = await nextWithdrawalId();
    // Efí already has a send under GWSAQUE<id>, of the same net amount, paid to someone else's key.
    await psp.efi.registerUnknownSend({ idEnvio: sendIdOf(id), valor: '98.00', status: 'REALIZADO', favorecido: { chave: 'alguem@example.com' }, notify: 'never' });
    const created = await withdraw(seller, 100);
    expect(created.id).toBe(id);
    const after = await janitorFor(seller, id, 6_000);
    // Nothing reached the seller's key: the withdrawal cannot be COMPLETED (its money debited) on another's Pix.
    expect(psp.efi.allSends().filter((s) => s.idEnvio === sendIdOf(id)).map((s) => (s.favorecido as { chave?: string }).chave)).toEqual(['alguem@example.com']);
    expect(after.status).not.toBe('COMPLETED');
  });

  it('reconciliation with the list as a bare array (efi-pix-envio.md §4) reads every page: 1001 sends the gateway never made are 1001 SEND_UNKNOWN', async () => {
    const from = new Date(Date.now() - 3 * 86_400_000);
    const to = new Date(from.getTime() + 3_600_000);
    psp.efi.configure({ listShape: 'array' });
    try {
      for (let i = 0; i < 1001; i += 1) {
        await psp.efi.registerUnknownSend({ valor: '1.00', status: 'REALIZADO', at: new Date(from.getTime() + 1_000 + i), notify: 'never' });
      }
      const report = (await t.http.get('/admin/reconciliation').set(adminHeaders).query({ from: from.toISOString(), to: to.toISOString() }).expect(200)).body as {
        differences: Array<{ kind: string }>;
      };
      expect(report.differences.filter((d) => d.kind === 'SEND_UNKNOWN')).toHaveLength(1001);
    } finally {
      psp.efi.configure({ listShape: 'envelope' });
    }
  });

  it('a send refused while an earlier send of the withdrawal is still on its way at Efí is not its fate: the withdrawal is never FAILED, it ends COMPLETED, paid once', async () => {
    const seller = await fundedSeller(30_000);
    const id = await nextWithdrawalId();
    const only = { path: new RegExp(`/gn/pix/${sendIdOf(id)}$`) };
    // The first send reaches Efí after the client gave up on it (handled 3 s later); the first send of
    // this withdrawal Efí handles is refused: a retry made meanwhile (then the first is registered after
    // it), or, when no send is made before the first is handled, the first itself (then the next, made
    // once the look-up finds nothing EFI_RESEND_AFTER_SECONDS later, is paid).
    psp.efi.delayNextSend(1, 3_000, only);
    psp.efi.refuseNextSend(1, 'pagamento_negado', only);
    const created = await withdraw(seller, 100);
    expect(created.id).toBe(id);
    const seen = new Set<string>();
    const until = Date.now() + (RESEND_AFTER_S + 3) * 1000;
    while (Date.now() < until) {
      await runJanitor(seller);
      seen.add((await row(id)).status);
      await sleep(400);
    }
    expect(seen.has('FAILED')).toBe(false);
    await eventually(
      async () => {
        await runJanitor(seller);
        return row(id);
      },
      (r) => r.status === 'PROCESSING',
      'the withdrawal sent',
      15_000,
    );
    await psp.efi.settleSend(sendIdOf(id), 'REALIZADO');
    await eventually(() => row(id), (r) => r.status === 'COMPLETED', 'the withdrawal completed');
    expect(psp.efi.allSends().filter((send) => send.idEnvio === sendIdOf(id))).toHaveLength(1);
    expect(await balanceOf(t, seller)).toEqual({ available: 30_000 - 10_000, blocked: 0, total: 30_000 - 10_000 });
  });

  it('Efí keeping the idEnvio of a send it refused, with its look-up failing at the refusal: the withdrawal ends FAILED with its money back, not PENDING forever on 409s', async () => {
    const seller = await fundedSeller(30_000);
    const id = await nextWithdrawalId();
    psp.efi.configure({ refusedSendConsumesId: true });
    try {
      // Refused (a key Efí does not know), and the look-ups that follow fail for a while (the client's three tries, the janitor's).
      psp.failNext(9, { method: 'GET', path: new RegExp(`/id-envio/${sendIdOf(id)}$`), status: 500 });
      const created = await (await t.http.post('/api/public/cashout').set(seller.headers).send({ amount: 100, pixKey: 'ninguem@example.com', pixKeyType: 'EMAIL' }).expect(201)).body;
      expect(created.id).toBe(id);
      const after = await eventually(
        async () => {
          await runJanitor(seller);
          return row(id);
        },
        (r) => r.status === 'FAILED',
        'the withdrawal failed',
        (RESEND_AFTER_S + 15) * 1000,
      );
      expect(after.failure_reason).toMatch(/id_envio_duplicado/);
      expect(psp.efi.send(sendIdOf(id))).toBeUndefined();
      expect(await balanceOf(t, seller)).toEqual({ available: 30_000, blocked: 0, total: 30_000 });
    } finally {
      psp.efi.configure({ refusedSendConsumesId: false });
    }
  });

  // Last: it restarts the gateway.
  it('a send whose answer was lost, then EFI_SEND_ID_PREFIX changed: the withdrawal is looked up and settled under the idEnvio it was sent with, never sent again under a new one', async () => {
    const seller = await fundedSeller(30_000);
    const id = await nextWithdrawalId();
    psp.efi.dropAnswerNextSend(3, { path: new RegExp(`/gn/pix/${sendIdOf(id)}$`) });
    const created = await withdraw(seller, 100);
    expect(created.id).toBe(id);
    await eventually(async () => psp.efi.send(sendIdOf(id)), (send) => send !== undefined, 'the send registered at Efí');
    await t.close();
    t = await gateway('GWNOVO');
    await eventually(
      async () => {
        await runJanitor(seller);
        return row(id);
      },
      (r) => r.status === 'PROCESSING',
      'the withdrawal found under its first idEnvio',
      20_000,
    );
    await psp.efi.settleSend(sendIdOf(id), 'REALIZADO');
    await eventually(() => row(id), (r) => r.status === 'COMPLETED', 'the withdrawal completed');
    expect(psp.efi.allSends().filter((send) => send.idEnvio.endsWith(String(id)) && send.idEnvio.startsWith('GW')).map((send) => send.idEnvio)).toEqual([sendIdOf(id)]);
    expect(await balanceOf(t, seller)).toEqual({ available: 30_000 - 10_000, blocked: 0, total: 30_000 - 10_000 });
  });
});
