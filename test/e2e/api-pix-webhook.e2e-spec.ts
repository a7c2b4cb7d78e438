import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { ApiPixSimulator } from './setup/api-pix';
import { adminHeaders, createSeller, TestSeller } from './setup/factories';
import { eventually } from './setup/processes';
import { GatewayOnPsp, startGatewayOnPsp } from './setup/psp-gateway';
import { saleBody } from './setup/sales';
import { TestApp } from './setup/test-app';

/** The most ids the inbox of each source holds in this test's app (API_PIX_INBOX_MAX). */
const INBOX_MAX = 100;
const GET_PIX = /^\/v2\/pix\/[A-Za-z0-9]{32}$/;

/**
 * Issue 35, M4: what one request to the PSP webhook may cost. Its secret path segment never reaches a log
 * line or a metric label; a notification names at most 100 ids; each inbox holds at most API_PIX_INBOX_MAX
 * ids (a notification beyond it is answered 503, which the PSP sends again); a real Pix notified after a
 * flood of forged ids is applied without waiting for the flood; /rec and /cobr are served only with Pix
 * Automático configured.
 */
describe('The PSP webhook: one request stays cheap (issue 35, M4)', () => {
  let gateway: GatewayOnPsp;
  let psp: ApiPixSimulator;
  let t: TestApp;
  let seller: TestSeller;
  let secret: string;
  let webhookPath: string;
  let logFile: string;

  beforeAll(async () => {
    logFile = process.env.LOG_FILE as string;
    gateway = await startGatewayOnPsp({ API_PIX_RECEIVER_ACCOUNT: undefined, API_PIX_INBOX_MAX: String(INBOX_MAX) });
    ({ psp, t, secret, webhookPath } = gateway);
    seller = await createSeller(t);
    await eventually(async () => psp.webhookUrl(gateway.receiverKey), (url) => url !== undefined, 'the webhook registration');
  });

  afterAll(() => gateway.close());

  afterEach(() => {
    expect(psp.violations).toEqual([]);
  });

  const createPixSale = async (amount: number) => {
    const response = await t.http.post('/api/sales').set(seller.headers).send(saleBody('PIX', { amount })).expect(201);
    return response.body.sale as { id: number };
  };
  const transaction = async (id: number) => (await t.http.get(`/api/transactions/${id}`).set(seller.headers).expect(200)).body;
  const forgedIds = (count: number) => Array.from({ length: count }, () => randomBytes(16).toString('hex'));
  const waiting = async (ids: string[]) => (await t.db.query(`SELECT count(*)::int AS n FROM provider_inbox WHERE kind = 'pix' AND object_id = ANY($1::varchar[])`, [ids]))[0].n as number;
  const logText = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');

  it('never writes the secret path segment in a log line or a metric label', async () => {
    const sale = await createPixSale(3100);
    await psp.pay((await transaction(sale.id)).externalTransactionId, { notify: 'once' });
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'PAGO', 'the notified Pix applied');
    // A forged id (a warning when checked), a body that is not a notification (400), a path under the secret that is not served.
    const answers = [
      await t.http.post(`${webhookPath}/pix`).send({ pix: [{ endToEndId: forgedIds(1)[0] }] }).expect(200),
      await t.http.post(`${webhookPath}/pix`).send({ pix: 'nothing' }).expect(400),
      await t.http.post(`${webhookPath}/other`).send({}).expect(404),
    ];

    const metrics = (await t.http.get('/metrics').set(adminHeaders).expect(200)).text;
    expect(metrics).not.toContain(secret);
    expect(metrics).toMatch(/http_request_duration_seconds_count\{method="POST",route="\/psp\/notifications\/:secret\/pix",status="200"\} [1-9]/);

    // Every app of the run logs into one file, in batches (at least every 200 ms): this app's request lines are found by their ids.
    const ids = answers.map((answer) => answer.headers['x-request-id'] as string);
    const lines = await eventually(
      async () => logText().split('\n').filter((line) => line.trim() !== ''),
      (all) => ids.every((id) => all.some((line) => line.includes(`"id":"${id}"`))),
      'the request lines in the log file',
    );
    expect(lines.filter((line) => line.includes(secret))).toEqual([]);
    const logged = ids.map((id) => JSON.parse(lines.find((line) => line.includes(`"id":"${id}"`)) as string) as { req: { method: string; url: string }; res: { statusCode: number } });
    expect(logged.map((line) => `${line.req.method} ${line.req.url} ${line.res.statusCode}`)).toEqual([
      'POST /psp/notifications/[redacted]/pix 200',
      'POST /psp/notifications/[redacted]/pix 400',
      'POST /psp/notifications/[redacted]/other 404',
    ]);
    expect(lines.some((line) => line.includes('Webhooks registered with the provider') && line.includes('"paths":["/psp/notifications/:secret/pix"]'))).toBe(true);
  });

  it('refuses a notification naming more than 100 Pix with 400 and keeps none of them', async () => {
    const ids = forgedIds(101);
    const answer = await t.http.post(`${webhookPath}/pix`).send({ pix: ids.map((endToEndId) => ({ endToEndId })) }).expect(400);
    expect(answer.body).toMatchObject({ status: 400, title: 'Not a Pix notification' });
    expect(await waiting(ids)).toBe(0);
  });

  it('does not serve /rec and /cobr without Pix Automático configured: 404, nothing kept', async () => {
    const idRec = `RR12345678${new Date().toISOString().slice(0, 10).replace(/-/g, '')}${randomBytes(6).toString('hex').slice(0, 11)}`;
    const txid = `GWREC${randomBytes(11).toString('hex')}`;
    await t.http.post(`${webhookPath}/rec`).send({ recs: [{ idRec, status: 'APROVADA' }] }).expect(404);
    await t.http.post(`${webhookPath}/cobr`).send({ cobsr: [{ txid, idRec }] }).expect(404);
    const kept = await t.db.query(`SELECT count(*)::int AS n FROM provider_inbox WHERE kind IN ('rec', 'cobr') AND object_id = ANY($1::varchar[])`, [[idRec, txid]]);
    expect(kept[0].n).toBe(0);
  });

  it('holds at most API_PIX_INBOX_MAX forged ids (503 beyond), and a real Pix notified after the flood is applied at once', async () => {
    // Each look-up of a Pix at the PSP takes 100 ms: the 100 forged ids the inbox holds take 10 s in turn,
    // one batch of them (50) 5 s; 500 forged ids would hold it 50 s.
    psp.delayNext(2 * INBOX_MAX, 100, { path: GET_PIX, method: 'GET' });
    const floods = Array.from({ length: 5 }, () => forgedIds(INBOX_MAX));
    const answers = await Promise.all(floods.map((ids) => t.http.post(`${webhookPath}/pix`).send({ pix: ids.map((endToEndId) => ({ endToEndId })) })));
    const accepted = floods.filter((_, i) => answers[i].status === 200).flat();
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 503, 503, 503, 503]);
    for (const answer of answers.filter((a) => a.status === 503)) expect(answer.body).toMatchObject({ status: 503, title: 'Try again later' });
    expect(await waiting(floods.flat())).toBeLessThanOrEqual(INBOX_MAX);

    const sale = await createPixSale(4200);
    const pix = await psp.pay((await transaction(sale.id)).externalTransactionId, { notify: 'once' });
    // Newest first: at most the batch under way ahead of it (5 s), never the whole flood (10 s).
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'PAGO', 'the real Pix applied', 7500);
    const [receipt] = await t.db.query(`SELECT outcome FROM pix_receipts WHERE end_to_end_id = $1`, [pix.endToEndId]);
    expect(receipt.outcome).toBe('APPLIED');

    // The PSP was asked about each forged id the inbox accepted, once, and about none of those refused.
    await eventually(() => waiting(floods.flat()), (n) => n === 0, 'the forged ids checked', 30_000);
    const flooded = new Set(floods.flat());
    const lookedUp = psp.requests.filter((call) => call.method === 'GET' && GET_PIX.test(call.path) && flooded.has(call.path.slice('/v2/pix/'.length)));
    expect(accepted).toHaveLength(INBOX_MAX);
    expect(lookedUp.map((call) => call.path.slice('/v2/pix/'.length)).sort()).toEqual([...accepted].sort());
  }, 60_000);

  it('reconciliation applies a Pix whose notification waits unchecked in the inbox for over a minute', async () => {
    const sale = await createPixSale(5300);
    // Reconciliation held while the scene is set (the lease an instance takes), so that it cannot apply the Pix first.
    await t.db.query(`UPDATE pix_reconciliation_cursor SET claimed_at = now() WHERE id = 1`);
    const pix = await psp.pay((await transaction(sale.id)).externalTransactionId, { notify: 'never' });
    // Kept two minutes ago, never checked: claimed by an instance that hangs (its lease still runs).
    await t.db.query(`INSERT INTO provider_inbox (provider, kind, object_id, received_at, next_attempt_at, claimed_at) VALUES ('api-pix', 'pix', $1, now() - interval '2 minutes', now() - interval '2 minutes', now())`, [
      pix.endToEndId,
    ]);
    await t.db.query(`UPDATE pix_reconciliation_cursor SET claimed_at = NULL WHERE id = 1`);
    await eventually(() => transaction(sale.id), (tx) => tx.status === 'PAGO', 'reconciliation to apply the Pix', 8000);
    const [receipt] = await t.db.query(`SELECT outcome, seen_by FROM pix_receipts WHERE end_to_end_id = $1`, [pix.endToEndId]);
    expect(receipt).toEqual({ outcome: 'APPLIED', seen_by: 'RECONCILIATION' });
    await t.db.query(`DELETE FROM provider_inbox WHERE kind = 'pix' AND object_id = $1`, [pix.endToEndId]);
  });
});

describe('The PSP webhook with Pix Automático configured (issue 35, M4)', () => {
  let gateway: GatewayOnPsp;
  let psp: ApiPixSimulator;
  let t: TestApp;
  let webhookPath: string;

  beforeAll(async () => {
    gateway = await startGatewayOnPsp({ API_PIX_RECEIVER_ACCOUNT: '12345678', API_PIX_RECEIVER_ACCOUNT_TYPE: 'CORRENTE', API_PIX_INBOX_MAX: String(INBOX_MAX) });
    ({ psp, t, webhookPath } = gateway);
    await eventually(async () => [psp.automaticWebhookUrl('rec'), psp.automaticWebhookUrl('cobr')], (urls) => urls.every(Boolean), 'the Pix Automático webhooks registered');
  });

  afterAll(() => gateway.close());

  afterEach(() => {
    expect(psp.violations).toEqual([]);
  });

  const recurrenceId = () => `RR12345678${new Date().toISOString().slice(0, 10).replace(/-/g, '')}${randomBytes(6).toString('hex').slice(0, 11)}`;
  const kept = async (ids: string[]) => (await t.db.query(`SELECT count(*)::int AS n FROM provider_inbox WHERE kind IN ('rec', 'cobr') AND object_id = ANY($1::varchar[])`, [ids]))[0].n as number;

  it('bounds each inbox on its own: /rec full answers 503 and keeps nothing new, an id already waiting is taken again, /cobr still takes its own', async () => {
    // The /rec inbox full: API_PIX_INBOX_MAX recurrences waiting, due in an hour (the worker leaves them alone).
    const waitingIds = Array.from({ length: INBOX_MAX }, recurrenceId);
    await t.db.query(`INSERT INTO provider_inbox (provider, kind, object_id, next_attempt_at) SELECT 'api-pix', 'rec', unnest($1::varchar[]), now() + interval '1 hour'`, [waitingIds]);
    try {
      const fresh = recurrenceId();
      const refused = await t.http.post(`${webhookPath}/rec`).send({ recs: [{ idRec: fresh, status: 'APROVADA' }] }).expect(503);
      expect(refused.body).toMatchObject({ status: 503, title: 'Try again later' });
      expect(refused.headers['retry-after']).toBe('60');
      expect(await kept([fresh])).toBe(0);
      // A notification naming only recurrences already waiting adds nothing: taken (200), made due.
      await t.http.post(`${webhookPath}/rec`).send({ recs: [{ idRec: waitingIds[0], status: 'APROVADA' }] }).expect(200);
      const txid = `GWREC${randomBytes(11).toString('hex')}`;
      await t.http.post(`${webhookPath}/cobr`).send({ cobsr: [{ txid, idRec: fresh }] }).expect(200);
    } finally {
      await t.db.query(`DELETE FROM provider_inbox WHERE kind IN ('rec', 'cobr') AND object_id = ANY($1::varchar[])`, [waitingIds]);
    }
  });
});
