import { Cents, centsToReaisString, reaisToCents } from '../../domain/money';
import { endOfBrazilDay } from '../../domain/dates';
import {
  AutomaticPixProvider,
  ChargeAttempt,
  RecurrenceCreated,
  RecurrenceRequest,
  RecurrenceState,
  RecurrenceStatus,
  RecurringChargeRequest,
  RecurringChargeState,
  RecurringChargeStatus,
  RETRY_POLICY,
} from '../automatic-pix.port';
import { PixRequestRefusedError } from '../pix-provider.port';
import { ApiPixClient } from './api-pix.client';

/** The receiver's account a recurring charge credits (`DadosBancariosRecebedor`, the cobr's `recebedor`). */
export interface ReceiverAccount {
  conta: string;
  tipoConta: 'CORRENTE' | 'POUPANCA' | 'PAGAMENTO';
  agencia?: string;
}

/** The wire shapes of the BCB's API Pix 2.9.0 the adapter reads (components/schemas). */
interface LocRecWire {
  id: number;
  location: string;
  idRec?: string;
}
interface RecWire {
  idRec: string;
  status: RecurrenceStatus;
  vinculo: { contrato: string };
  atualizacao: Array<{ status: RecurrenceStatus; data: string }>;
  encerramento?: {
    cancelamento?: { solicitante: RecurrenceState['cancelledBy']; codigo: string; descricao: string };
    rejeicao?: { codigo: string; descricao: string };
  };
  ativacao?: { tipoJornada: string; dadosJornada?: { txid: string } };
  dadosQR?: { jornada: string; pixCopiaECola: string };
}
interface RecsConsultadas {
  parametros: { paginacao: { quantidadeDePaginas: number } };
  recs: RecWire[];
}
interface CobRWire {
  idRec: string;
  txid: string;
  status: RecurringChargeStatus;
  calendario: { dataDeVencimento: string };
  valor: { original: string };
  tentativas?: Array<{ dataLiquidacao: string; tipo: ChargeAttempt['kind']; status: ChargeAttempt['status']; endToEndId: string; rejeicao?: { codigo: string } }>;
  pix?: Array<{ endToEndId: string; valor: string; horario: string }>;
}

/** Items asked per page of GET /rec. */
const PAGE_SIZE = 100;
const DAY_MS = 86_400_000;
/**
 * How far before its first date a recurrence may have been made, for finding it again: the PSP refuses a
 * first date before the creation date, and the gateway asks for one within a period (a year at most).
 */
const CREATION_LOOKBACK_MS = 367 * DAY_MS;
const ENDED_RECURRENCES: ReadonlySet<RecurrenceStatus> = new Set(['REJEITADA', 'EXPIRADA', 'CANCELADA']);

/**
 * The Pix Automático port on a PSP's API Pix (BCB, release 2.9.0): recurrences with the location their QR
 * serves (`/locrec`, `/rec`), recurring charges and their retries (`/cobr`), and the two webhooks. Amounts
 * cross as the standard's decimal strings, converted by domain/money.ts.
 *
 * Repeats are safe: a recurrence is found again through GET /rec (by the debtor's document, matched on
 * `vinculo.contrato`) before a new one is made, and a POST /rec the client resends after a lost answer is
 * refused by the PSP (its location is taken) and resolved through the location; a charge's txid taken by
 * the charge asked for answers that charge; a retry already there for its date is not asked twice.
 */
export class ApiPixAutomaticProvider implements AutomaticPixProvider {
  constructor(
    private readonly client: ApiPixClient,
    private readonly receiverAccount: ReceiverAccount,
  ) {}

  async createRecurrence(request: RecurrenceRequest): Promise<RecurrenceCreated> {
    const recurrenceId = (await this.findMadeFor(request)) ?? (await this.makeRecurrence(request));
    const txid = request.journey.kind === 'JOURNEY_3' ? request.journey.firstChargeTxid : null;
    const query = txid ? `?${new URLSearchParams({ txid })}` : '';
    const rec = await this.expect<RecWire>('GET', `/rec/${encodeURIComponent(recurrenceId)}${query}`);
    if (!rec.dadosQR?.pixCopiaECola) throw new Error(`The PSP answered recurrence ${recurrenceId} without the BR Code of its QR (dadosQR)`);
    return { recurrenceId, brCode: rec.dadosQR.pixCopiaECola };
  }

  async findRecurrence(recurrenceId: string): Promise<RecurrenceState | null> {
    const answer = await this.client.call<RecWire>('GET', `/rec/${encodeURIComponent(recurrenceId)}`);
    return answer.status === 404 ? null : toRecurrenceState(answer.body);
  }

  async cancelRecurrence(recurrenceId: string): Promise<RecurrenceState> {
    const path = `/rec/${encodeURIComponent(recurrenceId)}`;
    try {
      return toRecurrenceState(await this.expect<RecWire>('PATCH', path, { status: 'CANCELADA' }));
    } catch (error) {
      // Refused because it has already ended (expired, rejected, cancelled, perhaps by this very call).
      if (!(error instanceof PixRequestRefusedError) || error.status !== 400) throw error;
      const state = toRecurrenceState(await this.expect<RecWire>('GET', path));
      if (!ENDED_RECURRENCES.has(state.status)) throw error;
      return state;
    }
  }

  async createRecurringCharge(request: RecurringChargeRequest): Promise<RecurringChargeState> {
    const body = {
      idRec: request.recurrenceId,
      ...(request.description ? { infoAdicional: request.description.slice(0, 140) } : {}),
      calendario: { dataDeVencimento: request.dueDate },
      valor: { original: centsToReaisString(request.amountCents) },
      ajusteDiaUtil: true,
      recebedor: this.receiverAccount,
    };
    const path = `/cobr/${request.txid}`;
    try {
      return toChargeState(await this.expect<CobRWire>('PUT', path, body));
    } catch (error) {
      // A repeat, or the client's resend after a lost answer: the txid is taken, by the charge we asked for.
      if (!(error instanceof PixRequestRefusedError)) throw error;
      const existing = await this.client.call<CobRWire>('GET', path);
      if (existing.status === 404 || !isChargeAskedFor(existing.body, body)) throw error;
      return toChargeState(existing.body);
    }
  }

  async findRecurringCharge(txid: string): Promise<RecurringChargeState | null> {
    const answer = await this.client.call<CobRWire>('GET', `/cobr/${txid}`);
    return answer.status === 404 ? null : toChargeState(answer.body);
  }

  async requestRetry(txid: string, date: string): Promise<RecurringChargeState> {
    const path = `/cobr/${txid}`;
    const before = toChargeState(await this.expect<CobRWire>('GET', path));
    // Only a retry (NTAG) asked before for that date is this one; another attempt on it is a clash the PSP refuses.
    const asked = (state: RecurringChargeState) => state.attempts.some((attempt) => attempt.kind === 'NTAG' && attempt.date === date);
    if (asked(before)) return before;
    try {
      return toChargeState(await this.expect<CobRWire>('POST', `${path}/retentativa/${date}`));
    } catch (error) {
      // The client's resend after a lost answer finds the attempt it asked for open.
      if (!(error instanceof PixRequestRefusedError) || error.status !== 400) throw error;
      const after = toChargeState(await this.expect<CobRWire>('GET', path));
      if (!asked(after)) throw error;
      return after;
    }
  }

  async cancelRecurringCharge(txid: string): Promise<RecurringChargeState> {
    const path = `/cobr/${txid}`;
    try {
      await this.expect('PATCH', path, { status: 'CANCELADA' });
    } catch (error) {
      // Ended already, or on or past its first attempt's day: left as it is.
      if (!(error instanceof PixRequestRefusedError) || error.status !== 400) throw error;
    }
    // CobRGerada, PATCH's answer, has no attempts nor Pix: the state is read whole.
    return toChargeState(await this.expect<CobRWire>('GET', path));
  }

  /** Registers where the PSP notifies recurrences (`{baseUrl}/rec`) and recurring charges (`{baseUrl}/cobr`). */
  async registerWebhooks(baseUrl: string): Promise<void> {
    await this.expect('PUT', '/webhookrec', { webhookUrl: baseUrl });
    await this.expect('PUT', '/webhookcobr', { webhookUrl: baseUrl });
  }

  /**
   * The recurrence already made for this request, if any: the debtor's recurrences created from a year
   * before the first date until now, one still CRIADA or APROVADA for the same contract (and, journey 3,
   * the same first charge). The latest when there are several.
   */
  private async findMadeFor(request: RecurrenceRequest): Promise<string | null> {
    const firstDay = Date.parse(`${request.firstDate}T00:00:00.000Z`);
    const inicio = new Date(firstDay - CREATION_LOOKBACK_MS).toISOString();
    const fim = new Date(Math.max(Date.now(), endOfBrazilDay(request.firstDate).getTime()) + DAY_MS).toISOString();
    const txid = request.journey.kind === 'JOURNEY_3' ? request.journey.firstChargeTxid : undefined;
    let found: RecWire | null = null;
    for (let page = 0; ; page += 1) {
      const query = new URLSearchParams({
        inicio,
        fim,
        [documentField(request.debtor)]: request.debtor.document,
        'paginacao.paginaAtual': String(page),
        'paginacao.itensPorPagina': String(PAGE_SIZE),
      });
      const answer = await this.expect<RecsConsultadas>('GET', `/rec?${query}`);
      for (const rec of answer.recs) {
        const live = rec.status === 'CRIADA' || rec.status === 'APROVADA';
        if (live && rec.vinculo.contrato === request.contract && rec.ativacao?.dadosJornada?.txid === txid && (!found || createdAt(rec) >= createdAt(found))) found = rec;
      }
      if (page + 1 >= answer.parametros.paginacao.quantidadeDePaginas) return found?.idRec ?? null;
    }
  }

  /**
   * The location, then the recurrence bound to it. The location is what makes a resent POST /rec safe: the
   * PSP refuses a second recurrence on a location in use, and the location names the first one.
   */
  private async makeRecurrence(request: RecurrenceRequest): Promise<string> {
    const loc = await this.expect<LocRecWire>('POST', '/locrec');
    const body = {
      vinculo: {
        objeto: request.object.slice(0, 35),
        devedor: { [documentField(request.debtor)]: request.debtor.document, nome: request.debtor.name.slice(0, 140) },
        contrato: request.contract,
      },
      calendario: { dataInicial: request.firstDate, ...(request.endDate ? { dataFinal: request.endDate } : {}), periodicidade: request.period },
      valor: { valorRec: centsToReaisString(request.amountCents) },
      politicaRetentativa: RETRY_POLICY,
      loc: loc.id,
      ...(request.journey.kind === 'JOURNEY_3' ? { ativacao: { dadosJornada: { txid: request.journey.firstChargeTxid } } } : {}),
    };
    try {
      return (await this.expect<RecWire>('POST', '/rec', body)).idRec;
    } catch (error) {
      if (!(error instanceof PixRequestRefusedError)) throw error;
      const bound = await this.client.call<LocRecWire>('GET', `/locrec/${loc.id}`);
      if (bound.status === 404 || !bound.body.idRec) throw error;
      return bound.body.idRec;
    }
  }

  /** A call whose 404 is an error too (the resource must exist). */
  private async expect<T>(method: 'GET' | 'PUT' | 'PATCH' | 'POST', path: string, body?: unknown): Promise<T> {
    const answer = await this.client.call<T>(method, path, body);
    if (answer.status === 404) throw new PixRequestRefusedError(404, { title: 'Not found', detail: `${method} ${path}` });
    return answer.body;
  }
}

/** The API Pix field of the debtor's document. */
function documentField(debtor: RecurrenceRequest['debtor']): 'cpf' | 'cnpj' {
  return debtor.documentType === 'CPF' ? 'cpf' : 'cnpj';
}

function createdAt(rec: RecWire): number {
  return Date.parse(rec.atualizacao[0]?.data ?? '') || 0;
}

function amountOf(valor: string): Cents {
  const amount = reaisToCents(valor);
  if (amount === null) throw new Error(`The PSP answered an amount that is not one: ${JSON.stringify(valor)}`);
  return amount;
}

function isChargeAskedFor(charge: CobRWire, asked: { idRec: string; calendario: { dataDeVencimento: string }; valor: { original: string } }): boolean {
  return charge.idRec === asked.idRec && charge.calendario.dataDeVencimento === asked.calendario.dataDeVencimento && amountOf(charge.valor.original) === amountOf(asked.valor.original);
}

function toRecurrenceState(rec: RecWire): RecurrenceState {
  const last = rec.atualizacao[rec.atualizacao.length - 1];
  const { cancelamento, rejeicao } = rec.encerramento ?? {};
  const ending = cancelamento ?? rejeicao;
  return {
    recurrenceId: rec.idRec,
    status: rec.status,
    changedAt: new Date(last?.data ?? Date.now()),
    cancelledBy: cancelamento?.solicitante ?? null,
    code: ending?.codigo ?? null,
    description: ending?.descricao ?? null,
  };
}

function toChargeState(cobr: CobRWire): RecurringChargeState {
  const paid = cobr.pix?.[0];
  return {
    txid: cobr.txid,
    recurrenceId: cobr.idRec,
    status: cobr.status,
    dueDate: cobr.calendario.dataDeVencimento,
    amountCents: amountOf(cobr.valor.original),
    attempts: (cobr.tentativas ?? []).map((attempt) => ({
      date: attempt.dataLiquidacao,
      kind: attempt.tipo,
      status: attempt.status,
      endToEndId: attempt.endToEndId,
      failureCode: attempt.rejeicao?.codigo ?? null,
    })),
    paid: paid ? { endToEndId: paid.endToEndId, amountCents: amountOf(paid.valor), paidAt: new Date(paid.horario) } : null,
  };
}
