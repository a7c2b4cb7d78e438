import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { once } from 'node:events';
import { createServer, request, Server } from 'node:https';
import { AddressInfo } from 'node:net';
import { TLSSocket } from 'node:tls';
import { ApiPixSimulator, makeCertificates, PixCertificates, SendRequestBody, validateEfi } from './setup/api-pix';

/**
 * The simulator of Efí's Pix send API against itself, through a bare https client holding the PSP's client
 * certificate (no gateway code): tokens and scopes, a send and its outcome by callback to a mutual-TLS
 * receiver, the look-ups and the list, every refusal, idEnvio reuse, faults, callbacks lost, duplicated
 * and forged, and sends the gateway never made. Requests and answers are checked with
 * efi-pix-envio.schemas.json here too, not only inside the simulator.
 */
const CLIENT_ID = 'gateway-efi-client';
const CLIENT_SECRET = 'gateway-efi-secret-0123456789';
const RECEIVER_KEY = '2f6c1a8e-1b7d-4c55-9a3e-5d0f6b7c8a91';
const KEY_WITHOUT_WEBHOOK = 'financeiro@gateway.example.com';
const SELLER_KEY = 'vendedor@example.com';
const SELLER_CPF = '12345678909';
const OTHER_CPF = '98765432100';
const COMPANY_KEY = '+5511987654321';
const COMPANY_CNPJ = '12345678000195';
const DENIED_KEY = 'negado@example.com';
const BLOCKED_KEY = 'bloqueado@example.com';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
  text: string;
}

interface CallOptions {
  token?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

let certs: PixCertificates;
let simulator: ApiPixSimulator;
let receiver: HttpsReceiver;
let token: string;

beforeAll(async () => {
  certs = await makeCertificates();
  simulator = await ApiPixSimulator.start({
    certs,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    receiverKey: RECEIVER_KEY,
    efi: {
      accountKeys: [KEY_WITHOUT_WEBHOOK],
      keyOwners: {
        [SELLER_KEY]: { nome: 'Maria Vendedora', cpf: SELLER_CPF },
        [COMPANY_KEY]: { nome: 'Loja da Maria LTDA', cnpj: COMPANY_CNPJ },
        [DENIED_KEY]: { nome: 'Fulano Negado', cpf: OTHER_CPF, denied: true },
        [BLOCKED_KEY]: { nome: 'Beltrano Bloqueado', cpf: '11144477735', blocked: true },
      },
    },
  });
  receiver = await HttpsReceiver.start(certs);
  token = await efiToken();
  const registered = await call('PUT', `${origin()}/v2/webhook/${encodeURIComponent(RECEIVER_KEY)}`, { token, body: { webhookUrl: `${receiver.url}/efi` } });
  expect(registered.status).toBe(200);
});

afterAll(async () => {
  await simulator.close();
  await receiver.close();
  await rm(certs.dir, { recursive: true, force: true });
});

afterEach(() => {
  expect(simulator.violations).toEqual([]);
});

function origin(): string {
  return new URL(simulator.tokenUrl).origin;
}

/** One HTTPS request with the client certificate and its own connection. */
function call(method: string, url: string, options: CallOptions = {}): Promise<Reply> {
  const payload = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const headers: Record<string, string> = {
    ...(payload !== undefined && options.rawBody === undefined ? { 'Content-Type': 'application/json' } : {}),
    ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      { method, headers, ca: readFileSync(certs.caFile), cert: readFileSync(certs.clientCertFile), key: readFileSync(certs.clientKeyFile), agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, text });
        });
        response.on('error', reject);
      },
    );
    if (options.timeoutMs) outgoing.setTimeout(options.timeoutMs, () => outgoing.destroy(new Error('client timeout')));
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

function basic(): string {
  return `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
}

/** Efí's token request: JSON body, HTTP Basic, over mutual TLS. */
async function efiToken(): Promise<string> {
  const body = { grant_type: 'client_credentials' };
  expect(validateEfi('TokenRequest', body)).toEqual([]);
  const reply = await call('POST', simulator.tokenUrl, { body, headers: { Authorization: basic() } });
  expect(reply.status).toBe(200);
  expect(validateEfi('TokenResponse', reply.body)).toEqual([]);
  return reply.body.access_token as string;
}

/** A form token asking for `scope` only (the BCB way: how a test gets a token without the send's scopes). */
async function formToken(scope: string): Promise<string> {
  const reply = await call('POST', simulator.tokenUrl, {
    rawBody: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic() },
  });
  expect(reply.status).toBe(200);
  return reply.body.access_token as string;
}

let idCounter = 0;
function newIdEnvio(): string {
  idCounter += 1;
  return `saque${Date.now()}${String(idCounter).padStart(4, '0')}`;
}

function sendBody(overrides: { valor?: string; chave?: string; cpf?: string; cnpj?: string; pagador?: string } = {}): SendRequestBody {
  const favorecido: { chave: string; cpf?: string; cnpj?: string } = { chave: overrides.chave ?? SELLER_KEY };
  if (overrides.cnpj) favorecido.cnpj = overrides.cnpj;
  else favorecido.cpf = overrides.cpf ?? SELLER_CPF;
  const body: SendRequestBody = { valor: overrides.valor ?? '150.00', pagador: { chave: overrides.pagador ?? RECEIVER_KEY, infoPagador: 'Saque 1' }, favorecido };
  expect(validateEfi('SendRequest', body)).toEqual([]);
  return body;
}

function send(idEnvio: string, body: unknown, options: { version?: string; token?: string; timeoutMs?: number } = {}): Promise<Reply> {
  return call('PUT', `${origin()}/${options.version ?? 'v3'}/gn/pix/${idEnvio}`, { token: options.token ?? token, body, timeoutMs: options.timeoutMs });
}

function lookUp(idEnvio: string, accessToken = token): Promise<Reply> {
  return call('GET', `${origin()}/v2/gn/pix/enviados/id-envio/${idEnvio}`, { token: accessToken });
}

function lookUpE2e(e2eId: string): Promise<Reply> {
  return call('GET', `${origin()}/v2/gn/pix/enviados/${e2eId}`, { token });
}

function list(query: Record<string, string>): Promise<Reply> {
  return call('GET', `${origin()}/v2/gn/pix/enviados?${new URLSearchParams(query).toString()}`, { token });
}

async function sent(idEnvio: string, body = sendBody()): Promise<Record<string, unknown>> {
  const reply = await send(idEnvio, body);
  expect(reply.status).toBe(201);
  expect(validateEfi('SendResponse', reply.body)).toEqual([]);
  return reply.body;
}

function expectRefusal(reply: Reply, status: number, nome: string): void {
  expect(reply.status).toBe(status);
  expect(validateEfi('ErroEfi', reply.body)).toEqual([]);
  expect(reply.body.nome).toBe(nome);
}

function expectNotFound(reply: Reply, by: 'idEnvio' | 'e2eId'): void {
  expect(reply.status).toBe(404);
  expect(validateEfi('Problema', reply.body)).toEqual([]);
  expect(reply.body).toMatchObject({
    type: 'https://pix.bcb.gov.br/api/v2/error/PixEnviadoNaoEncontrado',
    title: 'Não Encontrado',
    status: 404,
    detail: `Pix enviado não encontrado para o ${by} informado.`,
  });
}

function callbacksFor(idEnvio: string): ReceivedCallback[] {
  return receiver.received.filter((one) => (one.body.pix as Array<{ gnExtras?: { idEnvio?: string } }>).some((item) => item.gnExtras?.idEnvio === idEnvio));
}

function expectCallbackShape(callback: ReceivedCallback): Record<string, unknown> {
  expect(callback.path).toBe('/efi/pix');
  expect(callback.clientAuthorized).toBe(true);
  expect(validateEfi('WebhookCallback', callback.body)).toEqual([]);
  const [item] = callback.body.pix as Array<Record<string, unknown>>;
  expect(validateEfi('WebhookSentPixItem', item)).toEqual([]);
  return item;
}

describe('OAuth', () => {
  it('issues to the JSON token request a token with the send scopes', async () => {
    const reply = await call('POST', simulator.tokenUrl, { body: { grant_type: 'client_credentials' }, headers: { Authorization: basic() } });
    expect(reply.body.scope).toEqual(expect.stringContaining('pix.send'));
    expect((reply.body.scope as string).split(' ')).toEqual(expect.arrayContaining(['pix.send', 'gn.pix.send.read']));
    expect(reply.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
  });

  it('answers 403 insufficient_scope to a send or a look-up without its scope, and 401 without a token', async () => {
    const withoutSend = await formToken('gn.pix.send.read');
    const refused = await send(newIdEnvio(), sendBody(), { token: withoutSend });
    expect(refused.status).toBe(403);
    expect(validateEfi('ErroOAuth', refused.body)).toEqual([]);
    expect(refused.body).toEqual({ error: 'insufficient_scope', error_description: 'Access token has insufficient scope' });

    const sendOnly = await formToken('pix.send');
    const idEnvio = newIdEnvio();
    expect((await send(idEnvio, sendBody(), { token: sendOnly })).status).toBe(201);
    const lookup = await lookUp(idEnvio, sendOnly);
    expect(lookup.status).toBe(403);
    expect(lookup.body.error).toBe('insufficient_scope');

    const anonymous = await call('GET', `${origin()}/v2/gn/pix/enviados/id-envio/${idEnvio}`);
    expect(anonymous.status).toBe(401);
    expect(validateEfi('ErroOAuth', anonymous.body)).toEqual([]);
  });

  it("issues tokens without pix.send once the application's scope is switched off", async () => {
    simulator.efi.setApplicationScopes(['gn.pix.send.read', 'webhook.write']);
    try {
      const narrowed = await efiToken();
      expect((await send(newIdEnvio(), sendBody(), { token: narrowed })).status).toBe(403);
    } finally {
      simulator.efi.setApplicationScopes(null);
    }
  });
});

describe('a send paid', () => {
  it('answers 201 EM_PROCESSAMENTO, calls the webhook with REALIZADO, and the look-ups and the list agree', async () => {
    const inicio = new Date(Date.now() - 1000).toISOString();
    const idEnvio = newIdEnvio();
    const answer = await sent(idEnvio);
    expect(answer).toMatchObject({ idEnvio, valor: '150.00', status: 'EM_PROCESSAMENTO' });
    expect(answer.e2eId).toMatch(/^E09089356\d{12}[a-zA-Z0-9]{11}$/);
    expect(callbacksFor(idEnvio)).toEqual([]);

    const processing = await lookUp(idEnvio);
    expect(processing.status).toBe(200);
    expect(processing.body).toMatchObject({ idEnvio, status: 'EM_PROCESSAMENTO', endToEndId: answer.e2eId });

    await simulator.efi.settleSend(idEnvio, 'REALIZADO');
    const callbacks = callbacksFor(idEnvio);
    expect(callbacks).toHaveLength(1);
    const item = expectCallbackShape(callbacks[0]);
    expect(item).toMatchObject({ endToEndId: answer.e2eId, chave: RECEIVER_KEY, tipo: 'SOLICITACAO', status: 'REALIZADO', valor: '150.00', gnExtras: { idEnvio } });
    expect(typeof item.horario).toBe('string');

    const byId = await lookUp(idEnvio);
    expect(byId.status).toBe(200);
    expect(validateEfi('SentPix', byId.body)).toEqual([]);
    expect(byId.body).toMatchObject({
      endToEndId: answer.e2eId,
      idEnvio,
      valor: '150.00',
      chave: RECEIVER_KEY,
      status: 'REALIZADO',
      infoPagador: 'Saque 1',
      horario: { solicitacao: (answer.horario as { solicitacao: string }).solicitacao, liquidacao: item.horario },
      favorecido: { chave: SELLER_KEY, identificacao: { nome: 'Maria Vendedora', cpf: '***.456.789-**' } },
    });
    const byE2e = await lookUpE2e(answer.e2eId as string);
    expect(byE2e.body).toEqual(byId.body);

    const listed = await list({ inicio, fim: new Date(Date.now() + 1000).toISOString() });
    expect(listed.status).toBe(200);
    expect(validateEfi('SentPixList', listed.body)).toEqual([]);
    expect(listed.body.pix).toContainEqual(byId.body);
    expect((listed.body.parametros as Record<string, unknown>).paginacao).toMatchObject({ paginaAtual: 0, itensPorPagina: 100 });

    const [recorded] = simulator.efi.sendRequests(idEnvio);
    expect(validateEfi('SendRequest', recorded.body)).toEqual([]);
    expect(recorded).toMatchObject({ method: 'PUT', path: `/v3/gn/pix/${idEnvio}`, operation: 'send', status: 201 });
    expect(recorded.headers.authorization).toBe('Bearer [redacted]');
    expect(JSON.stringify(simulator.efi.requests)).not.toContain(token);
    expect(JSON.stringify(simulator.efi.requests)).not.toContain(CLIENT_SECRET);
  });

  it('reports NAO_REALIZADO with gnExtras.erro and a null horario; the look-up has no settlement time', async () => {
    const idEnvio = newIdEnvio();
    await sent(idEnvio, sendBody({ chave: COMPANY_KEY, cnpj: COMPANY_CNPJ, valor: '20.00' }));
    await simulator.efi.settleSend(idEnvio, 'NAO_REALIZADO', { codigo: 'AC06', motivo: 'Conta bloqueada no PSP recebedor' });
    const item = expectCallbackShape(callbacksFor(idEnvio)[0]);
    expect(item).toMatchObject({ status: 'NAO_REALIZADO', horario: null, gnExtras: { idEnvio, erro: { codigo: 'AC06', origem: 'PSP do usuário recebedor', motivo: 'Conta bloqueada no PSP recebedor' } } });
    const lookup = await lookUp(idEnvio);
    expect(lookup.body.status).toBe('NAO_REALIZADO');
    expect(lookup.body.horario).not.toHaveProperty('liquidacao');
    expect(lookup.body.favorecido).toMatchObject({ chave: COMPANY_KEY, identificacao: { cnpj: '**.345.678/0001-**' } });
  });

  it('serves /v2 as older clients call it, and only the versions it is told to', async () => {
    const idEnvio = newIdEnvio();
    expect((await send(idEnvio, sendBody(), { version: 'v2' })).status).toBe(201);
    simulator.efi.configure({ versions: ['v3'] });
    try {
      expect((await send(newIdEnvio(), sendBody(), { version: 'v2' })).status).toBe(404);
      expect(simulator.violations).toEqual([expect.stringContaining('/v2 is not served')]);
      simulator.clearViolations();
    } finally {
      simulator.efi.configure({ versions: ['v3', 'v2'] });
    }
  });

  it('settles sends on its own after the configured delay, and names the E2E field as told', async () => {
    simulator.efi.setAutoSettle({ afterMs: 50, status: 'REALIZADO' });
    simulator.efi.configure({ e2eField: 'endToEndId' });
    try {
      const idEnvio = newIdEnvio();
      const answer = await sent(idEnvio);
      expect(answer).not.toHaveProperty('e2eId');
      expect(answer.endToEndId).toMatch(/^E09089356/);
      await simulator.whenIdle();
      expect(expectCallbackShape(callbacksFor(idEnvio)[0]).status).toBe('REALIZADO');
      expect((await lookUp(idEnvio)).body.status).toBe('REALIZADO');
    } finally {
      simulator.efi.setAutoSettle(null);
      simulator.efi.configure({ e2eField: 'e2eId' });
    }
  });
});

describe('refusals of the send', () => {
  it.each([
    ["a key whose owner has another CPF", () => sendBody({ cpf: OTHER_CPF }), 400, 'chave_nao_pertence_ao_documento'],
    ["a key whose owner has another CNPJ", () => sendBody({ chave: COMPANY_KEY, cnpj: '11222333000181' }), 400, 'chave_nao_pertence_ao_documento'],
    ['a key no one owns', () => sendBody({ chave: 'ninguem@example.com' }), 400, 'chave_invalida'],
    ['a key the risk analysis denies', () => sendBody({ chave: DENIED_KEY, cpf: OTHER_CPF }), 422, 'pagamento_negado'],
    ['a key whose owner is blocked', () => sendBody({ chave: BLOCKED_KEY, cpf: '11144477735' }), 400, 'documento_bloqueado'],
    ['a payer key of another account', () => sendBody({ pagador: 'outra-conta@example.com' }), 400, 'chave_invalida'],
    ['a payer key without a webhook', () => sendBody({ pagador: KEY_WITHOUT_WEBHOOK }), 400, 'chave_invalida'],
  ])('refuses %s, registers nothing and leaves the idEnvio free', async (_case, body, status, nome) => {
    const idEnvio = newIdEnvio();
    expectRefusal(await send(idEnvio, body()), status, nome);
    expectNotFound(await lookUp(idEnvio), 'idEnvio');
    expect((await send(idEnvio, sendBody())).status).toBe(201);
  });

  it('refuses every send while the account document is blocked', async () => {
    simulator.efi.setAccountBlocked(true);
    try {
      expectRefusal(await send(newIdEnvio(), sendBody()), 400, 'documento_bloqueado');
    } finally {
      simulator.efi.setAccountBlocked(false);
    }
  });

  it('answers 404 chave_favorecido_nao_encontrada for an unknown key when told to', async () => {
    simulator.efi.configure({ unknownKeyRefusal: 'chave_favorecido_nao_encontrada' });
    try {
      expectRefusal(await send(newIdEnvio(), sendBody({ chave: 'ninguem@example.com' })), 404, 'chave_favorecido_nao_encontrada');
    } finally {
      simulator.efi.configure({ unknownKeyRefusal: 'chave_invalida' });
    }
  });

  it('answers 400 json_invalido with the errors to a body off SendRequest or a bad idEnvio, and records the violation', async () => {
    const extra = await send(newIdEnvio(), { ...sendBody(), txid: 'nao-existe' });
    expectRefusal(extra, 400, 'json_invalido');
    expect(extra.body.erros).toEqual([expect.objectContaining({ caminho: 'body', mensagem: expect.stringContaining('txid') })]);
    const badValue = await send(newIdEnvio(), { ...sendBody(), valor: '10,00' });
    expect(badValue.body.erros).toEqual([expect.objectContaining({ caminho: 'body.valor' })]);
    expectRefusal(await send('com-hifen', sendBody()), 400, 'json_invalido');
    expect(simulator.violations).toEqual([
      expect.stringContaining('txid'),
      expect.stringContaining('body.valor'),
      expect.stringContaining('idEnvio: deve corresponder'),
    ]);
    simulator.clearViolations();
  });

  it('refuses the next send with a planned documented refusal', async () => {
    simulator.efi.refuseNextSend(1, 'pagamento_negado');
    const idEnvio = newIdEnvio();
    expectRefusal(await send(idEnvio, sendBody()), 422, 'pagamento_negado');
    expect((await send(idEnvio, sendBody())).status).toBe(201);
  });
});

describe('a reused idEnvio', () => {
  it('answers 409 id_envio_duplicado to another body', async () => {
    const idEnvio = newIdEnvio();
    await sent(idEnvio);
    const reply = await send(idEnvio, sendBody({ valor: '151.00' }));
    expectRefusal(reply, 409, 'id_envio_duplicado');
    expect(reply.body.mensagem).toBe('O id de envio informado já foi utilizado em outro pagamento');
    expect((await lookUp(idEnvio)).body.valor).toBe('150.00');
  });

  it('answers 409 to the same body by default, and replays the same send when told to', async () => {
    const idEnvio = newIdEnvio();
    const first = await sent(idEnvio);
    expectRefusal(await send(idEnvio, sendBody()), 409, 'id_envio_duplicado');
    simulator.efi.configure({ sameBodyRetry: 'replay' });
    try {
      const replay = await send(idEnvio, { favorecido: { cpf: SELLER_CPF, chave: SELLER_KEY }, pagador: { infoPagador: 'Saque 1', chave: RECEIVER_KEY }, valor: '150.00' });
      expect(replay.status).toBe(201);
      expect(replay.body).toEqual(first);
      expectRefusal(await send(idEnvio, sendBody({ valor: '1.00' })), 409, 'id_envio_duplicado');
    } finally {
      simulator.efi.configure({ sameBodyRetry: 'conflict' });
    }
    expect(simulator.efi.allSends().filter((one) => one.idEnvio === idEnvio)).toHaveLength(1);
    expect(simulator.efi.sendCountsByIdEnvio()[idEnvio]).toBe(4);
  });
});

describe('faults', () => {
  it('loses the answer of a send it registered: a look-up finds it, a resend is a 409', async () => {
    const idEnvio = newIdEnvio();
    simulator.efi.dropAnswerNextSend(1);
    await expect(send(idEnvio, sendBody())).rejects.toThrow(/socket hang up|ECONNRESET/);
    const lookup = await lookUp(idEnvio);
    expect(lookup.status).toBe(200);
    expect(lookup.body).toMatchObject({ idEnvio, status: 'EM_PROCESSAMENTO' });
    expectRefusal(await send(idEnvio, sendBody()), 409, 'id_envio_duplicado');
    expect(simulator.efi.sendRequests(idEnvio).map((one) => one.status)).toEqual([0, 409]);
  });

  it('holds the answer of a send it registered past the client timeout', async () => {
    const idEnvio = newIdEnvio();
    simulator.efi.holdAnswerNextSend(1, 1500);
    await expect(send(idEnvio, sendBody(), { timeoutMs: 200 })).rejects.toThrow(/client timeout/);
    expect((await lookUp(idEnvio)).body).toMatchObject({ idEnvio, status: 'EM_PROCESSAMENTO' });
  });

  it('fails a send with 500 erro_aplicacao before registering it', async () => {
    const idEnvio = newIdEnvio();
    simulator.efi.failNextSend(1, 500);
    expectRefusal(await send(idEnvio, sendBody()), 500, 'erro_aplicacao');
    expectNotFound(await lookUp(idEnvio), 'idEnvio');
    simulator.efi.failNextSend(1, 503);
    const unavailable = await send(idEnvio, sendBody());
    expect(unavailable.status).toBe(503);
    expect(validateEfi('Problema', unavailable.body)).toEqual([]);
    expect((await send(idEnvio, sendBody())).status).toBe(201);
  });

  it('answers 404 PixEnviadoNaoEncontrado to a look-up by an E2E id it never issued', async () => {
    expectNotFound(await lookUpE2e('E09089356202401011200abcdefghijk'), 'e2eId');
  });
});

describe('callbacks', () => {
  it('loses a callback when told to: only a look-up tells the outcome', async () => {
    const idEnvio = newIdEnvio();
    await sent(idEnvio);
    simulator.efi.loseCallbacks(1);
    await simulator.efi.settleSend(idEnvio, 'REALIZADO');
    expect(callbacksFor(idEnvio)).toEqual([]);
    expect(simulator.efi.callbacks.at(-1)).toMatchObject({ idEnvio, lost: true, deliveries: [] });
    expect((await lookUp(idEnvio)).body.status).toBe('REALIZADO');
  });

  it('duplicates a callback when told to', async () => {
    const idEnvio = newIdEnvio();
    await sent(idEnvio);
    simulator.efi.duplicateCallbacks(1);
    await simulator.efi.settleSend(idEnvio, 'NAO_REALIZADO', 'Conta encerrada');
    const callbacks = callbacksFor(idEnvio);
    expect(callbacks).toHaveLength(2);
    expect(callbacks[0].body).toEqual(callbacks[1].body);
  });

  it('forges a well-shaped callback for an idEnvio that does not exist', async () => {
    const forged = await simulator.efi.forgeCallback({ valor: '999.99' });
    expect(forged.forged).toBe(true);
    const [received] = callbacksFor(forged.idEnvio);
    const item = expectCallbackShape(received);
    expect(item).toMatchObject({ tipo: 'SOLICITACAO', status: 'REALIZADO', valor: '999.99', chave: RECEIVER_KEY, gnExtras: { idEnvio: forged.idEnvio } });
    expectNotFound(await lookUp(forged.idEnvio), 'idEnvio');
  });

  it('forges a callback with a status the send does not have', async () => {
    const idEnvio = newIdEnvio();
    await sent(idEnvio);
    await simulator.efi.settleSend(idEnvio, 'NAO_REALIZADO');
    await simulator.efi.forgeCallback({ idEnvio });
    const [real, forged] = callbacksFor(idEnvio).map(expectCallbackShape);
    expect(real.status).toBe('NAO_REALIZADO');
    expect(forged).toMatchObject({ status: 'REALIZADO', endToEndId: real.endToEndId, gnExtras: { idEnvio } });
    expect((await lookUp(idEnvio)).body.status).toBe('NAO_REALIZADO');
  });
});

describe('the list of sent Pix, and sends for reconciliation', () => {
  const window = { inicio: '2020-03-01T10:00:00Z', fim: '2020-03-01T11:00:00Z' };

  it('pages exactly as parametros.paginacao says, filters by status, and shows sends the gateway never made as altered', async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const pix = await simulator.efi.registerUnknownSend({ valor: `${i + 1}.00`, status: 'REALIZADO', at: `2020-03-01T10:0${i}:00Z`, favorecido: { chave: SELLER_KEY } });
      made.push(pix.idEnvio);
    }
    const pages = [];
    for (let page = 0; page < 3; page += 1) {
      const reply = await list({ ...window, 'paginacao.paginaAtual': String(page), 'paginacao.itensPorPagina': '2' });
      expect(reply.status).toBe(200);
      expect(validateEfi('SentPixList', reply.body)).toEqual([]);
      expect(reply.body.parametros).toEqual({ ...window, paginacao: { paginaAtual: page, itensPorPagina: 2, quantidadeDePaginas: 3, quantidadeTotalDeItens: 5 } });
      pages.push(...(reply.body.pix as Array<{ idEnvio: string }>).map((one) => one.idEnvio));
    }
    expect(pages).toEqual(made);
    const beyond = await list({ ...window, 'paginacao.paginaAtual': '3', 'paginacao.itensPorPagina': '2' });
    expect(beyond.body.pix).toEqual([]);

    simulator.efi.alterSend(made[0], { valor: '7.77' });
    simulator.efi.alterSend(made[1], { status: 'NAO_REALIZADO' });
    const failed = await list({ ...window, status: 'NAO_REALIZADO' });
    expect((failed.body.pix as Array<Record<string, unknown>>).map((one) => one.idEnvio)).toEqual([made[1]]);
    expect((failed.body.parametros as Record<string, unknown>).status).toBe('NAO_REALIZADO');
    expect((await lookUp(made[0])).body).toMatchObject({ valor: '7.77', status: 'REALIZADO' });
    expect(receiver.received.filter((one) => made.includes(((one.body.pix as Array<{ gnExtras: { idEnvio: string } }>)[0]).gnExtras.idEnvio))).toEqual([]);
  });

  it('answers an empty page for a window without sends, or a bare array when told to', async () => {
    const empty = await list({ inicio: '2019-01-01T00:00:00Z', fim: '2019-01-02T00:00:00Z' });
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ pix: [], parametros: { paginacao: { quantidadeDePaginas: 0, quantidadeTotalDeItens: 0 } } });
    simulator.efi.configure({ listShape: 'array' });
    try {
      const bare = await list(window);
      expect(Array.isArray(bare.body)).toBe(true);
    } finally {
      simulator.efi.configure({ listShape: 'envelope' });
    }
  });

  it('answers 400 to a list without its required window, and records the violation', async () => {
    const reply = await list({ inicio: window.inicio, 'paginacao.itensPorPagina': '1001' });
    expect(reply.status).toBe(400);
    expect(validateEfi('Problema', reply.body)).toEqual([]);
    expect(simulator.violations).toEqual([expect.stringContaining('fim: é obrigatório'), expect.stringContaining('paginacao.itensPorPagina')]);
    simulator.clearViolations();
  });
});

describe('recorded requests', () => {
  it('counts the PUTs of each idEnvio, so a test can tell each withdrawal was sent exactly once', async () => {
    const ids = [newIdEnvio(), newIdEnvio(), newIdEnvio()];
    await Promise.all(ids.map((idEnvio) => sent(idEnvio)));
    const counts = simulator.efi.sendCountsByIdEnvio();
    expect(ids.map((idEnvio) => counts[idEnvio])).toEqual([1, 1, 1]);
    expect(simulator.efi.distinctIdEnvios()).toEqual(expect.arrayContaining(ids));
    const tokenRequest = simulator.efi.requests.find((one) => one.operation === 'token');
    expect(tokenRequest?.headers.authorization).toBe('Basic [redacted]');
  });
});

interface ReceivedCallback {
  path: string;
  body: Record<string, unknown>;
  clientAuthorized: boolean;
}

/** The gateway's webhook stand-in: HTTPS with mutual TLS, the PSP's certificate required. */
class HttpsReceiver {
  readonly received: ReceivedCallback[] = [];
  url = '';
  private server: Server;

  static async start(pki: PixCertificates): Promise<HttpsReceiver> {
    const receiver = new HttpsReceiver();
    receiver.server = createServer(
      { cert: readFileSync(pki.serverCertFile), key: readFileSync(pki.serverKeyFile), ca: readFileSync(pki.caFile), requestCert: true, rejectUnauthorized: true },
      (incoming, response) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
          receiver.received.push({ path: incoming.url ?? '', body, clientAuthorized: (incoming.socket as TLSSocket).authorized });
          response.writeHead(200).end();
        });
      },
    );
    receiver.server.listen(0, '127.0.0.1');
    await once(receiver.server, 'listening');
    receiver.url = `https://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
    return receiver;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
}
