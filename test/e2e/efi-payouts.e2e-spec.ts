import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiPixSimulator, makeCertificates, PixCertificates } from './setup/api-pix';
import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { eventually, freePort } from './setup/processes';
import { Receiver } from './setup/receiver';
import { balanceOf, saleBody } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

const RECEIVER_KEY = randomUUID();
const CLIENT_ID = 'gateway-efi-e2e';
const CLIENT_SECRET = randomBytes(16).toString('hex');
const PREFIX = 'GWSAQUE';

/** The seller's own CPF, the keys it owns and one it does not. */
const SELLER_CPF = '52998224725';
const OWN_KEY = 'loja@example.com';
const SOMEONE_ELSES_KEY = 'outra@example.com';
const DENIED_KEY = 'negado@example.com';

/**
 * Issue 38: withdrawals paid by Pix through Efí's send API (PAYOUT_PROVIDER=efi), against a simulator of
 * Efí on the API Pix simulator's host, OAuth client and client certificate (test/e2e/setup/api-pix/efi-send.ts),
 * which judges every request the gateway sends against efi-pix-envio.schemas.json.
 */
describe('Payouts through Efí (issue 38)', () => {
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
          [SELLER_CPF]: { nome: 'Loja Teste', cpf: SELLER_CPF },
          [SOMEONE_ELSES_KEY]: { nome: 'Outra Pessoa', cpf: '11144477735' },
          [DENIED_KEY]: { nome: 'Loja Teste', cpf: SELLER_CPF, denied: true },
        },
      },
    });
    receiver = await Receiver.start();
    const port = await freePort();
    t = await startApp({
      ...psp.gatewayEnv(`http://127.0.0.1:${port}/psp/notifications/${randomBytes(16).toString('hex')}`),
      PAYOUT_PROVIDER: 'efi',
      API_PIX_RECONCILE_SECONDS: '3600',
      API_PIX_TIMEOUT_MS: '1500',
      EFI_RESEND_AFTER_SECONDS: '2',
      EFI_SEND_ID_PREFIX: PREFIX,
      PROVIDER_RECOVERY_AFTER_SECONDS: '1',
      SANDBOX_CLOCK_MOVES_REAL_RECORDS: 'true',
      OUTBOX_POLL_MS: '100',
      POSTBACK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    await t.app.listen(port, '127.0.0.1');
    await eventually(async () => psp.webhookUrl(RECEIVER_KEY), (url) => url !== undefined, 'the webhook registration');
  });

  afterAll(async () => {
    await t.close();
    await receiver.close();
    await psp.close();
  });

  afterEach(() => {
    // Every request the gateway sent and every answer the simulator gave, against Efí's schemas.
    expect(psp.violations).toEqual([]);
  });

  /** A seller with its CPF on record, a withdrawal webhook, and `cents` available (a paid PIX sale at the PSP with no fee). */
  async function fundedSeller(cents: number, document: { type: 'cpf'; number: string } | null = { type: 'cpf', number: SELLER_CPF }): Promise<TestSeller> {
    const seller = await createSeller(t, document ? { document } : {});
    await t.http.patch(`/admin/sellers/${seller.id}`).set(adminHeaders).send({ fees: { pixPercentBps: 0, pixFixedCents: 0 } }).expect(200);
    await t.http.post(`/admin/sellers/${seller.id}/webhooks`).set(adminHeaders).send({ url: `${receiver.url}/efi/${seller.id}`, type: 'WITHDRAWAL' }).expect(201);
    const sale = (await t.http.post('/api/sales').set(seller.headers).send(saleBody('PIX', { amount: cents })).expect(201)).body.sale as { id: number };
    const txid = (await t.http.get(`/api/transactions/${sale.id}`).set(seller.headers).expect(200)).body.externalTransactionId as string;
    await psp.pay(txid);
    await eventually(() => balanceOf(t, seller), (balance) => balance.available === cents, 'the sale paid');
    return seller;
  }

  const withdraw = async (seller: TestSeller, amount: number, pixKey = OWN_KEY) =>
    (await t.http.post('/api/public/cashout').set(seller.headers).send({ amount, pixKey, pixKeyType: pixKey.includes('@') ? 'EMAIL' : 'CPF' }).expect(201)).body as { id: number; status: string };
  const lookup = async (seller: TestSeller, id: number) => (await t.http.get(`/api/public/cashout/${id}`).set(seller.headers).expect(200)).body;
  const row = async (id: number) => (await t.db.query(`SELECT status, external_id, failure_reason, provider_amount_cents FROM withdrawals WHERE id = $1`, [id]))[0];
  const webhooksOf = (seller: TestSeller, id: number) => receiver.received.filter((r) => r.path === `/efi/${seller.id}` && r.body.id === id).map((r) => r.body.status);
  const sendIdOf = (id: number) => `${PREFIX}${id}`;
  const postingsOf = async (id: number) =>
    (await t.db.query(`SELECT kind FROM ledger_postings WHERE reference_type = 'WITHDRAWAL' AND reference_id = $1 ORDER BY id`, [id])).map((p: { kind: string }) => p.kind);
  const runJanitor = (seller: TestSeller) => t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send({}).expect(200);

  it('pays a withdrawal: sent from the receiving key to the seller’s key with the seller’s CPF, PROCESSING, then COMPLETED once a look-up confirms the PSP’s REALIZADO', async () => {
    const seller = await fundedSeller(50_000);
    const created = await withdraw(seller, 150.5);
    expect(created.status).toBe('PENDING');
    await eventually(() => lookup(seller, created.id), (w) => w.status === 'PROCESSING', 'the withdrawal sent');
    const send = psp.efi.send(sendIdOf(created.id));
    expect(send).toMatchObject({ idEnvio: sendIdOf(created.id), valor: '148.50', status: 'EM_PROCESSAMENTO' });
    const [request] = psp.efi.sendRequests(sendIdOf(created.id));
    expect(request.body).toEqual({ valor: '148.50', pagador: { chave: RECEIVER_KEY, infoPagador: expect.any(String) }, favorecido: { chave: OWN_KEY, cpf: SELLER_CPF } });
    expect(await balanceOf(t, seller)).toEqual({ available: 50_000 - 15_050, blocked: 15_050, total: 50_000 });

    await psp.efi.settleSend(sendIdOf(created.id), 'REALIZADO');
    const done = await eventually(() => lookup(seller, created.id), (w) => w.status === 'COMPLETED', 'the withdrawal completed');
    expect(done.status).toBe('COMPLETED');
    expect(await row(created.id)).toMatchObject({ status: 'COMPLETED', external_id: send?.endToEndId, failure_reason: null, provider_amount_cents: '14850' });
    expect(await balanceOf(t, seller)).toEqual({ available: 50_000 - 15_050, blocked: 0, total: 50_000 - 15_050 });
    await eventually(async () => webhooksOf(seller, created.id), (statuses) => statuses.length === 2, 'both webhooks');
    expect(webhooksOf(seller, created.id)).toEqual(['PROCESSING', 'COMPLETED']);
    const completed = receiver.received.find((r) => r.path === `/efi/${seller.id}` && r.body.status === 'COMPLETED');
    expect(completed?.body).toMatchObject({ externalId: send?.endToEndId, processedAt: expect.stringMatching(/Z$/) });
    // Held, then out of the PSP's holdings into transit, then out of transit (each a balanced posting).
    expect(await postingsOf(created.id)).toEqual(['WITHDRAWAL_REQUESTED', 'WITHDRAWAL_SENT', 'WITHDRAWAL_COMPLETED']);
    expect(psp.efi.sendCountsByIdEnvio()[sendIdOf(created.id)]).toBe(1);
  });

  it('a send NAO_REALIZADO by the PSP: FAILED with the PSP’s reason, announced REJECTED, the amount back in available', async () => {
    const seller = await fundedSeller(30_000);
    const created = await withdraw(seller, 100);
    await eventually(() => lookup(seller, created.id), (w) => w.status === 'PROCESSING', 'the withdrawal sent');
    await psp.efi.settleSend(sendIdOf(created.id), 'NAO_REALIZADO', { codigo: 'AC03', motivo: 'Número da agência ou conta inválido' });
    await eventually(() => lookup(seller, created.id), (w) => w.status === 'FAILED', 'the withdrawal failed');
    expect((await row(created.id)).failure_reason).toMatch(/AC03/);
    expect(await balanceOf(t, seller)).toEqual({ available: 30_000, blocked: 0, total: 30_000 });
    await eventually(async () => webhooksOf(seller, created.id), (statuses) => statuses.includes('REJECTED'), 'the rejection webhook');
    expect(webhooksOf(seller, created.id)).toEqual(['PROCESSING', 'REJECTED']);
  });

  it.each([
    ['a key of another person’s document', SOMEONE_ELSES_KEY, /chave_nao_pertence_ao_documento/],
    ['a send Efí’s analysis denies', DENIED_KEY, /pagamento_negado/],
  ])('refused by the send itself (%s): FAILED with Efí’s reason, REJECTED, money back, nothing sent', async (_name, key, reason) => {
    const seller = await fundedSeller(30_000);
    const created = await withdraw(seller, 100, key);
    await eventually(() => lookup(seller, created.id), (w) => w.status === 'FAILED', 'the withdrawal failed');
    expect((await row(created.id)).failure_reason).toMatch(reason);
    expect(psp.efi.send(sendIdOf(created.id))).toBeUndefined();
    expect(await balanceOf(t, seller)).toEqual({ available: 30_000, blocked: 0, total: 30_000 });
    await eventually(async () => webhooksOf(seller, created.id), (statuses) => statuses.length === 1, 'the rejection webhook');
    expect(webhooksOf(seller, created.id)).toEqual(['REJECTED']);
  });

  it('a seller without a document on record cannot withdraw under efi: 403 TRANSFER_NOT_ALLOWED saying why, nothing held', async () => {
    const seller = await fundedSeller(30_000, null);
    const response = await t.http.post('/api/public/cashout').set(seller.headers).send({ amount: 100, pixKey: OWN_KEY, pixKeyType: 'EMAIL' }).expect(403);
    expect(response.body).toEqual({ errorType: 'TRANSFER_NOT_ALLOWED', message: expect.stringMatching(/own CPF or CNPJ/) });
    expect(await balanceOf(t, seller)).toEqual({ available: 30_000, blocked: 0, total: 30_000 });
  });

  it('20 withdrawals of one seller at once: each sent exactly once, under its own idEnvio, and each completed once', async () => {
    const seller = await fundedSeller(250_000);
    const created = await Promise.all(Array.from({ length: 20 }, () => withdraw(seller, 100)));
    const ids = created.map((w) => w.id);
    await eventually(async () => ids.map((id) => psp.efi.send(sendIdOf(id))?.status), (statuses) => statuses.every((s) => s === 'EM_PROCESSAMENTO'), 'every withdrawal sent', 30_000);
    for (const id of ids) await psp.efi.settleSend(sendIdOf(id), 'REALIZADO');
    await eventually(async () => Promise.all(ids.map((id) => row(id))), (rows) => rows.every((r) => r.status === 'COMPLETED'), 'every withdrawal completed', 30_000);
    // One send registered per withdrawal, each under its own idEnvio, none sent twice.
    expect(ids.map((id) => psp.efi.allSends().filter((send) => send.idEnvio === sendIdOf(id)).length)).toEqual(ids.map(() => 1));
    expect(ids.map((id) => psp.efi.sendRequests(sendIdOf(id)).filter((r) => r.status === 201).length)).toEqual(ids.map(() => 1));
    expect(await balanceOf(t, seller)).toEqual({ available: 250_000 - 20 * 10_000, blocked: 0, total: 250_000 - 20 * 10_000 });
  });

  it('a send whose answer was lost stays PENDING; the send is then found by its idEnvio (never a second send) and completes, paid once', async () => {
    const seller = await fundedSeller(30_000);
    psp.efi.dropAnswerNextSend(1);
    const created = await withdraw(seller, 100);
    await eventually(async () => psp.efi.send(sendIdOf(created.id)), (send) => send !== undefined, 'the send registered at the PSP');
    // The janitor asks Efí by idEnvio (it is never sent again before EFI_RESEND_AFTER_SECONDS, nor while the look-up finds it).
    await eventually(
      async () => {
        await runJanitor(seller);
        return (await row(created.id)).status;
      },
      (status) => status === 'PROCESSING',
      'the look-up',
      30_000,
    );
    expect(psp.efi.requests.some((r) => r.operation === 'lookup-id-envio' && r.idEnvio === sendIdOf(created.id) && r.status === 200)).toBe(true);
    await psp.efi.settleSend(sendIdOf(created.id), 'REALIZADO');
    await eventually(() => row(created.id), (r) => r.status === 'COMPLETED', 'the withdrawal completed');
    expect(psp.efi.allSends().filter((send) => send.idEnvio === sendIdOf(created.id))).toHaveLength(1);
    expect(await balanceOf(t, seller)).toEqual({ available: 30_000 - 10_000, blocked: 0, total: 30_000 - 10_000 });
  });

  it('a forged callback changes nothing: a made-up status on a real send, and a send that does not exist (counted)', async () => {
    const seller = await fundedSeller(30_000);
    const created = await withdraw(seller, 100);
    await eventually(() => row(created.id), (r) => r.status === 'PROCESSING', 'the withdrawal sent');
    const metric = async () => {
      const text = (await t.http.get('/metrics').set(adminHeaders).expect(200)).text;
      return Number(/pix_reconciliation_differences_total\{kind="FORGED_PAYOUT_NOTIFICATION"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const before = await metric();
    await psp.efi.forgeCallback({ idEnvio: sendIdOf(created.id), status: 'REALIZADO' });
    await psp.efi.forgeCallback({ idEnvio: sendIdOf(created.id + 1_000_000), status: 'REALIZADO' });
    await eventually(metric, (count) => count === before + 1, 'the forged notification counted');
    await sleep(500);
    expect((await row(created.id)).status).toBe('PROCESSING');
    expect(await balanceOf(t, seller)).toEqual({ available: 20_000, blocked: 10_000, total: 30_000 });
  });

  it('reconciliation lists each kind of difference between the Pix sent and the withdrawals', async () => {
    const seller = await fundedSeller(60_000);
    const from = new Date(Date.now() - 1000);
    const [altered, contradicted, forgotten] = [await withdraw(seller, 100), await withdraw(seller, 100), await withdraw(seller, 100)];
    for (const w of [altered, contradicted, forgotten]) {
      await eventually(() => row(w.id), (r) => r.status === 'PROCESSING', 'sent');
      await psp.efi.settleSend(sendIdOf(w.id), 'REALIZADO');
      await eventually(() => row(w.id), (r) => r.status === 'COMPLETED', 'completed');
    }
    const stranger = await psp.efi.registerUnknownSend({ valor: '12.34', status: 'REALIZADO', notify: 'never' });
    psp.efi.alterSend(sendIdOf(altered.id), { valor: '97.00' });
    psp.efi.alterSend(sendIdOf(contradicted.id), { status: 'NAO_REALIZADO' });
    // A withdrawal COMPLETED here that the PSP has no send of (written so only for this check).
    const [{ id: orphan }] = await t.db.query(
      `INSERT INTO withdrawals (seller_id, provider, status, amount_cents, fee_fixed_cents, fee_variable_cents, fee_total_cents, net_amount_cents, pix_key, pix_key_type, external_id, provider_amount_cents, processed_at)
       VALUES ($1, 'efi', 'COMPLETED', 10000, 0, 0, 0, 10000, $2, 'EMAIL', 'E00000000202611280000orphan0001', 10000, now()) RETURNING id`,
      [seller.id, OWN_KEY],
    );
    const to = new Date(Date.now() + 60_000);
    const report = (await t.http.get('/admin/reconciliation').set(adminHeaders).query({ from: from.toISOString(), to: to.toISOString() }).expect(200)).body;
    const kinds = (report.differences as Array<{ kind: string; withdrawalId: number | null; endToEndId: string | null }>).filter((d) => d.kind.includes('PAYOUT') || d.kind === 'SEND_UNKNOWN');
    expect(kinds).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'SEND_UNKNOWN', withdrawalId: null, amount: 1234, endToEndId: stranger.endToEndId }),
        expect.objectContaining({ kind: 'PAYOUT_AMOUNT_MISMATCH', withdrawalId: altered.id, amount: 9700 }),
        expect.objectContaining({ kind: 'PAYOUT_STATUS_MISMATCH', withdrawalId: contradicted.id }),
        expect.objectContaining({ kind: 'PAYOUT_NOT_AT_PSP', withdrawalId: orphan }),
      ]),
    );
    await t.db.query(`DELETE FROM withdrawal_status_changes WHERE withdrawal_id = $1`, [orphan]);
    await t.db.query(`DELETE FROM withdrawals WHERE id = $1`, [orphan]);
  });
});
