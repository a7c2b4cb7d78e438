import { isDeepStrictEqual } from 'node:util';
import { createDynamicPix, hasError } from 'pix-utils';
import { reaisToCents } from '../../../../src/domain/money';
import { Clock } from './clock';
import { endToEndId, location, randomAlphanumeric, returnId } from './ids';
import { problem } from './problems';
import { CobCompleta, CobGerada, CobSolicitada, Devolucao, DevolucaoSolicitada, Pix, PixConsultados, RefundOutcome, WebhookCompleto } from './types';

export interface ReceiverIdentity {
  /** The receiver's Pix key: charges must name it, webhooks are set on it, Pix arrive to it. */
  key: string;
  cnpj: string;
  name: string;
  city: string;
}

/**
 * Who paid, as the GET /pix filters `cpf` and `cnpj` see it. The document's `Pix` carries no payer fields
 * (only the payer's message, `infoPagador`), so these never appear in an answer.
 */
export interface Payer {
  cpf?: string;
  cnpj?: string;
}

/** The document's default for `calendario.expiracao`: a day. */
const DEFAULT_EXPIRATION_SECONDS = 86_400;
const DEFAULT_REFUSAL_REASON = 'Devolução não realizada pelo PSP do pagador.';

interface CobRecord {
  cob: CobGerada;
  /** The request as last accepted, to tell a repeated PUT from one that changes the charge. */
  request: CobSolicitada;
  e2eids: string[];
}

interface PixRecord {
  pix: Pix;
  payer: Payer;
}

/**
 * The receiving PSP's records and the rules the document states for them (its "Violações" lists): charges,
 * the Pix received, their refunds and the webhooks. Breaking a rule throws the document's problem type.
 * Every value handed out is a copy: the records change only through these methods.
 */
export class ReceivingPsp {
  /** Page size when the client names none, and the most it may ask for (the document allows 1000). */
  pageSize = 100;
  maxPageSize = 1000;
  private readonly cobs = new Map<string, CobRecord>();
  private readonly received = new Map<string, PixRecord>();
  private readonly webhooks = new Map<string, WebhookCompleto>();
  private nextLocationId = 1;

  constructor(
    private readonly receiver: ReceiverIdentity,
    /** The PSP's time (ApiPixSimulator.setNow): creation, expiry and payment times all read it. */
    private readonly clock: Clock = new Clock(),
  ) {}

  /**
   * PUT /cob/{txid}. The document refuses a PUT on an existing charge only when it "is not ATIVA and the
   * request seeks to change it": a repeat of the accepted request changes nothing and answers the charge
   * as it stands (a client's retry after a timeout is safe); a different request revises an ATIVA charge.
   */
  putCob(txid: string, request: CobSolicitada): CobGerada {
    this.checkCharge(request);
    const existing = this.cobs.get(txid);
    if (!existing) return copy(this.createCob(txid, request));
    if (isDeepStrictEqual(existing.request, request)) return copy(existing.cob);
    if (existing.cob.status !== 'ATIVA') throw problem('CobOperacaoInvalida', 'A cobrança já existe, não está no status ATIVA, e a presente requisição busca alterá-la.');
    return copy(this.revise(existing, request));
  }

  /** PATCH /cob/{txid}: removal alone, or changes merged into the charge; either way a new revision. */
  patchCob(txid: string, changes: CobSolicitada): CobGerada {
    const record = this.cobRecord(txid);
    if (record.cob.status !== 'ATIVA') throw problem('CobOperacaoInvalida', 'A cobrança não está ATIVA, e a presente requisição busca alterá-la.');
    if (!changes.status) return copy(this.revise(record, merged(record.request, changes)));
    if (Object.keys(changes).length > 1) {
      const rule = 'A cobrança está ATIVA, e a presente requisição propõe alterar seu status para REMOVIDA_PELO_USUARIO_RECEBEDOR juntamente com outras alterações.';
      throw problem('CobOperacaoInvalida', rule);
    }
    record.cob.status = changes.status;
    record.cob.revisao += 1;
    return copy(record.cob);
  }

  getCob(txid: string): CobCompleta {
    const record = this.cobRecord(txid);
    const pix = record.e2eids.map((e2eid) => (this.received.get(e2eid) as PixRecord).pix);
    return copy(pix.length > 0 ? { ...record.cob, pix } : record.cob);
  }

  /** The charge for assertions, or undefined. */
  findCob(txid: string): CobCompleta | undefined {
    return this.cobs.has(txid) ? this.getCob(txid) : undefined;
  }

  /**
   * A payer pays the charge. The record is not tied to expiry (CobrancaStatus: the status "has nothing to do
   * with the charge being expired"), so an expired charge stays ATIVA; the payer's PSP refuses to pay it, and
   * to pay one no longer ATIVA, unless `late` forces the payment through. The charge becomes CONCLUIDA only
   * when it could be paid and the amount is its own (or the payer was allowed to change it); the Pix is
   * listed under the charge's `pix` in every case, as it carries the txid.
   */
  pay(txid: string, options: { amount?: string; late?: boolean; payer?: Payer; infoPagador?: string }): Pix {
    const record = this.cobRecord(txid);
    const payable = record.cob.status === 'ATIVA' && !isExpired(record.cob, this.clock.now());
    if (!payable && !options.late) {
      const state = record.cob.status === 'ATIVA' ? 'expired' : record.cob.status;
      throw new Error(`charge ${txid} is ${state}: a payer's PSP would not pay it (force a late payment to play one)`);
    }
    const valor = options.amount ?? record.cob.valor.original;
    const ownAmount = amountCents(valor) === amountCents(record.cob.valor.original) || record.cob.valor.modalidadeAlteracao === 1;
    const pix = this.receive({ txid, valor, payer: options.payer ?? {}, infoPagador: options.infoPagador });
    record.e2eids.push(pix.endToEndId);
    if (payable && ownAmount) record.cob.status = 'CONCLUIDA';
    return pix;
  }

  /**
   * A Pix arriving to the receiver's key, with any txid or none; or, with `account`, to the receiver's account
   * (a Pix Automático settlement: no key, the end-to-end id of its attempt).
   */
  receive(input: { txid?: string; valor: string; payer: Payer; infoPagador?: string; account?: { endToEndId: string } }): Pix {
    const at = this.clock.now();
    const pix: Pix = {
      endToEndId: input.account?.endToEndId ?? endToEndId(at),
      ...(input.txid ? { txid: input.txid } : {}),
      valor: input.valor,
      ...(input.account ? {} : { chave: this.receiver.key }),
      horario: at.toISOString(),
      ...(input.infoPagador !== undefined ? { infoPagador: input.infoPagador } : {}),
    };
    this.received.set(pix.endToEndId, { pix, payer: input.payer });
    return copy(pix);
  }

  getPix(e2eid: string): Pix {
    return copy(this.pixRecord(e2eid, 'PixNaoEncontrado').pix);
  }

  allPix(): Pix[] {
    return [...this.received.values()].map((record) => copy(record.pix));
  }

  /** GET /pix: the Pix received from `inicio` to `fim` (both included) by `horario`, oldest first, one page. */
  listPix(query: Record<string, string | undefined>): PixConsultados {
    const inicio = query.inicio as string;
    const fim = query.fim as string;
    if (Date.parse(fim) < Date.parse(inicio)) throw problem('PixConsultaInvalida', 'O timestamp representado pelo parâmetro fim é anterior ao timestamp representado pelo parâmetro inicio.');
    if (query.cpf && query.cnpj) throw problem('PixConsultaInvalida', 'Ambos os parâmetros cpf e cnpj estão preenchidos.');
    const filters = pixFilters(query);
    const matching = [...this.received.values()]
      .filter((record) => inWindow(record.pix.horario, inicio, fim) && matchesFilters(record, filters))
      .map((record) => record.pix)
      .sort((a, b) => Date.parse(a.horario) - Date.parse(b.horario)); // stable: Pix of one millisecond stay in arrival order
    const itensPorPagina = Math.min(Number(query['paginacao.itensPorPagina'] ?? this.pageSize), this.maxPageSize);
    const paginaAtual = Number(query['paginacao.paginaAtual'] ?? 0);
    const quantidadeDePaginas = Math.max(1, Math.ceil(matching.length / itensPorPagina));
    const paginacao = { paginaAtual, itensPorPagina, quantidadeDePaginas, quantidadeTotalDeItens: matching.length };
    const page = matching.slice(paginaAtual * itensPorPagina, (paginaAtual + 1) * itensPorPagina);
    return copy({ parametros: { inicio, fim, ...filters, paginacao }, pix: page });
  }

  /**
   * PUT /pix/{e2eid}/devolucao/{id}. The document refuses an id "already used by another refund request":
   * the same request again is no other request, so it answers the refund as it stands (a safe retry);
   * a different one with the same id is refused. Refunds not refused may not add up past the Pix.
   */
  putRefund(e2eid: string, id: string, request: DevolucaoSolicitada): Devolucao {
    const record = this.pixRecord(e2eid, 'PixNaoEncontrado');
    const refunds = (record.pix.devolucoes ??= []);
    const existing = refunds.find((refund) => refund.id === id);
    if (existing && isSameRefund(existing, request)) return copy(existing);
    if (existing) throw problem('PixDevolucaoInvalida', 'A presente requisição de devolução apresenta um {id} já utilizado por outra requisição de devolução para o {e2eid} em questão.');
    if (amountCents(request.valor) === 0) throw problem('PixDevolucaoInvalida', 'O campo devolucao.valor é zero.', [{ property: 'devolucao.valor', reason: 'é zero' }]);
    const committed = refunds.filter((refund) => refund.status !== 'NAO_REALIZADO').reduce((sum, refund) => sum + amountCents(refund.valor), 0);
    if (committed + amountCents(request.valor) > amountCents(record.pix.valor)) {
      throw problem('PixDevolucaoInvalida', 'A presente requisição de devolução, em conjunto com as demais prévias devoluções, excederia o valor do pix originário.');
    }
    const at = this.clock.now();
    const refund: Devolucao = {
      id,
      rtrId: returnId(at),
      valor: request.valor,
      ...optionalRefundFields(request),
      horario: { solicitacao: at.toISOString() },
      status: 'EM_PROCESSAMENTO',
    };
    refunds.push(refund);
    return copy(refund);
  }

  /**
   * A return the PSP makes on its own (the MED: the payer's PSP claimed it back), with an id of the PSP's
   * own that the receiver never asked for, settled at once (DEVOLVIDO). Within the Pix's amount, like any.
   */
  returnOnItsOwn(e2eid: string, valor: string, natureza: 'MED_OPERACIONAL' | 'MED_FRAUDE'): Devolucao {
    const record = this.pixRecord(e2eid, 'PixNaoEncontrado');
    const refunds = (record.pix.devolucoes ??= []);
    const committed = refunds.filter((refund) => refund.status !== 'NAO_REALIZADO').reduce((sum, refund) => sum + amountCents(refund.valor), 0);
    if (committed + amountCents(valor) > amountCents(record.pix.valor)) throw new Error(`a MED return of ${valor} would exceed Pix ${e2eid}`);
    const at = this.clock.now();
    const refund: Devolucao = {
      id: `MED${randomAlphanumeric(20)}`,
      rtrId: returnId(at),
      valor,
      natureza,
      descricao: 'Devolucao MED',
      horario: { solicitacao: at.toISOString(), liquidacao: at.toISOString() },
      status: 'DEVOLVIDO',
    };
    refunds.push(refund);
    return copy(refund);
  }

  getRefund(e2eid: string, id: string): Devolucao {
    const refund = this.pixRecord(e2eid, 'PixDevolucaoNaoEncontrada').pix.devolucoes?.find((candidate) => candidate.id === id);
    if (!refund) throw problem('PixDevolucaoNaoEncontrada');
    return copy(refund);
  }

  allRefunds(): Array<{ e2eid: string; devolucao: Devolucao }> {
    return [...this.received.values()].flatMap(({ pix }) => (pix.devolucoes ?? []).map((devolucao) => ({ e2eid: pix.endToEndId, devolucao: copy(devolucao) })));
  }

  /**
   * Refunds in EM_PROCESSAMENTO reach `outcome` (those of one Pix and id when `only` says so): DEVOLVIDO
   * with its settlement time, NAO_REALIZADO with a reason. Returns the Pix that carry them, as they are now.
   */
  settleRefunds(outcome: RefundOutcome, only?: { e2eid: string; id: string }, reason = DEFAULT_REFUSAL_REASON): Pix[] {
    const settledAt = this.clock.nowIso();
    const touched = new Set<PixRecord>();
    for (const record of this.received.values()) {
      for (const refund of record.pix.devolucoes ?? []) {
        if (refund.status !== 'EM_PROCESSAMENTO' || (only && (only.e2eid !== record.pix.endToEndId || only.id !== refund.id))) continue;
        refund.status = outcome;
        if (outcome === 'DEVOLVIDO') refund.horario.liquidacao = settledAt;
        else refund.motivo = reason;
        touched.add(record);
      }
    }
    return [...touched].map((record) => copy(record.pix));
  }

  /** PUT /webhook/{chave}: only the receiver's own key takes a webhook. */
  putWebhook(chave: string, webhookUrl: string): void {
    if (chave !== this.receiver.key) throw problem('WebhookOperacaoInvalida', 'O parâmetro {chave} não corresponde a uma chave DICT pertencente a este usuário recebedor.');
    this.webhooks.set(chave, { webhookUrl, chave, cnpj: this.receiver.cnpj, criacao: this.clock.nowIso() });
  }

  getWebhook(chave: string): WebhookCompleto {
    const webhook = this.webhooks.get(chave);
    if (!webhook) throw problem('WebhookNaoEncontrado');
    return copy(webhook);
  }

  deleteWebhook(chave: string): void {
    if (!this.webhooks.delete(chave)) throw problem('WebhookNaoEncontrado');
  }

  webhookUrl(chave: string): string | undefined {
    return this.webhooks.get(chave)?.webhookUrl;
  }

  private createCob(txid: string, request: CobSolicitada): CobGerada {
    const criacao = this.clock.nowIso();
    const loc = { id: this.nextLocationId++, txid, location: location(), tipoCob: 'cob' as const, criacao };
    const cob: CobGerada = {
      calendario: { criacao, expiracao: request.calendario?.expiracao ?? DEFAULT_EXPIRATION_SECONDS },
      txid,
      revisao: 0,
      loc,
      location: loc.location,
      status: 'ATIVA',
      ...chargeFields(request),
      pixCopiaECola: this.brCode(loc.location),
    };
    this.cobs.set(txid, { cob, request: copy(request), e2eids: [] });
    return cob;
  }

  /** A new revision of an ATIVA charge with the fields of `request`; its location and BR Code stay. */
  private revise(record: CobRecord, request: CobSolicitada): CobGerada {
    this.checkCharge(request);
    const { cob } = record;
    record.cob = {
      calendario: { criacao: cob.calendario.criacao, expiracao: request.calendario?.expiracao ?? DEFAULT_EXPIRATION_SECONDS },
      txid: cob.txid,
      revisao: cob.revisao + 1,
      loc: cob.loc,
      location: cob.location,
      status: cob.status,
      ...chargeFields(request),
      pixCopiaECola: cob.pixCopiaECola,
    };
    record.request = copy(request);
    return record.cob;
  }

  /** The document's semantic rules for PUT|PATCH /cob/{txid} (its schema is checked before). */
  private checkCharge(request: CobSolicitada): void {
    const refuse = (property: string, reason: string) => problem('CobOperacaoInvalida', reason, [{ property, reason }]);
    if (request.calendario?.expiracao !== undefined && request.calendario.expiracao <= 0) throw refuse('cob.calendario.expiracao', 'O campo cob.calendario.expiracao é igual ou menor que zero.');
    if (request.valor && amountCents(request.valor.original) === 0) throw refuse('cob.valor.original', 'O campo cob.valor.original é zero.');
    if (request.chave !== undefined && request.chave !== this.receiver.key) {
      throw refuse('cob.chave', 'O campo cob.chave corresponde a uma conta que não pertence a este usuário recebedor.');
    }
    // No location is ever created here (POST /loc is not simulated): any loc.id names none.
    if (request.loc) throw refuse('cob.loc.id', 'O location referenciado por loc.id inexiste.');
  }

  /** The dynamic BR Code of a charge: its location, a one-time code, no amount (the payload has it). */
  private brCode(url: string): string {
    const code = createDynamicPix({ merchantName: this.receiver.name, merchantCity: this.receiver.city, url, oneTime: true });
    if (hasError(code)) throw new Error(`BR Code: ${code.message}`);
    return code.toBRCode();
  }

  private cobRecord(txid: string): CobRecord {
    const record = this.cobs.get(txid);
    if (!record) throw problem('CobNaoEncontrado');
    return record;
  }

  private pixRecord(e2eid: string, missing: 'PixNaoEncontrado' | 'PixDevolucaoNaoEncontrada'): PixRecord {
    const record = this.received.get(e2eid);
    if (!record) throw problem(missing);
    return record;
  }
}

/** The fields of a charge its receiver sets, in the order the document's examples show them. */
function chargeFields(request: CobSolicitada): Pick<CobGerada, 'devedor' | 'valor' | 'chave' | 'solicitacaoPagador' | 'infoAdicionais'> {
  return {
    ...(request.devedor ? { devedor: request.devedor } : {}),
    valor: request.valor as CobGerada['valor'],
    chave: request.chave as string,
    ...(request.solicitacaoPagador !== undefined ? { solicitacaoPagador: request.solicitacaoPagador } : {}),
    ...(request.infoAdicionais ? { infoAdicionais: request.infoAdicionais } : {}),
  };
}

/** A PATCH over the accepted request: fields replaced, `calendario` and `valor` merged one level down. */
function merged(request: CobSolicitada, changes: CobSolicitada): CobSolicitada {
  return {
    ...request,
    ...changes,
    calendario: { ...request.calendario, ...changes.calendario },
    valor: { ...request.valor, ...changes.valor } as CobSolicitada['valor'],
  };
}

function isExpired(cob: CobGerada, now: Date): boolean {
  return Date.parse(cob.calendario.criacao) + cob.calendario.expiracao * 1000 <= now.getTime();
}

function isSameRefund(refund: Devolucao, request: DevolucaoSolicitada): boolean {
  return refund.valor === request.valor && refund.natureza === request.natureza && refund.descricao === request.descricao;
}

function optionalRefundFields(request: DevolucaoSolicitada): Partial<Devolucao> {
  return { ...(request.natureza ? { natureza: request.natureza } : {}), ...(request.descricao !== undefined ? { descricao: request.descricao } : {}) };
}

type PixFilters = { txid?: string; txIdPresente?: boolean; devolucaoPresente?: boolean; cpf?: string; cnpj?: string };

/** The optional filters of GET /pix, typed (the echo in `parametros` carries them so). */
function pixFilters(query: Record<string, string | undefined>): PixFilters {
  const flag = (value: string | undefined) => (value === undefined ? undefined : value === 'true');
  const filters: PixFilters = { txid: query.txid, txIdPresente: flag(query.txIdPresente), devolucaoPresente: flag(query.devolucaoPresente), cpf: query.cpf, cnpj: query.cnpj };
  return Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined));
}

function matchesFilters({ pix, payer }: PixRecord, filters: PixFilters): boolean {
  return (
    (filters.txid === undefined || pix.txid === filters.txid) &&
    (filters.txIdPresente === undefined || filters.txIdPresente === (pix.txid !== undefined)) &&
    (filters.devolucaoPresente === undefined || filters.devolucaoPresente === (pix.devolucoes ?? []).length > 0) &&
    (filters.cpf === undefined || payer.cpf === filters.cpf) &&
    (filters.cnpj === undefined || payer.cnpj === filters.cnpj)
  );
}

function inWindow(horario: string, inicio: string, fim: string): boolean {
  const at = Date.parse(horario);
  return at >= Date.parse(inicio) && at <= Date.parse(fim);
}

/** Amounts are the document's strings ("123.45"); the gateway's one conversion (domain/money.ts) reads them. */
export function amountCents(valor: string): number {
  const value = reaisToCents(valor);
  if (value === null) throw new Error(`not an amount: ${valor}`);
  return value;
}

/**
 * A deep copy through JSON (the records are JSON). Not structuredClone: under Jest it returns objects of
 * another realm, whose prototypes make `isDeepStrictEqual` tell a repeated request from the first one.
 */
export function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
