import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFile, rm } from 'node:fs/promises';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { hasError, isDynamicPix, isRecurrencePix, parsePix } from 'pix-utils';
import { cents } from '../../src/domain/money';
import { recurrenceContract, RecurrenceRequest, recurringChargeTxid, RecurringChargeRequest, RETRY_POLICY } from '../../src/providers/automatic-pix.port';
import { ApiPixAutomaticProvider, ReceiverAccount } from '../../src/providers/api-pix/api-pix-automatic.provider';
import { ApiPixClient, PixProviderUnavailableError } from '../../src/providers/api-pix/api-pix.client';
import { ApiPixProvider } from '../../src/providers/api-pix/api-pix.provider';
import { PixRequestRefusedError } from '../../src/providers/pix-provider.port';
import { ApiPixSimulator, makeCertificates, PixCertificates, validateWebhookBody, WebhookKind } from './setup/api-pix';

/**
 * Issue 22: Pix Automático through the BCB's API Pix. The adapter of the AutomaticPixProvider port, driven
 * directly (no app) against the simulated PSP over mutual TLS and OAuth, which checks every request it gets,
 * every answer it gives and every webhook it calls against the BCB's document, plays the payer (approvals,
 * revocations, settlements) and keeps its own clock, moved here as the gateway's scheduler would.
 */
const CLIENT_ID = 'gateway-automatic';
const CLIENT_SECRET = randomBytes(16).toString('hex');
const RECEIVER_KEY = '0f5e7a12-6c1d-4a8e-9b3f-2d4c6e8a0b1c';
const ACCOUNT: ReceiverAccount = { agencia: '0001', conta: '00987654', tipoConta: 'CORRENTE' };
/** A Monday, noon in Brasília. */
const START = '2026-03-02T15:00:00.000Z';
const DEBTOR = { document: '52998224725', documentType: 'CPF' as const, name: 'João da Silva' };
const POST_REC_PATH = /^\/v2\/rec$/;

let certs: PixCertificates;
let sim: ApiPixSimulator;
let client: ApiPixClient;
let provider: ApiPixAutomaticProvider;
let pixProvider: ApiPixProvider;
let receiver: WebhookReceiver;

beforeAll(async () => {
  certs = await makeCertificates();
  sim = await ApiPixSimulator.start({ certs, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, receiverKey: RECEIVER_KEY, receiverAccount: ACCOUNT, now: new Date(START) });
  const [cert, key, ca] = await Promise.all([certs.clientCertFile, certs.clientKeyFile, certs.caFile].map((file) => readFile(file)));
  client = new ApiPixClient({ baseUrl: sim.baseUrl, tokenUrl: sim.tokenUrl, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, cert, key, ca, timeoutMs: 1500, automaticPix: true });
  provider = new ApiPixAutomaticProvider(client, ACCOUNT);
  pixProvider = new ApiPixProvider(client, RECEIVER_KEY);
  receiver = await WebhookReceiver.start();
  await provider.registerWebhooks(`${receiver.url}/hooks`);
});

afterAll(async () => {
  client.close();
  await sim.close();
  await receiver.close();
  await rm(certs.dir, { recursive: true, force: true });
});

beforeEach(() => sim.setNow(START));

afterEach(async () => {
  await sim.whenIdle();
  // Every request the adapter sent, every answer and callback the PSP made, against the BCB's document.
  expect(sim.violations).toEqual([]);
});

let serial = 0;

function recurrenceRequest(overrides: Partial<RecurrenceRequest> = {}): RecurrenceRequest {
  serial += 1;
  return {
    contract: recurrenceContract(serial),
    object: 'Assinatura mensal do plano Profissional',
    debtor: DEBTOR,
    period: 'MENSAL',
    firstDate: sim.today(),
    endDate: null,
    amountCents: cents(4990),
    journey: { kind: 'JOURNEY_2' },
    ...overrides,
  };
}

function chargeRequest(recurrenceId: string, dueDate: string, overrides: Partial<RecurringChargeRequest> = {}): RecurringChargeRequest {
  serial += 1;
  return { txid: recurringChargeTxid(serial), recurrenceId, dueDate, amountCents: cents(4990), description: 'Renovação do plano Profissional', ...overrides };
}

/** A recurrence the payer approved by its QR (journey 2), with no notification. */
async function approvedRecurrence(overrides: Partial<RecurrenceRequest> = {}): Promise<string> {
  const { recurrenceId } = await provider.createRecurrence(recurrenceRequest(overrides));
  await sim.approveRecurrence(recurrenceId, { notify: 'never' });
  return recurrenceId;
}

/** A charge the payer's PSP has accepted (ATIVA), and the day of its first attempt. */
async function activeCharge(recurrenceId: string, dueDate: string): Promise<{ txid: string; firstAttemptDay: string }> {
  const { txid } = await provider.createRecurringCharge(chargeRequest(recurrenceId, dueDate));
  await sim.whenIdle();
  const state = await provider.findRecurringCharge(txid);
  expect(state).toMatchObject({ status: 'ATIVA', attempts: [{ kind: 'AGND', status: 'AGENDADA' }] });
  return { txid, firstAttemptDay: state?.attempts[0].date as string };
}

function plusDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** The simulator's clock moved to noon in Brasília of `date`, as the gateway's scheduler would be told. */
function moveTo(date: string): void {
  sim.setNow(`${date}T15:00:00.000Z`);
}

async function refusal(promise: Promise<unknown>): Promise<PixRequestRefusedError> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(PixRequestRefusedError);
  return error as PixRequestRefusedError;
}

const problemType = (name: string) => `https://pix.bcb.gov.br/api/v2/error/${name}`;

describe('recurrences', () => {
  it('journey 2: makes the location and the recurrence, answers its recurrence QR, and sees the payer approve it', async () => {
    const request = recurrenceRequest({ endDate: '2027-03-02' });
    const created = await provider.createRecurrence(request);
    expect(created.recurrenceId).toMatch(new RegExp(`^RR99999999${sim.today().replace(/-/g, '')}[a-zA-Z0-9]{11}$`));
    const rec = sim.rec(created.recurrenceId);
    expect(rec).toMatchObject({
      status: 'CRIADA',
      vinculo: { contrato: request.contract, devedor: { cpf: DEBTOR.document, nome: DEBTOR.name }, objeto: request.object.slice(0, 35) },
      calendario: { dataInicial: request.firstDate, dataFinal: '2027-03-02', periodicidade: 'MENSAL' },
      valor: { valorRec: '49.90' },
      politicaRetentativa: RETRY_POLICY,
      ativacao: { tipoJornada: 'AGUARDANDO_DEFINICAO' },
    });
    const code = parsePix(created.brCode);
    expect(!hasError(code) && isRecurrencePix(code) && code.urlRec).toBe(rec?.loc?.location);
    expect(await provider.findRecurrence(created.recurrenceId)).toMatchObject({ recurrenceId: created.recurrenceId, status: 'CRIADA', cancelledBy: null, code: null });

    await sim.approveRecurrence(created.recurrenceId);
    expect(await provider.findRecurrence(created.recurrenceId)).toMatchObject({ status: 'APROVADA' });
    expect(sim.rec(created.recurrenceId)?.ativacao).toEqual({ tipoJornada: 'JORNADA_2' });
    expect(await provider.findRecurrence('RR9999999920260302zzzzzzzzzzz')).toBeNull();
  });

  it('journey 3: binds the immediate charge, answers the composite QR, and paying that charge approves the recurrence', async () => {
    const txid = `GWPIX${randomBytes(12).toString('hex')}`;
    await pixProvider.createCharge({
      txid,
      amountCents: cents(4990),
      expiresInSeconds: 3600,
      receiverKey: null,
      merchantName: 'Loja',
      merchantCity: 'SAO PAULO',
      payer: { name: DEBTOR.name, documentType: 'CPF', documentNumber: DEBTOR.document },
      description: 'Primeira mensalidade',
    });
    const created = await provider.createRecurrence(recurrenceRequest({ firstDate: plusDays(sim.today(), 30), journey: { kind: 'JOURNEY_3', firstChargeTxid: txid } }));
    const rec = sim.rec(created.recurrenceId);
    expect(rec?.ativacao).toEqual({ tipoJornada: 'AGUARDANDO_DEFINICAO', dadosJornada: { txid } });
    const code = parsePix(created.brCode);
    expect(!hasError(code) && isDynamicPix(code) && [code.url, code.urlRec]).toEqual([sim.cob(txid)?.location, rec?.loc?.location]);

    await sim.pay(txid);
    expect(await provider.findRecurrence(created.recurrenceId)).toMatchObject({ status: 'APROVADA' });
    expect(sim.rec(created.recurrenceId)?.ativacao).toEqual({ tipoJornada: 'JORNADA_3', dadosJornada: { txid } });
  });

  it('makes one recurrence when repeated, when the client resends a POST whose answer was lost, and when the whole call failed', async () => {
    const request = recurrenceRequest();
    const ofContract = (contract: string) => sim.recs().filter((rec) => rec.vinculo.contrato === contract);

    sim.dropAnswerNext(1, { method: 'POST', path: POST_REC_PATH });
    const first = await provider.createRecurrence(request);
    expect(ofContract(request.contract)).toHaveLength(1);
    expect(await provider.createRecurrence(request)).toEqual(first);
    expect(ofContract(request.contract)).toHaveLength(1);

    const lost = recurrenceRequest();
    sim.dropAnswerNext(3, { method: 'POST', path: POST_REC_PATH });
    await expect(provider.createRecurrence(lost)).rejects.toThrow(PixProviderUnavailableError);
    expect(ofContract(lost.contract)).toHaveLength(1);
    const again = await provider.createRecurrence(lost);
    expect(again.recurrenceId).toBe(ofContract(lost.contract)[0].idRec);
    expect(ofContract(lost.contract)).toHaveLength(1);
  });

  it('is refused a first date before the PSP’s today', async () => {
    const refused = await refusal(provider.createRecurrence(recurrenceRequest({ firstDate: plusDays(sim.today(), -1) })));
    expect(refused).toMatchObject({ status: 400, problem: { type: problemType('RecOperacaoInvalida') } });
  });

  it('cancels a recurrence as the receiver, with the charges pending under it; once ended it is left as it is', async () => {
    const recurrenceId = await approvedRecurrence();
    const { txid } = await activeCharge(recurrenceId, plusDays(sim.today(), 5));
    const cancelled = await provider.cancelRecurrence(recurrenceId);
    expect(cancelled).toMatchObject({ recurrenceId, status: 'CANCELADA', cancelledBy: 'USUARIO_RECEBEDOR', code: 'SLCR' });
    expect(sim.cobr(txid)).toMatchObject({ status: 'CANCELADA', encerramento: { cancelamento: { solicitante: 'USUARIO_RECEBEDOR', codigo: 'SLCR' } } });
    expect(await provider.cancelRecurrence(recurrenceId)).toMatchObject({ status: 'CANCELADA', changedAt: cancelled.changedAt });

    const rejected = (await provider.createRecurrence(recurrenceRequest())).recurrenceId;
    await sim.rejectRecurrence(rejected, { notify: 'never' });
    expect(await provider.cancelRecurrence(rejected)).toMatchObject({ status: 'REJEITADA', cancelledBy: null, code: 'AP13' });
  });

  it('sees a revocation by the payer: CANCELADA by USUARIO_PAGADOR, and no charge is taken under it any more', async () => {
    const recurrenceId = await approvedRecurrence();
    await sim.revokeRecurrence(recurrenceId);
    expect(await provider.findRecurrence(recurrenceId)).toMatchObject({ status: 'CANCELADA', cancelledBy: 'USUARIO_PAGADOR', code: 'SLDB' });
    const refused = await refusal(provider.createRecurringCharge(chargeRequest(recurrenceId, plusDays(sim.today(), 5))));
    expect(refused).toMatchObject({ status: 400, problem: { type: problemType('CobROperacaoInvalida') } });
  });
});

describe('recurring charges', () => {
  it('creates a charge that the same txid answers again, then sees it paid: CONCLUIDA, its Pix also under GET /pix', async () => {
    const recurrenceId = await approvedRecurrence();
    const request = chargeRequest(recurrenceId, plusDays(sim.today(), 5));
    const created = await provider.createRecurringCharge(request);
    expect(created).toMatchObject({ txid: request.txid, recurrenceId, status: 'CRIADA', dueDate: request.dueDate, amountCents: 4990, attempts: [], paid: null });
    expect(sim.cobr(request.txid)).toMatchObject({ valor: { original: '49.90' }, ajusteDiaUtil: true, recebedor: ACCOUNT, infoAdicional: request.description });
    sim.dropAnswerNext(1, { method: 'PUT', path: /^\/v2\/cobr\// });
    expect(await provider.createRecurringCharge(request)).toMatchObject({ txid: request.txid, dueDate: request.dueDate });
    expect(sim.cobrs().filter((cobr) => cobr.idRec === recurrenceId)).toHaveLength(1);
    expect(await refusal(provider.createRecurringCharge({ ...request, amountCents: cents(5990) }))).toMatchObject({ status: 400 });

    await sim.whenIdle();
    const [attempt] = (await provider.findRecurringCharge(request.txid))?.attempts ?? [];
    moveTo(attempt.date);
    const pix = await sim.payRecurringCharge(request.txid);
    const paid = await provider.findRecurringCharge(request.txid);
    expect(paid).toMatchObject({ status: 'CONCLUIDA', paid: { endToEndId: pix.endToEndId, amountCents: 4990 }, attempts: [{ kind: 'AGND', status: 'PAGA', endToEndId: pix.endToEndId }] });
    expect(await pixProvider.findPix(pix.endToEndId)).toMatchObject({ txid: request.txid, amountCents: 4990 });
    const received = await pixProvider.listReceived(new Date(Date.parse(pix.horario) - 1000), new Date(Date.parse(pix.horario) + 1000));
    expect(received.map((one) => one.endToEndId)).toContain(pix.endToEndId);
    expect(await provider.findRecurringCharge('GWREC000000000000000000000000')).toBeNull();
  });

  it('is created only 10 to 2 days before its due date, within the recurrence, one per cycle; a test may relax the window', async () => {
    const recurrenceId = await approvedRecurrence();
    const today = sim.today();
    for (const dueDate of [plusDays(today, 1), plusDays(today, 11)]) {
      expect(await refusal(provider.createRecurringCharge(chargeRequest(recurrenceId, dueDate)))).toMatchObject({ status: 400, problem: { type: problemType('CobROperacaoInvalida') } });
    }
    await provider.createRecurringCharge(chargeRequest(recurrenceId, plusDays(today, 3)));
    expect(await refusal(provider.createRecurringCharge(chargeRequest(recurrenceId, plusDays(today, 4))))).toMatchObject({ status: 400 });
    sim.setChargeWindow({ minDaysBefore: 0, maxDaysBefore: 60 });
    try {
      expect(await provider.createRecurringCharge(chargeRequest(recurrenceId, plusDays(today, 40)))).toMatchObject({ status: 'CRIADA' });
    } finally {
      sim.setChargeWindow({ minDaysBefore: 2, maxDaysBefore: 10 });
    }
  });

  it('rejects a charge whose amount is not the recurrence’s fixed amount (AM09)', async () => {
    const recurrenceId = await approvedRecurrence();
    const { txid } = await provider.createRecurringCharge(chargeRequest(recurrenceId, plusDays(sim.today(), 4), { amountCents: cents(5990) }));
    await sim.whenIdle();
    expect(await provider.findRecurringCharge(txid)).toMatchObject({ status: 'REJEITADA', attempts: [{ status: 'REJEITADA', failureCode: 'AM09' }] });
  });

  it('fails for insufficient funds, is retried once (a lost answer does not ask twice) and paid on the retry', async () => {
    const recurrenceId = await approvedRecurrence();
    const dueDate = plusDays(sim.today(), 4);
    const { txid, firstAttemptDay } = await activeCharge(recurrenceId, dueDate);
    moveTo(firstAttemptDay);
    await sim.failRecurringCharge(txid);
    expect(await provider.findRecurringCharge(txid)).toMatchObject({ status: 'ATIVA', attempts: [{ kind: 'AGND', status: 'REJEITADA', failureCode: 'AB10' }] });

    const retryDay = plusDays(firstAttemptDay, 1);
    sim.dropAnswerNext(1, { method: 'POST', path: /\/retentativa\// });
    const retried = await provider.requestRetry(txid, retryDay);
    expect(retried.attempts).toEqual([expect.objectContaining({ status: 'REJEITADA' }), expect.objectContaining({ kind: 'NTAG', status: 'AGENDADA', date: retryDay, failureCode: null })]);
    expect((await provider.requestRetry(txid, retryDay)).attempts).toHaveLength(2);

    moveTo(retryDay);
    const pix = await sim.payRecurringCharge(txid);
    expect(await provider.findRecurringCharge(txid)).toMatchObject({ status: 'CONCLUIDA', paid: { endToEndId: pix.endToEndId }, attempts: [{ status: 'REJEITADA' }, { status: 'PAGA' }] });
  });

  it('refuses retries beyond PERMITE_3R_7D: not today, not past 7 days after the due date, not a fourth; the charge then EXPIRADA', async () => {
    const recurrenceId = await approvedRecurrence();
    const dueDate = plusDays(sim.today(), 3);
    const { txid, firstAttemptDay } = await activeCharge(recurrenceId, dueDate);
    moveTo(firstAttemptDay);
    await sim.failRecurringCharge(txid);
    moveTo(plusDays(firstAttemptDay, 1));
    for (const date of [sim.today(), plusDays(dueDate, 8)]) {
      expect(await refusal(provider.requestRetry(txid, date))).toMatchObject({ status: 400, problem: { type: problemType('CobROperacaoInvalida') } });
    }
    for (let retry = 1; retry <= 3; retry += 1) {
      const day = plusDays(firstAttemptDay, 1 + retry);
      await provider.requestRetry(txid, day);
      if (retry === 1) expect(await refusal(provider.requestRetry(txid, plusDays(day, 1)))).toMatchObject({ status: 400 });
      moveTo(day);
      await sim.failRecurringCharge(txid);
    }
    const expired = await provider.findRecurringCharge(txid);
    expect(expired?.status).toBe('EXPIRADA');
    expect(expired?.attempts.map((attempt) => `${attempt.kind} ${attempt.status}`)).toEqual(['AGND REJEITADA', 'NTAG REJEITADA', 'NTAG REJEITADA', 'NTAG REJEITADA']);
    expect(await refusal(provider.requestRetry(txid, plusDays(sim.today(), 1)))).toMatchObject({ status: 400 });
  });

  it('expires a failed charge nobody retried once the clock passes its retry window', async () => {
    const recurrenceId = await approvedRecurrence();
    const dueDate = plusDays(sim.today(), 3);
    const { txid, firstAttemptDay } = await activeCharge(recurrenceId, dueDate);
    moveTo(firstAttemptDay);
    await sim.failRecurringCharge(txid, { notify: 'never' });
    moveTo(plusDays(dueDate, 7));
    expect((await provider.findRecurringCharge(txid))?.status).toBe('EXPIRADA');
  });

  it('cancels a charge before its first attempt’s day; on that day it is left as it is', async () => {
    const recurrenceId = await approvedRecurrence();
    const dueDate = plusDays(sim.today(), 6);
    const first = await activeCharge(recurrenceId, dueDate);
    expect(await provider.cancelRecurringCharge(first.txid)).toMatchObject({ status: 'CANCELADA', attempts: [{ status: 'CANCELADA' }] });
    expect(sim.cobr(first.txid)?.encerramento).toEqual({ cancelamento: { solicitante: 'USUARIO_RECEBEDOR', codigo: 'SLCR', descricao: expect.any(String) } });
    expect(await provider.cancelRecurringCharge(first.txid)).toMatchObject({ status: 'CANCELADA' });

    // A cancelled charge frees its cycle.
    const second = await activeCharge(recurrenceId, dueDate);
    moveTo(second.firstAttemptDay);
    expect(await provider.cancelRecurringCharge(second.txid)).toMatchObject({ status: 'ATIVA', attempts: [{ status: 'AGENDADA' }] });
  });
});

describe('webhooks', () => {
  it('registers /webhookrec and /webhookcobr, and the PSP calls {url}/rec and {url}/cobr on each change with bodies valid against the document', async () => {
    expect([sim.automaticWebhookUrl('rec'), sim.automaticWebhookUrl('cobr')]).toEqual([`${receiver.url}/hooks`, `${receiver.url}/hooks`]);
    const before = receiver.received.length;
    const { recurrenceId } = await provider.createRecurrence(recurrenceRequest());
    await sim.approveRecurrence(recurrenceId);
    const { txid } = await activeCharge(recurrenceId, plusDays(sim.today(), 4));
    const pix = await sim.payRecurringCharge(txid);
    const revoked = await approvedRecurrence();
    await sim.revokeRecurrence(revoked);
    await sim.whenIdle();

    const delivered = receiver.received.slice(before);
    for (const callback of delivered) {
      const kind = callback.path.split('/').pop() as WebhookKind;
      expect(validateWebhookBody(callback.body, kind)).toEqual([]);
    }
    const recs = delivered.filter((callback) => callback.path === '/hooks/rec').flatMap((callback) => (callback.body as { recs: Array<Record<string, unknown>> }).recs);
    expect(recs).toEqual([
      expect.objectContaining({ idRec: recurrenceId, status: 'APROVADA', ativacao: { tipoJornada: 'JORNADA_2' } }),
      expect.objectContaining({ idRec: revoked, status: 'CANCELADA', encerramento: { cancelamento: expect.objectContaining({ solicitante: 'USUARIO_PAGADOR' }) } }),
    ]);
    const cobsr = delivered.filter((callback) => callback.path === '/hooks/cobr').flatMap((callback) => (callback.body as { cobsr: Array<Record<string, unknown>> }).cobsr);
    expect(cobsr).toEqual([
      expect.objectContaining({ txid, status: 'ATIVA', tentativas: [expect.objectContaining({ status: 'AGENDADA' })] }),
      expect.objectContaining({ txid, status: 'CONCLUIDA', pix: [expect.objectContaining({ endToEndId: pix.endToEndId, valor: '49.90' })] }),
    ]);
    expect(sim.callbacks.filter((callback) => /\/hooks\/(rec|cobr)$/.test(callback.url)).every((callback) => callback.status === 200)).toBe(true);
  });
});

describe('the PSP’s rules the adapter never meets (raw calls)', () => {
  const recBody = (overrides: Record<string, unknown> = {}) => {
    serial += 1;
    return {
      vinculo: { contrato: `RAW${serial}`, devedor: { cpf: DEBTOR.document, nome: DEBTOR.name } },
      calendario: { dataInicial: sim.today(), periodicidade: 'MENSAL' },
      valor: { valorRec: '10.00' },
      politicaRetentativa: 'NAO_PERMITE',
      ...overrides,
    };
  };
  const createCob = async () => {
    const txid = `GWPIX${randomBytes(12).toString('hex')}`;
    await pixProvider.createCharge({ txid, amountCents: cents(1000), expiresInSeconds: 3600, receiverKey: null, merchantName: 'Loja', merchantCity: 'SAO PAULO', payer: null, description: null });
    return txid;
  };

  it('refuses valorRec with valorMinimoRecebedor, and a location another recurrence uses; takes {"tipo":"rec"} for POST /locrec', async () => {
    const both = await refusal(client.call('POST', '/rec', recBody({ valor: { valorRec: '10.00', valorMinimoRecebedor: '5.00' } })));
    expect(both).toMatchObject({ status: 400, problem: { type: problemType('RecOperacaoInvalida') } });
    const loc = (await client.call<{ id: number }>('POST', '/locrec', { tipo: 'rec' })).body;
    const { body: rec } = await client.call<{ idRec: string }>('POST', '/rec', recBody({ loc: loc.id }));
    expect((await client.call('GET', `/locrec/${loc.id}`)).body).toMatchObject({ id: loc.id, idRec: rec.idRec });
    expect(await refusal(client.call('POST', '/rec', recBody({ loc: loc.id })))).toMatchObject({ status: 400, problem: { type: problemType('RecOperacaoInvalida') } });
    expect((await client.call('GET', '/locrec/999999')).status).toBe(404);
  });

  it('makes RN… recurrences for NAO_PERMITE, whose failed charges expire and take no retry; a code that rejects the charge rejects it', async () => {
    const { body: rec } = await client.call<{ idRec: string }>('POST', '/rec', recBody());
    expect(rec.idRec).toMatch(/^RN99999999\d{8}[a-zA-Z0-9]{11}$/);
    await sim.approveRecurrence(rec.idRec, { notify: 'never' });
    const dueDate = plusDays(sim.today(), 3);
    const charge = (txid: string, due: string) => client.call('PUT', `/cobr/${txid}`, { idRec: rec.idRec, calendario: { dataDeVencimento: due }, valor: { original: '10.00' }, ajusteDiaUtil: false, recebedor: ACCOUNT });
    const txid = recurringChargeTxid((serial += 1));
    await charge(txid, dueDate);
    moveTo(dueDate);
    expect(await sim.failRecurringCharge(txid, { notify: 'never' })).toMatchObject({ status: 'EXPIRADA' });
    const refused = await refusal(client.call('POST', `/cobr/${txid}/retentativa/${plusDays(dueDate, 1)}`));
    expect(refused.problem.detail).toBe('A política configurada na recorrência não permite retentativa de cobrança.');

    moveTo(plusDays(dueDate, 27));
    const next = recurringChargeTxid((serial += 1));
    await charge(next, plusDays(dueDate, 30));
    expect(await sim.failRecurringCharge(next, { codigo: 'AC05', descricao: 'Conta encerrada.', notify: 'never' })).toMatchObject({
      status: 'REJEITADA',
      encerramento: { rejeicao: { codigo: 'AC05' } },
    });
  });

  it('answers the composite QR only for the immediate charge the recurrence names', async () => {
    const named = await createCob();
    const other = await createCob();
    const loc = (await client.call<{ id: number }>('POST', '/locrec')).body;
    const { body: rec } = await client.call<{ idRec: string }>('POST', '/rec', recBody({ loc: loc.id, ativacao: { dadosJornada: { txid: named } } }));
    expect((await client.call('GET', `/rec/${rec.idRec}?txid=${named}`)).body).toMatchObject({ dadosQR: { jornada: 'JORNADA_3' } });
    expect((await client.call('GET', `/rec/${rec.idRec}`)).body).toMatchObject({ dadosQR: { jornada: 'JORNADA_2' } });
    expect(await refusal(client.call('GET', `/rec/${rec.idRec}?txid=${other}`))).toMatchObject({ status: 400, problem: { type: problemType('RecConsultaInvalida') } });
    expect(await refusal(client.call('POST', '/rec', recBody({ ativacao: { dadosJornada: { txid: `${named}x` } } })))).toMatchObject({ status: 400 });
  });

  it('lists recurrences and recurring charges created in [inicio, fim], filtered', async () => {
    const recurrenceId = await approvedRecurrence();
    const { txid } = await provider.createRecurringCharge(chargeRequest(recurrenceId, plusDays(sim.today(), 4)));
    const window = { inicio: new Date(Date.parse(START) - 3600_000).toISOString(), fim: new Date(Date.parse(START) + 3600_000).toISOString() };
    const recs = await client.call<{ recs: Array<{ idRec: string }> }>('GET', `/rec?${new URLSearchParams({ ...window, cpf: DEBTOR.document, status: 'APROVADA', locationPresente: 'true' })}`);
    expect(recs.body.recs.map((rec) => rec.idRec)).toContain(recurrenceId);
    const cobsr = await client.call<{ cobsr: Array<{ txid: string }> }>('GET', `/cobr?${new URLSearchParams({ ...window, idRec: recurrenceId })}`);
    expect(cobsr.body.cobsr.map((cobr) => cobr.txid)).toEqual([txid]);
    const backwards = await refusal(client.call('GET', `/cobr?${new URLSearchParams({ inicio: window.fim, fim: window.inicio })}`));
    expect(backwards).toMatchObject({ status: 400, problem: { type: problemType('CobRConsultaInvalida') } });
  });

  it('reads and deletes the webhooks (404 when none is set)', async () => {
    expect((await client.call('GET', '/webhookrec')).body).toMatchObject({ webhookUrl: `${receiver.url}/hooks`, criacao: expect.any(String) });
    expect((await client.call('DELETE', '/webhookcobr')).status).toBe(204);
    expect((await client.call('GET', '/webhookcobr')).status).toBe(404);
    await provider.registerWebhooks(`${receiver.url}/hooks`);
    expect((await client.call('GET', '/webhookcobr')).status).toBe(200);
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
