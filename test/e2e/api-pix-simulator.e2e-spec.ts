import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, Server } from 'node:http';
import { request } from 'node:https';
import { once } from 'node:events';
import { AddressInfo } from 'node:net';
import { hasError, isDynamicPix, parsePix } from 'pix-utils';
import { ApiPixSimulator, makeCertificates, PixCertificates, validateWebhookBody } from './setup/api-pix';

/**
 * The API Pix simulator against itself, through a bare https client holding the PSP's client certificate:
 * what the gateway's e2e tests will lean on (mTLS, tokens, charges, payments and their callbacks, paging,
 * refunds, faults) behaves as the BCB's document says, and its own answers never leave the document.
 */
const CLIENT_ID = 'gateway-client';
const CLIENT_SECRET = 'gateway-secret-0123456789';
const RECEIVER_KEY = '7d9f0335-8dcc-4054-9bf9-0dbd61d36906';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

interface CallOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  rawBody?: string;
  identity?: 'client' | 'stranger' | 'none';
}

let certs: PixCertificates;
let simulator: ApiPixSimulator;
let webhook: WebhookReceiver;

beforeAll(async () => {
  certs = await makeCertificates();
  simulator = await ApiPixSimulator.start({ certs, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, receiverKey: RECEIVER_KEY });
  webhook = await WebhookReceiver.start();
});

afterAll(async () => {
  await simulator.close();
  await webhook.close();
  await rm(certs.dir, { recursive: true, force: true });
});

afterEach(() => {
  expect(simulator.violations).toEqual([]);
});

/** One HTTPS request to the simulator with its own connection (no agent), so each call does a handshake. */
function call(method: string, url: string, options: CallOptions = {}): Promise<Reply> {
  const credentials = certificateOf(options.identity ?? 'client');
  const payload = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const headers: Record<string, string> = {
    ...(payload !== undefined && options.rawBody === undefined ? { 'Content-Type': 'application/json' } : {}),
    ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, headers, ca: readFileSync(certs.caFile), agent: false, ...credentials }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text ? JSON.parse(text) : {} });
      });
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

function certificateOf(identity: NonNullable<CallOptions['identity']>): { cert?: Buffer; key?: Buffer } {
  if (identity === 'none') return {};
  const [certFile, keyFile] = identity === 'client' ? [certs.clientCertFile, certs.clientKeyFile] : [certs.strangerCertFile, certs.strangerKeyFile];
  return { cert: readFileSync(certFile), key: readFileSync(keyFile) };
}

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
}

async function token(scope?: string): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
  const reply = await call('POST', simulator.tokenUrl, {
    rawBody: form.toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic(CLIENT_ID, CLIENT_SECRET) },
  });
  expect(reply.status).toBe(200);
  return reply.body.access_token as string;
}

let txidCounter = 0;
function newTxid(): string {
  txidCounter += 1;
  return `gatewaytxid${String(txidCounter).padStart(4, '0')}${Date.now()}`.slice(0, 35);
}

function cobBody(original = '123.45'): Record<string, unknown> {
  return { calendario: { expiracao: 3600 }, devedor: { cpf: '12345678909', nome: 'Fulano de Tal' }, valor: { original }, chave: RECEIVER_KEY, solicitacaoPagador: 'Pedido 1' };
}

async function createCob(accessToken: string, original = '123.45'): Promise<string> {
  const txid = newTxid();
  const reply = await call('PUT', `${simulator.baseUrl}/cob/${txid}`, { token: accessToken, body: cobBody(original) });
  expect(reply.status).toBe(201);
  return txid;
}

async function registerWebhook(accessToken: string): Promise<void> {
  const reply = await call('PUT', `${simulator.baseUrl}/webhook/${encodeURIComponent(RECEIVER_KEY)}`, { token: accessToken, body: { webhookUrl: `${webhook.url}/hook` } });
  expect(reply.status).toBe(200);
}

describe('mutual TLS', () => {
  it('ends the TLS handshake of a client without a certificate before any request reaches the PSP', async () => {
    const before = simulator.requests.length;
    await expect(call('POST', simulator.tokenUrl, { identity: 'none', rawBody: 'grant_type=client_credentials' })).rejects.toThrow(/certificate required/);
    expect(simulator.requests.length).toBe(before);
  });

  it('ends the TLS handshake of a client whose certificate another CA signed', async () => {
    const before = simulator.requests.length;
    await expect(call('POST', simulator.tokenUrl, { identity: 'stranger', rawBody: 'grant_type=client_credentials' })).rejects.toThrow(/socket hang up|unknown ca|ECONNRESET/);
    expect(simulator.requests.length).toBe(before);
  });
});

describe('POST /oauth/token', () => {
  const form = { 'Content-Type': 'application/x-www-form-urlencoded' };

  it('issues a bearer token to a client authenticated by HTTP Basic, with every scope of the document', async () => {
    const before = simulator.tokensIssued;
    const reply = await call('POST', simulator.tokenUrl, { rawBody: 'grant_type=client_credentials', headers: { ...form, Authorization: basic(CLIENT_ID, CLIENT_SECRET) } });
    expect(reply.status).toBe(200);
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(reply.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, scope: expect.stringContaining('cob.write') });
    expect(simulator.tokensIssued).toBe(before + 1);
  });

  it('issues a token to a client authenticated by client_id and client_secret in the form', async () => {
    const rawBody = new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString();
    const reply = await call('POST', simulator.tokenUrl, { rawBody, headers: form });
    expect(reply.status).toBe(200);
  });

  it('answers 401 invalid_client to a wrong secret', async () => {
    const reply = await call('POST', simulator.tokenUrl, { rawBody: 'grant_type=client_credentials', headers: { ...form, Authorization: basic(CLIENT_ID, 'wrong') } });
    expect(reply.status).toBe(401);
    expect(reply.body.error).toBe('invalid_client');
    expect(reply.headers['www-authenticate']).toMatch(/^Basic/);
  });

  it('answers 400 unsupported_grant_type to another grant', async () => {
    const reply = await call('POST', simulator.tokenUrl, { rawBody: 'grant_type=password&username=a&password=b', headers: { ...form, Authorization: basic(CLIENT_ID, CLIENT_SECRET) } });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('unsupported_grant_type');
  });

  it('answers 403 to a token without the scope the operation needs', async () => {
    const readOnly = await token('cob.read');
    const reply = await call('PUT', `${simulator.baseUrl}/cob/${newTxid()}`, { token: readOnly, body: cobBody() });
    expect(reply.status).toBe(403);
    expect(reply.body.type).toBe('https://pix.bcb.gov.br/api/v2/error/AcessoNegado');
  });
});

describe('charges (cob)', () => {
  it('creates an ATIVA charge with its location and a dynamic BR Code', async () => {
    const accessToken = await token();
    const txid = newTxid();
    const reply = await call('PUT', `${simulator.baseUrl}/cob/${txid}`, { token: accessToken, body: cobBody() });
    expect(reply.status).toBe(201);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.body).toMatchObject({ txid, revisao: 0, status: 'ATIVA', chave: RECEIVER_KEY, valor: { original: '123.45' }, devedor: { cpf: '12345678909', nome: 'Fulano de Tal' } });
    expect(reply.body.loc).toMatchObject({ tipoCob: 'cob', location: reply.body.location });
    const brCode = parsePix(reply.body.pixCopiaECola as string);
    expect(!hasError(brCode) && isDynamicPix(brCode) && brCode.url).toBe(reply.body.location);
  });

  it('answers a repeated identical PUT with the charge unchanged, and refuses changing a charge no longer ATIVA', async () => {
    const accessToken = await token();
    const txid = await createCob(accessToken);
    const again = await call('PUT', `${simulator.baseUrl}/cob/${txid}`, { token: accessToken, body: cobBody() });
    expect(again.status).toBe(201);
    expect(again.body.revisao).toBe(0);
    await simulator.pay(txid, { notify: 'never' });
    const changed = await call('PUT', `${simulator.baseUrl}/cob/${txid}`, { token: accessToken, body: cobBody('99.00') });
    expect(changed.status).toBe(400);
    expect(changed.headers['content-type']).toBe('application/problem+json');
    expect(changed.body.type).toBe('https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida');
  });

  it('removes an ATIVA charge with PATCH (a new revision) and refuses to remove a paid one', async () => {
    const accessToken = await token();
    const txid = await createCob(accessToken);
    const removal = { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' };
    const removed = await call('PATCH', `${simulator.baseUrl}/cob/${txid}`, { token: accessToken, body: removal });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR', revisao: 1 });
    await expect(simulator.pay(txid)).rejects.toThrow(/REMOVIDA_PELO_USUARIO_RECEBEDOR/);
    const paidTxid = await createCob(accessToken);
    await simulator.pay(paidTxid, { notify: 'never' });
    const refused = await call('PATCH', `${simulator.baseUrl}/cob/${paidTxid}`, { token: accessToken, body: removal });
    expect(refused.status).toBe(400);
  });

  it('refuses a charge for another key than the receiver\'s', async () => {
    const reply = await call('PUT', `${simulator.baseUrl}/cob/${newTxid()}`, { token: await token(), body: { ...cobBody(), chave: 'someone@example.com' } });
    expect(reply.status).toBe(400);
    expect(reply.body.violacoes).toEqual([expect.objectContaining({ propriedade: 'cob.chave' })]);
  });

  it('answers 400 with the violations to a body off the schema, and records them', async () => {
    const reply = await call('PUT', `${simulator.baseUrl}/cob/${newTxid()}`, { token: await token(), body: cobBody('10') });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      type: 'https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida',
      status: 400,
      violacoes: [expect.objectContaining({ propriedade: 'body.valor.original' })],
    });
    expect(simulator.violations).toEqual([expect.stringContaining('body.valor.original: must match pattern')]);
    simulator.clearViolations();
  });
});

describe('payments and the webhook', () => {
  it('concludes the charge and calls the webhook at {webhookUrl}/pix with a body valid against WebhookPixBody', async () => {
    const accessToken = await token();
    await registerWebhook(accessToken);
    const registered = await call('GET', `${simulator.baseUrl}/webhook/${encodeURIComponent(RECEIVER_KEY)}`, { token: accessToken });
    expect(registered.body).toMatchObject({ webhookUrl: `${webhook.url}/hook`, chave: RECEIVER_KEY });
    const txid = await createCob(accessToken);
    const pix = await simulator.pay(txid, { notify: 'twice' });
    expect(webhook.received.slice(-2).map((r) => r.path)).toEqual(['/hook/pix', '/hook/pix']);
    const delivered = webhook.received[webhook.received.length - 1].body;
    expect(validateWebhookBody(delivered)).toEqual([]);
    expect(delivered).toEqual({ pix: [pix] });
    expect(simulator.callbacks.slice(-2).map((c) => c.status)).toEqual([200, 200]);
    const cob = await call('GET', `${simulator.baseUrl}/cob/${txid}`, { token: accessToken });
    expect(cob.body).toMatchObject({ status: 'CONCLUIDA', pix: [{ endToEndId: pix.endToEndId, txid, valor: '123.45' }] });
    const byId = await call('GET', `${simulator.baseUrl}/pix/${pix.endToEndId}`, { token: accessToken });
    expect(byId.body).toEqual(pix);
  });

  it('leaves the charge ATIVA when the payer pays another amount, and still notifies the Pix', async () => {
    const accessToken = await token();
    await registerWebhook(accessToken);
    const txid = await createCob(accessToken, '50.00');
    const before = webhook.received.length;
    await simulator.pay(txid, { amount: '49.99' });
    expect(webhook.received.length).toBe(before + 1);
    expect(simulator.cob(txid)).toMatchObject({ status: 'ATIVA', pix: [{ valor: '49.99' }] });
  });

  it('answers 404 NaoEncontrado problems for an unknown Pix', async () => {
    const reply = await call('GET', `${simulator.baseUrl}/pix/E00000000202601010000abcdefghijk`, { token: await token() });
    expect(reply.status).toBe(404);
    expect(reply.body.type).toBe('https://pix.bcb.gov.br/api/v2/error/PixNaoEncontrado');
  });
});

describe('GET /pix', () => {
  it('pages the Pix received in [inicio, fim] by horario, oldest first', async () => {
    const accessToken = await token();
    const inicio = new Date().toISOString();
    const received = [];
    for (let i = 0; i < 5; i += 1) received.push(await simulator.receiveUnknownPix(`1${i}.00`, { notify: 'never' }));
    const fim = new Date().toISOString();
    simulator.setPageSize(2);
    const pages = [];
    for (let page = 0; page < 3; page += 1) {
      const query = new URLSearchParams({ inicio, fim, 'paginacao.paginaAtual': String(page) });
      const reply = await call('GET', `${simulator.baseUrl}/pix?${query}`, { token: accessToken });
      expect(reply.status).toBe(200);
      expect(reply.body.parametros).toMatchObject({ inicio, fim, paginacao: { paginaAtual: page, itensPorPagina: 2, quantidadeDePaginas: 3, quantidadeTotalDeItens: 5 } });
      pages.push(...(reply.body.pix as Array<{ endToEndId: string }>).map((pix) => pix.endToEndId));
    }
    simulator.setPageSize(100);
    expect(pages).toEqual(received.map((pix) => pix.endToEndId));
  });

  it('answers 400 PixConsultaInvalida when fim is before inicio', async () => {
    const query = new URLSearchParams({ inicio: '2026-01-02T00:00:00Z', fim: '2026-01-01T00:00:00Z' });
    const reply = await call('GET', `${simulator.baseUrl}/pix?${query}`, { token: await token() });
    expect(reply.status).toBe(400);
    expect(reply.body.type).toBe('https://pix.bcb.gov.br/api/v2/error/PixConsultaInvalida');
  });
});

describe('refunds (devolucao)', () => {
  async function paidPix(accessToken: string): Promise<string> {
    const txid = await createCob(accessToken, '100.00');
    return (await simulator.pay(txid, { notify: 'never' })).endToEndId;
  }

  it('creates a refund EM_PROCESSAMENTO, answers the same request again with it, and settles it DEVOLVIDO with a callback', async () => {
    const accessToken = await token();
    await registerWebhook(accessToken);
    const e2eid = await paidPix(accessToken);
    const url = `${simulator.baseUrl}/pix/${e2eid}/devolucao/refund1`;
    const created = await call('PUT', url, { token: accessToken, body: { valor: '30.00' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: 'refund1', valor: '30.00', status: 'EM_PROCESSAMENTO', horario: { solicitacao: expect.any(String) } });
    expect(created.body.rtrId).toMatch(/^D[0-9]{8}[0-9]{12}[a-zA-Z0-9]{11}$/);
    expect((await call('PUT', url, { token: accessToken, body: { valor: '30.00' } })).body).toEqual(created.body);
    expect((await call('PUT', url, { token: accessToken, body: { valor: '31.00' } })).status).toBe(400);
    const before = webhook.received.length;
    await simulator.settleRefunds('DEVOLVIDO');
    const settled = await call('GET', url, { token: accessToken });
    expect(settled.body).toMatchObject({ status: 'DEVOLVIDO', horario: { liquidacao: expect.any(String) } });
    expect(webhook.received.length).toBe(before + 1);
    expect(webhook.received[before].body).toMatchObject({ pix: [{ endToEndId: e2eid, devolucoes: [{ id: 'refund1', status: 'DEVOLVIDO' }] }] });
  });

  it('settles refunds NAO_REALIZADO with a reason, which frees their amount', async () => {
    const accessToken = await token();
    const e2eid = await paidPix(accessToken);
    const full = await call('PUT', `${simulator.baseUrl}/pix/${e2eid}/devolucao/whole`, { token: accessToken, body: { valor: '100.00' } });
    expect(full.status).toBe(201);
    const excess = await call('PUT', `${simulator.baseUrl}/pix/${e2eid}/devolucao/more`, { token: accessToken, body: { valor: '0.01' } });
    expect(excess.status).toBe(400);
    expect(excess.body.type).toBe('https://pix.bcb.gov.br/api/v2/error/PixDevolucaoInvalida');
    await simulator.settleRefunds('NAO_REALIZADO', { notify: false });
    const refused = await call('GET', `${simulator.baseUrl}/pix/${e2eid}/devolucao/whole`, { token: accessToken });
    expect(refused.body).toMatchObject({ status: 'NAO_REALIZADO', motivo: expect.any(String) });
    expect((await call('PUT', `${simulator.baseUrl}/pix/${e2eid}/devolucao/again`, { token: accessToken, body: { valor: '100.00' } })).status).toBe(201);
  });

  it('settles each refund right after its answer when told to', async () => {
    const accessToken = await token();
    const e2eid = await paidPix(accessToken);
    simulator.autoSettleRefunds('DEVOLVIDO');
    const created = await call('PUT', `${simulator.baseUrl}/pix/${e2eid}/devolucao/auto1`, { token: accessToken, body: { valor: '5.00' } });
    simulator.autoSettleRefunds(null);
    expect(created.body.status).toBe('EM_PROCESSAMENTO');
    await simulator.whenIdle();
    expect(simulator.refunds().find((r) => r.e2eid === e2eid)?.devolucao.status).toBe('DEVOLVIDO');
  });

  it('answers 404 to a refund of an unknown Pix', async () => {
    const reply = await call('PUT', `${simulator.baseUrl}/pix/E00000000202601010000abcdefghijk/devolucao/x1`, { token: await token(), body: { valor: '1.00' } });
    expect(reply.status).toBe(404);
  });
});

describe('scenario faults', () => {
  it('refuses every token after expireTokens (401), and a new token works', async () => {
    const accessToken = await token();
    const txid = await createCob(accessToken);
    simulator.expireTokens();
    const refused = await call('GET', `${simulator.baseUrl}/cob/${txid}`, { token: accessToken });
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    expect(refused.headers['content-type']).toBe('application/problem+json');
    expect((await call('GET', `${simulator.baseUrl}/cob/${txid}`, { token: await token() })).status).toBe(200);
  });

  it('answers 503 ServicoIndisponivel to the next call after failNext, then serves again', async () => {
    const accessToken = await token();
    simulator.failNext(1, { method: 'PUT', path: /\/cob\// });
    const failed = await call('PUT', `${simulator.baseUrl}/cob/${newTxid()}`, { token: accessToken, body: cobBody() });
    expect(failed.status).toBe(503);
    expect(failed.body).toMatchObject({ type: 'https://pix.bcb.gov.br/api/v2/error/ServicoIndisponivel', status: 503 });
    await createCob(accessToken);
  });

  it('holds the next call back for the time delayNext says', async () => {
    const accessToken = await token();
    simulator.delayNext(1, 300);
    const started = Date.now();
    await createCob(accessToken);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });
});

interface ReceivedCallback {
  path: string;
  body: unknown;
}

/** A plain-http local endpoint standing for the gateway's webhook: records each callback, answers 200. */
class WebhookReceiver {
  readonly received: ReceivedCallback[] = [];
  url = '';
  private server: Server;

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    receiver.server = createServer((incoming, response) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        receiver.received.push({ path: incoming.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        response.writeHead(200).end();
      });
    });
    receiver.server.listen(0, '127.0.0.1');
    await once(receiver.server, 'listening');
    receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
    return receiver;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
}
