import { createDynamicPix, createRecurrencePix, hasError } from 'pix-utils';
import { addDays, businessDayFrom, Clock, daysBetween } from './clock';
import { endToEndId, randomIspb, recurrenceId, recurrenceLocation } from './ids';
import { PixViolation } from './openapi';
import { PixProblem, problem, ProblemType } from './problems';
import { amountCents, copy, ReceiverIdentity, ReceivingPsp } from './psp';
import {
  CobRCancelamentoCodigo,
  CobRCompleta,
  CobREncerramento,
  CobRNotification,
  CobRRejeicaoCodigo,
  CobRSolicitada,
  CobRStatus,
  CobsRConsultadas,
  DadosBancariosRecebedor,
  LocRec,
  Pix,
  RecCalendario,
  RecCancelamentoCodigo,
  RecCompleta,
  RecEncerramento,
  RecNotification,
  RecRejeicaoCodigo,
  RecRevisada,
  RecsConsultadas,
  RecSolicitada,
  RecStatus,
  Solicitante,
  Tentativa,
  TentativaStatus,
  TentativaTipo,
  WebhookAutomaticoCompleto,
} from './types';

/**
 * How many days before its due date a recurring charge may be created. The document only asks for a due
 * date not before the creation date; Pix Automático's rules (Regulamento) have the receiver send the
 * charge between 10 and 2 days before it. A test may relax the bounds.
 */
export interface ChargeWindow {
  minDaysBefore: number;
  maxDaysBefore: number;
}

export const DEFAULT_CHARGE_WINDOW: ChargeWindow = { minDaysBefore: 2, maxDaysBefore: 10 };

/** PERMITE_3R_7D (the rules outside the document): at most 3 retries, settling within 7 days after the due date. */
const MAX_RETRIES = 3;
const RETRY_WINDOW_DAYS = 7;

/** The attempt rejection codes that also reject the charge (CobRTentativas.rejeicao.codigo); the others fail the attempt only. */
const CHARGE_REJECTING_CODES = new Set<CobRRejeicaoCodigo>(['AC05', 'AM09', 'DENC', 'DS27', 'DTED', 'MIDI', 'MSUC', 'NITX', 'RC09']);

const OPEN_ATTEMPTS = new Set<TentativaStatus>(['SOLICITADA', 'AGENDADA']);
const ENDED_RECS = new Set<RecStatus>(['REJEITADA', 'EXPIRADA', 'CANCELADA']);
const PENDING_CHARGES = new Set<CobRStatus>(['CRIADA', 'ATIVA']);
const MONTHS_PER_PERIOD = { MENSAL: 1, TRIMESTRAL: 3, SEMESTRAL: 6, ANUAL: 12 } as const;

/** The IBGE code the payer's municipality gets when a scenario names none (São Paulo). */
const DEFAULT_COD_MUN = '3550308';

/** The payer's PSP, as a scenario plays it when the payer approves a recurrence. */
export interface PayerPsp {
  /** Its ISPB: `pagador.ispbParticipante`, and the one stamped on each attempt's end-to-end id. */
  ispb?: string;
  codMun?: string;
}

interface RecRecord {
  rec: RecCompleta;
  locId?: number;
  createdAt: number;
}

/**
 * The receiving PSP's Pix Automático: locations for recurrence QRs (`/locrec`), recurrences (`/rec`), the
 * recurring charges under them (`/cobr`) with their settlement attempts and retries, and the two webhooks.
 * The rules are the document's "Violações" lists plus the Pix Automático rules the brief names (the
 * creation window, PERMITE_3R_7D's limits). Every date rule reads the PSP's clock. Every status change is
 * queued for the webhooks (`takeChanges`); the simulator decides when and whether to deliver them.
 * Scenario methods (approve, revoke, pay…) throw plain Errors for what a payer could not do.
 */
export class AutomaticPsp {
  chargeWindow: ChargeWindow;
  private readonly locs = new Map<number, LocRec>();
  private readonly recs = new Map<string, RecRecord>();
  private readonly cobrs = new Map<string, CobRCompleta>();
  private readonly webhooks = new Map<'rec' | 'cobr', WebhookAutomaticoCompleto>();
  private readonly changedRecs = new Set<string>();
  private readonly changedCobrs = new Set<string>();
  private nextLocationId = 1;

  constructor(
    private readonly receiver: ReceiverIdentity,
    /** The receiver's account: a recurring charge must credit it. */
    private readonly account: DadosBancariosRecebedor,
    /** The immediate charges (journey 3 links one) and the Pix received (a settled attempt is one). */
    private readonly cobs: ReceivingPsp,
    private readonly clock: Clock,
    chargeWindow: ChargeWindow = DEFAULT_CHARGE_WINDOW,
  ) {
    this.chargeWindow = { ...chargeWindow };
  }

  // ---------------------------------------------------------------- locations (/locrec)

  /** POST /locrec: a location no recurrence uses yet. */
  createLocation(): LocRec {
    const loc: LocRec = { id: this.nextLocationId++, location: recurrenceLocation(), criacao: this.clock.nowIso() };
    this.locs.set(loc.id, loc);
    return copy(loc);
  }

  /** GET /locrec/{id}: with the recurrence bound to it, if any. */
  getLocation(id: string): LocRec {
    const loc = /^\d+$/.test(id) ? this.locs.get(Number(id)) : undefined;
    if (!loc) throw problem('PayloadLocationRecNaoEncontrado');
    return copy(loc);
  }

  // ---------------------------------------------------------------- recurrences (/rec)

  /** POST /rec: a recurrence CRIADA, its idRec made by the PSP (`RR…` when it allows retries, `RN…` when not). */
  createRec(request: RecSolicitada): RecCompleta {
    const refuse = refusal('RecOperacaoInvalida');
    const today = this.clock.today();
    const { valor, calendario } = request;
    if (valor?.valorRec !== undefined && valor.valorMinimoRecebedor !== undefined) {
      throw refuse('rec.valor', 'Ambos os campos rec.valor.valorRec e rec.valor.valorMinimoRecebedor estão preenchidos.');
    }
    for (const [field, amount] of Object.entries(valor ?? {})) {
      if (amount !== undefined && amountCents(amount) === 0) throw refuse(`rec.valor.${field}`, `O campo rec.valor.${field} não respeita o schema: é zero.`);
    }
    if (calendario.dataInicial < today) throw refuse('rec.calendario.dataInicial', 'O campo rec.calendario.dataInicial é anterior à data de criação da recorrência.');
    if (calendario.dataFinal !== undefined && calendario.dataFinal < calendario.dataInicial) {
      throw refuse('rec.calendario.dataFinal', 'O campo rec.calendario.dataFinal é anterior ao campo rec.calendario.dataInicial.');
    }
    if (request.recebedor?.convenio !== undefined) throw refuse('rec.recebedor.convenio', 'O valor do campo rec.recebedor.convenio não é aceito pelo PSP Recebedor.');
    const loc = request.loc === undefined ? undefined : this.freeLocation(request.loc);
    const txid = request.ativacao?.dadosJornada?.txid;
    if (txid !== undefined) this.checkJourneyCharge(txid);
    const idRec = recurrenceId(request.politicaRetentativa === 'PERMITE_3R_7D', today);
    const rec: RecCompleta = {
      idRec,
      vinculo: request.vinculo,
      calendario: request.calendario,
      ...(valor ? { valor } : {}),
      recebedor: { cnpj: this.receiver.cnpj, nome: this.receiver.name },
      status: 'CRIADA',
      politicaRetentativa: request.politicaRetentativa,
      atualizacao: [{ status: 'CRIADA', data: this.clock.nowIso() }],
      ativacao: { tipoJornada: 'AGUARDANDO_DEFINICAO', ...(txid !== undefined ? { dadosJornada: { txid } } : {}) },
    };
    const record: RecRecord = { rec: copy(rec), createdAt: this.clock.now().getTime() };
    this.recs.set(idRec, record);
    if (loc) this.bind(record, loc);
    return this.recView(record, 'gerada');
  }

  /**
   * GET /rec/{idRec}: the recurrence and, when its locations allow, `dadosQR`: the recurrence QR (journey 2)
   * without `txid`, the composite QR of the immediate charge `txid` and the recurrence (journey 3) with it.
   */
  getRec(idRec: string, txid?: string): RecCompleta {
    const record = this.recRecord(idRec);
    const dadosQR = this.qrOf(record, txid);
    return { ...this.recView(record, 'completa'), ...(dadosQR ? { dadosQR } : {}) };
  }

  /** GET /rec: recurrences created from `inicio` to `fim`, filtered, one page. */
  listRecs(query: Record<string, string | undefined>): RecsConsultadas {
    const { inicio, fim } = checkedWindow(query, 'RecConsultaInvalida');
    const matching = [...this.recs.values()].filter(
      ({ rec, locId, createdAt }) =>
        inWindow(createdAt, inicio, fim) &&
        (query.cpf === undefined || rec.vinculo.devedor.cpf === query.cpf) &&
        (query.cnpj === undefined || rec.vinculo.devedor.cnpj === query.cnpj) &&
        (query.locationPresente === undefined || (query.locationPresente === 'true') === (locId !== undefined)) &&
        (query.status === undefined || rec.status === query.status) &&
        query.convenio === undefined, // no recurrence here has a convênio
    );
    const { paginacao, items } = this.page(matching, query);
    const parametros = {
      inicio,
      fim,
      ...definedOnly({ cpf: query.cpf, cnpj: query.cnpj, status: query.status }),
      ...(query.locationPresente === undefined ? {} : { locationPresente: query.locationPresente === 'true' }),
      ...(query.convenio === undefined ? {} : { recebedor: { convenio: query.convenio } }),
      paginacao,
    };
    return copy({ parametros, recs: items.map((record) => this.recView(record, 'completa')) });
  }

  /** PATCH /rec/{idRec}: the document's rules for a revision, checked in full before anything changes. */
  patchRec(idRec: string, changes: RecRevisada): RecCompleta {
    const refuse = refusal('RecOperacaoInvalida');
    const record = this.recRecord(idRec);
    const { rec } = record;
    if (ENDED_RECS.has(rec.status)) throw refuse('rec.status', 'A recorrência encontra-se expirada, cancelada ou rejeitada.');
    const newLoc = changes.loc !== undefined && changes.loc !== record.locId ? changes.loc : undefined;
    if (newLoc !== undefined && rec.status !== 'CRIADA') throw refuse('rec.loc', 'O campo rec.loc somente pode ser alterado quando a recorrência apresentar-se com o status CRIADA.');
    const dataInicial = changes.calendario?.dataInicial;
    if (dataInicial !== undefined) {
      if (rec.status !== 'CRIADA') throw refuse('rec.calendario.dataInicial', 'O campo rec.calendario.dataInicial somente pode ser alterado quando a recorrência apresentar-se com o status CRIADA.');
      if (dataInicial < rec.atualizacao[0].data.slice(0, 10) || dataInicial < this.clock.today()) {
        throw refuse('rec.calendario.dataInicial', 'O campo rec.calendario.dataInicial é anterior à data de criação da recorrência.');
      }
    }
    const loc = newLoc === undefined ? undefined : this.freeLocation(newLoc);
    const txid = changes.ativacao?.dadosJornada?.txid;
    if (txid !== undefined) this.checkJourneyCharge(txid);

    if (loc) {
      this.unbind(record);
      this.bind(record, loc);
    }
    if (dataInicial !== undefined) rec.calendario.dataInicial = dataInicial;
    if (changes.vinculo?.devedor) rec.vinculo.devedor.nome = changes.vinculo.devedor.nome;
    if (txid !== undefined) rec.ativacao.dadosJornada = { txid };
    if (changes.status === 'CANCELADA') this.cancelRec(record, 'USUARIO_RECEBEDOR', 'SLCR', 'Cancelamento solicitado pelo usuário recebedor.');
    return this.recView(record, 'gerada');
  }

  /** The payer approves (journey 2 by default: the recurrence QR read; journey 3 is `approveByPayment`). */
  approve(idRec: string, journey: 'JORNADA_2' | 'JORNADA_3' = 'JORNADA_2', payer: PayerPsp = {}): RecCompleta {
    const record = this.scenarioRec(idRec, 'approved');
    const { rec } = record;
    const { devedor } = rec.vinculo;
    rec.pagador = {
      ispbParticipante: payer.ispb ?? randomIspb(),
      codMun: payer.codMun ?? DEFAULT_COD_MUN,
      ...(devedor.cpf !== undefined ? { cpf: devedor.cpf } : { cnpj: devedor.cnpj as string }),
    };
    // The document: dadosJornada is removed when activation is by journey 1, 2 or 4.
    rec.ativacao = journey === 'JORNADA_3' && rec.ativacao.dadosJornada ? { tipoJornada: 'JORNADA_3', dadosJornada: rec.ativacao.dadosJornada } : { tipoJornada: journey };
    this.setRecStatus(record, 'APROVADA');
    return this.recView(record, 'completa');
  }

  /** Journey 3: the immediate charge `txid` was paid, which approves the recurrence CRIADA that names it. */
  approveByPayment(txid: string): RecCompleta | undefined {
    const record = [...this.recs.values()].find(({ rec }) => rec.status === 'CRIADA' && rec.ativacao.dadosJornada?.txid === txid);
    return record ? this.approve(record.rec.idRec, 'JORNADA_3') : undefined;
  }

  /** The payer rejects the recurrence (AP13 or AP14, the catalog's codes the document allows). */
  reject(idRec: string, codigo: RecRejeicaoCodigo, descricao: string): RecCompleta {
    const record = this.scenarioRec(idRec, 'rejected');
    record.rec.encerramento = { rejeicao: { codigo, descricao } };
    this.setRecStatus(record, 'REJEITADA');
    return this.recView(record, 'completa');
  }

  /** The recurrence was never approved in time (the document gives no duration: a scenario says when). */
  expire(idRec: string): RecCompleta {
    const record = this.scenarioRec(idRec, 'expired');
    this.setRecStatus(record, 'EXPIRADA');
    return this.recView(record, 'completa');
  }

  /**
   * The payer (or the payer's PSP) revokes the authorization: CANCELADA with its `solicitante` and code,
   * and the charges still pending under it are cancelled with it.
   */
  revoke(idRec: string, solicitante: Solicitante, codigo: RecCancelamentoCodigo, descricao: string): RecCompleta {
    const record = this.recs.get(idRec);
    if (!record) throw new Error(`no recurrence ${idRec}`);
    if (ENDED_RECS.has(record.rec.status)) throw new Error(`recurrence ${idRec} is ${record.rec.status}: there is nothing to revoke`);
    this.cancelRec(record, solicitante, codigo, descricao);
    return this.recView(record, 'completa');
  }

  findRec(idRec: string): RecCompleta | undefined {
    const record = this.recs.get(idRec);
    return record ? this.recView(record, 'completa') : undefined;
  }

  allRecs(): RecCompleta[] {
    return [...this.recs.values()].map((record) => this.recView(record, 'completa'));
  }

  // ---------------------------------------------------------------- recurring charges (/cobr)

  /**
   * PUT /cobr/{txid}: a charge CRIADA under an APROVADA recurrence. The document refuses a txid "em uso",
   * so a repeated PUT is refused too: the client reads the charge it made with GET.
   */
  putCobr(txid: string, request: CobRSolicitada): CobRCompleta {
    const refuse = refusal('CobROperacaoInvalida');
    if (this.cobrs.has(txid) || this.cobs.findCob(txid)) throw refuse('cobr.txid', 'O campo cobr.txid encontra-se em uso.');
    const record = this.recs.get(request.idRec);
    if (!record) throw problem('NaoEncontrado', 'Recorrência não encontrada para o cobr.idRec informado.');
    const { rec } = record;
    if (rec.status !== 'APROVADA') throw refuse('cobr.idRec', `A recorrência referenciada por cobr.idRec não está APROVADA (está ${rec.status}).`);
    const today = this.clock.today();
    const due = request.calendario.dataDeVencimento;
    if (due < today) throw refuse('cobr.calendario.dataDeVencimento', 'O campo cobr.calendario.dataDeVencimento é anterior à data de criação da cobrança.');
    const lead = daysBetween(today, due);
    const { minDaysBefore, maxDaysBefore } = this.chargeWindow;
    if (lead < minDaysBefore || lead > maxDaysBefore) {
      const reason = `A cobrança recorrente deve ser criada entre ${maxDaysBefore} e ${minDaysBefore} dias antes de cobr.calendario.dataDeVencimento; faltam ${lead}.`;
      throw refuse('cobr.calendario.dataDeVencimento', reason);
    }
    if (due < rec.calendario.dataInicial || (rec.calendario.dataFinal !== undefined && due > rec.calendario.dataFinal)) {
      throw refuse('cobr.calendario.dataDeVencimento', 'O campo cobr.calendario.dataDeVencimento está fora da vigência da recorrência (calendario.dataInicial a calendario.dataFinal).');
    }
    if (amountCents(request.valor.original) === 0) throw refuse('cobr.valor.original', 'O campo cobr.valor.original é zero.');
    if (!isSameAccount(request.recebedor, this.account)) {
      throw refuse('cobr.recebedor', 'Os campos cobr.recebedor.conta e cobr.recebedor.agencia correspondem a uma conta que não pertence a este usuário recebedor.');
    }
    const cycle = cycleOf(rec.calendario, due);
    const clash = [...this.cobrs.values()].find(
      (other) => other.idRec === rec.idRec && other.status !== 'REJEITADA' && other.status !== 'CANCELADA' && cycleOf(rec.calendario, other.calendario.dataDeVencimento) === cycle,
    );
    if (clash) {
      const reason = `Existe uma CobR com status diferente de REJEITADA e CANCELADA referente ao mesmo cobr.idRec com calendario.dataDeVencimento no mesmo ciclo (txid ${clash.txid}).`;
      throw refuse('cobr.calendario.dataDeVencimento', reason);
    }
    const cobr: CobRCompleta = {
      idRec: rec.idRec,
      txid,
      ...(request.infoAdicional !== undefined ? { infoAdicional: request.infoAdicional } : {}),
      calendario: { criacao: today, dataDeVencimento: due },
      valor: request.valor,
      ajusteDiaUtil: request.ajusteDiaUtil,
      recebedor: { ...request.recebedor, cnpj: this.receiver.cnpj, nome: this.receiver.name },
      ...(request.devedor ? { devedor: request.devedor } : {}),
      status: 'CRIADA',
      politicaRetentativa: rec.politicaRetentativa,
      atualizacao: [{ status: 'CRIADA', data: this.clock.nowIso() }],
      tentativas: [],
    };
    this.cobrs.set(txid, copy(cobr));
    return cobr;
  }

  getCobr(txid: string): CobRCompleta {
    return copy(this.cobrRecord(txid));
  }

  /** GET /cobr: charges created from `inicio` to `fim`, filtered, one page. */
  listCobrs(query: Record<string, string | undefined>): CobsRConsultadas {
    const { inicio, fim } = checkedWindow(query, 'CobRConsultaInvalida');
    const matching = [...this.cobrs.values()].filter((cobr) => {
      const devedor = this.recs.get(cobr.idRec)?.rec.vinculo.devedor;
      return (
        inWindow(Date.parse(cobr.atualizacao[0].data), inicio, fim) &&
        (query.idRec === undefined || cobr.idRec === query.idRec) &&
        (query.cpf === undefined || devedor?.cpf === query.cpf) &&
        (query.cnpj === undefined || devedor?.cnpj === query.cnpj) &&
        (query.status === undefined || cobr.status === query.status) &&
        query.convenio === undefined
      );
    });
    const { paginacao, items } = this.page(matching, query);
    const parametros = {
      inicio,
      fim,
      ...definedOnly({ idRec: query.idRec, cpf: query.cpf, cnpj: query.cnpj, status: query.status }),
      ...(query.convenio === undefined ? {} : { recebedor: { convenio: query.convenio } }),
      paginacao,
    };
    return copy({ parametros, cobsr: items });
  }

  /** PATCH /cobr/{txid}: cancellation, only before the day of the first settlement attempt. */
  patchCobr(txid: string, changes: { status?: 'CANCELADA' }): CobRCompleta {
    const refuse = refusal('CobROperacaoInvalida');
    const cobr = this.cobrRecord(txid);
    if (changes.status !== 'CANCELADA') return copy(cobr);
    if (!PENDING_CHARGES.has(cobr.status)) throw refuse('cobr.status', `A cobrança recorrente está ${cobr.status} e não pode ser cancelada.`);
    const firstAttemptDay = cobr.tentativas[0]?.dataLiquidacao ?? settlementDate(cobr);
    if (this.clock.today() >= firstAttemptDay) {
      throw refuse('cobr.status', 'Não é possível cancelar uma cobrança em uma data igual ou maior que a data prevista da primeira tentativa de liquidação.');
    }
    this.cancelCharge(cobr, 'USUARIO_RECEBEDOR', 'SLCR', 'Cancelamento solicitado pelo usuário recebedor.');
    return copy(cobr);
  }

  /**
   * POST /cobr/{txid}/retentativa/{data}: a new attempt (NTAG) settling on `data`. The document's rules
   * (policy, no open attempt, none already for `data`, `data` in the future) and PERMITE_3R_7D's limits.
   */
  retry(txid: string, data: string): CobRCompleta {
    const cobr = this.cobrRecord(txid);
    const refuse = (reason: string) => problem('CobROperacaoInvalida', reason, [{ property: 'data', reason }]);
    if (cobr.politicaRetentativa !== 'PERMITE_3R_7D') throw refuse('A política configurada na recorrência não permite retentativa de cobrança.');
    if (cobr.status !== 'ATIVA') throw refuse(`A cobrança recorrente está ${cobr.status}: não admite nova tentativa.`);
    if (cobr.tentativas.some((attempt) => OPEN_ATTEMPTS.has(attempt.status))) throw refuse('Existe uma tentativa com status SOLICITADA ou AGENDADA.');
    if (cobr.tentativas.some((attempt) => attempt.dataLiquidacao === data)) throw refuse('Existe uma tentativa vigente para a data informada.');
    if (data <= this.clock.today()) throw refuse('O parâmetro data não corresponde a uma data futura.');
    if (retriesOf(cobr) >= MAX_RETRIES) throw refuse(`A política PERMITE_3R_7D admite no máximo ${MAX_RETRIES} retentativas, já solicitadas.`);
    const due = cobr.calendario.dataDeVencimento;
    if (data <= due || data > addDays(due, RETRY_WINDOW_DAYS)) {
      throw refuse(`A política PERMITE_3R_7D admite retentativas somente nos ${RETRY_WINDOW_DAYS} dias posteriores ao vencimento (${due}).`);
    }
    const attempt = this.newAttempt(cobr, 'NTAG', data);
    setAttemptStatus(attempt, 'AGENDADA', this.clock.nowIso());
    this.changedCobrs.add(txid);
    return copy(cobr);
  }

  /**
   * The payer's PSP accepts the charge's schedule instruction: ATIVA, with its first attempt (AGND) AGENDADA
   * on the due date, moved to the next business day when `ajusteDiaUtil`. A charge whose amount is not the
   * recurrence's fixed `valorRec` is rejected instead (AM09, which rejects the charge). False when the
   * charge was no longer CRIADA.
   */
  activate(txid: string): boolean {
    const cobr = this.cobrs.get(txid);
    if (!cobr || cobr.status !== 'CRIADA') return false;
    const rec = (this.recs.get(cobr.idRec) as RecRecord).rec;
    const attempt = this.newAttempt(cobr, 'AGND', settlementDate(cobr));
    const valorRec = rec.valor?.valorRec;
    if (valorRec !== undefined && amountCents(valorRec) !== amountCents(cobr.valor.original)) {
      const rejeicao = { codigo: 'AM09' as const, descricao: 'Valor da cobrança não corresponde ao valor estabelecido na recorrência.' };
      attempt.rejeicao = rejeicao;
      setAttemptStatus(attempt, 'REJEITADA', this.clock.nowIso());
      cobr.encerramento = { rejeicao };
      this.setChargeStatus(cobr, 'REJEITADA');
    } else {
      setAttemptStatus(attempt, 'AGENDADA', this.clock.nowIso());
      this.setChargeStatus(cobr, 'ATIVA');
    }
    return true;
  }

  /**
   * The current attempt settles: the attempt PAGA, the charge CONCLUIDA with the Pix in `pix[]`, which the
   * receiver also finds through GET /pix like any other.
   */
  pay(txid: string, infoPagador?: string): Pix {
    const { cobr, attempt } = this.currentAttempt(txid);
    const at = this.clock.nowIso();
    setAttemptStatus(attempt, 'PAGA', at);
    const devedor = (this.recs.get(cobr.idRec) as RecRecord).rec.vinculo.devedor;
    const payer = devedor.cpf !== undefined ? { cpf: devedor.cpf } : { cnpj: devedor.cnpj };
    const pix = this.cobs.receive({ txid, valor: cobr.valor.original, payer, infoPagador, account: { endToEndId: attempt.endToEndId } });
    cobr.pix = [...(cobr.pix ?? []), { endToEndId: pix.endToEndId, txid, valor: pix.valor, horario: pix.horario, ...(infoPagador !== undefined ? { infoPagador } : {}) }];
    this.setChargeStatus(cobr, 'CONCLUIDA');
    return pix;
  }

  /**
   * The current attempt fails with `codigo`: REJEITADA. A code that rejects the charge rejects it; otherwise
   * the charge stays ATIVA while the policy still allows a retry, and is EXPIRADA when it does not.
   */
  fail(txid: string, codigo: CobRRejeicaoCodigo, descricao: string): CobRCompleta {
    const { cobr, attempt } = this.currentAttempt(txid);
    attempt.rejeicao = { codigo, descricao };
    setAttemptStatus(attempt, 'REJEITADA', this.clock.nowIso());
    if (CHARGE_REJECTING_CODES.has(codigo)) {
      cobr.encerramento = { rejeicao: { codigo, descricao } };
      this.setChargeStatus(cobr, 'REJEITADA');
    } else if (this.retryDates(cobr).length === 0) {
      this.setChargeStatus(cobr, 'EXPIRADA');
    } else {
      this.changedCobrs.add(txid);
    }
    return copy(cobr);
  }

  /** Charges ATIVA with no attempt open that the policy no longer lets retry (the clock moved on): EXPIRADA. */
  sweep(): void {
    for (const cobr of this.cobrs.values()) {
      if (cobr.status !== 'ATIVA' || cobr.tentativas.some((attempt) => OPEN_ATTEMPTS.has(attempt.status))) continue;
      if (this.retryDates(cobr).length === 0) this.setChargeStatus(cobr, 'EXPIRADA');
    }
  }

  findCobr(txid: string): CobRCompleta | undefined {
    const cobr = this.cobrs.get(txid);
    return cobr ? copy(cobr) : undefined;
  }

  allCobrs(): CobRCompleta[] {
    return [...this.cobrs.values()].map((cobr) => copy(cobr));
  }

  // ---------------------------------------------------------------- webhooks (/webhookrec, /webhookcobr)

  /** PUT /webhookrec or /webhookcobr: one per receiver for each, replaced by a new PUT. */
  putWebhook(kind: 'rec' | 'cobr', webhookUrl: string): void {
    this.webhooks.set(kind, { webhookUrl, criacao: this.clock.nowIso() });
  }

  getWebhook(kind: 'rec' | 'cobr'): WebhookAutomaticoCompleto {
    const webhook = this.webhooks.get(kind);
    if (!webhook) throw problem('NaoEncontrado', 'Nenhum webhook está configurado.');
    return copy(webhook);
  }

  deleteWebhook(kind: 'rec' | 'cobr'): void {
    if (!this.webhooks.delete(kind)) throw problem('NaoEncontrado', 'Nenhum webhook está configurado.');
  }

  webhookUrl(kind: 'rec' | 'cobr'): string | undefined {
    return this.webhooks.get(kind)?.webhookUrl;
  }

  /** The recurrences and charges whose status changed since the last call, as notifications of their state now. */
  takeChanges(): { recs: RecNotification[]; cobsr: CobRNotification[] } {
    const recs = [...this.changedRecs].map((idRec) => recNotification((this.recs.get(idRec) as RecRecord).rec));
    const cobsr = [...this.changedCobrs].map((txid) => cobrNotification(this.cobrs.get(txid) as CobRCompleta));
    this.changedRecs.clear();
    this.changedCobrs.clear();
    return copy({ recs, cobsr });
  }

  // ---------------------------------------------------------------- internals

  private recRecord(idRec: string): RecRecord {
    const record = this.recs.get(idRec);
    if (!record) throw problem('RecNaoEncontrada');
    return record;
  }

  private cobrRecord(txid: string): CobRCompleta {
    const cobr = this.cobrs.get(txid);
    if (!cobr) throw problem('CobRNaoEncontrado');
    return cobr;
  }

  /** A recurrence a payer acts on: it must exist and still wait for the payer (CRIADA). */
  private scenarioRec(idRec: string, what: string): RecRecord {
    const record = this.recs.get(idRec);
    if (!record) throw new Error(`no recurrence ${idRec}`);
    if (record.rec.status !== 'CRIADA') throw new Error(`recurrence ${idRec} is ${record.rec.status}: only a CRIADA one can be ${what}`);
    return record;
  }

  /** The charge's open attempt, the charge activated first if the payer's PSP had not yet. */
  private currentAttempt(txid: string): { cobr: CobRCompleta; attempt: Tentativa } {
    const cobr = this.cobrs.get(txid);
    if (!cobr) throw new Error(`no recurring charge ${txid}`);
    this.activate(txid);
    const attempt = cobr.tentativas.find((candidate) => OPEN_ATTEMPTS.has(candidate.status));
    if (cobr.status !== 'ATIVA' || !attempt) throw new Error(`recurring charge ${txid} is ${cobr.status} with no attempt open: nothing to settle`);
    return { cobr, attempt };
  }

  /** A location that exists and no other recurrence uses. */
  private freeLocation(id: number): LocRec {
    const refuse = refusal('RecOperacaoInvalida');
    const loc = this.locs.get(id);
    if (!loc) throw refuse('rec.loc', 'O location referenciado por rec.loc inexiste.');
    if (loc.idRec !== undefined) throw refuse('rec.loc', 'O location referenciado por rec.loc já está sendo utilizado por outra recorrência.');
    return loc;
  }

  /** Journey 3 names an immediate charge of this receiver. */
  private checkJourneyCharge(txid: string): void {
    if (!this.cobs.findCob(txid)) {
      const reason = 'O campo rec.ativacao.dadosJornada.txid não corresponde a uma cobrança imediata deste usuário recebedor.';
      throw problem('RecOperacaoInvalida', reason, [{ property: 'rec.ativacao.dadosJornada.txid', reason }]);
    }
  }

  private bind(record: RecRecord, loc: LocRec): void {
    loc.idRec = record.rec.idRec;
    record.locId = loc.id;
  }

  private unbind(record: RecRecord): void {
    if (record.locId !== undefined) delete (this.locs.get(record.locId) as LocRec).idRec;
    delete record.locId;
  }

  /**
   * A recurrence as answered: `gerada` for POST and PATCH (RecGerada: no `pagador`), `completa` for GET
   * (RecCompleta, and the list's RecCompletaPesquisada). `politicaRetentativa` is always there, as the
   * document's examples show it even where RecGerada does not define it.
   */
  private recView(record: RecRecord, view: 'gerada' | 'completa'): RecCompleta {
    const { pagador, ...rec } = record.rec;
    const loc = record.locId === undefined ? undefined : (this.locs.get(record.locId) as LocRec);
    return copy({ ...rec, ...(view === 'completa' && pagador ? { pagador } : {}), ...(loc ? { loc } : {}) });
  }

  private qrOf(record: RecRecord, txid: string | undefined): RecCompleta['dadosQR'] {
    const loc = record.locId === undefined ? undefined : (this.locs.get(record.locId) as LocRec);
    if (txid === undefined) return loc ? { jornada: 'JORNADA_2', pixCopiaECola: this.brCode({ urlRec: loc.location }) } : undefined;
    const { ativacao } = record.rec;
    const refuse = (reason: string) => problem('RecConsultaInvalida', reason, [{ property: 'txid', reason }]);
    const cob = this.cobs.findCob(txid);
    if (!cob || (ativacao.tipoJornada !== 'AGUARDANDO_DEFINICAO' && ativacao.tipoJornada !== 'JORNADA_3')) {
      throw refuse('O parâmetro txid não corresponde a uma cobrança compatível com o campo ativacao.tipoJornada.');
    }
    if (ativacao.dadosJornada?.txid !== txid) throw refuse('O parâmetro txid corresponde a uma cobrança imediata diferente da informada no campo ativacao.dadosJornada.txid.');
    return loc ? { jornada: 'JORNADA_3', pixCopiaECola: this.brCode({ urlRec: loc.location, url: cob.location }) } : undefined;
  }

  /**
   * A recurrence BR Code: the recurrence location in ID 80 alone (journey 2), or with the immediate charge's
   * location in ID 26 (journey 3's composite QR).
   */
  private brCode(locations: { urlRec: string; url?: string }): string {
    const merchant = { merchantName: this.receiver.name, merchantCity: this.receiver.city };
    const code = locations.url ? createDynamicPix({ ...merchant, url: locations.url, urlRec: locations.urlRec }) : createRecurrencePix({ ...merchant, urlRec: locations.urlRec });
    if (hasError(code)) throw new Error(`BR Code: ${code.message}`);
    return code.toBRCode();
  }

  private setRecStatus(record: RecRecord, status: RecStatus): void {
    record.rec.status = status;
    record.rec.atualizacao.push({ status, data: this.clock.nowIso() });
    this.changedRecs.add(record.rec.idRec);
  }

  /** CANCELADA, and every charge still pending under it cancelled with it (the payer's side: SLBD; the receiver's: SLCR). */
  private cancelRec(record: RecRecord, solicitante: Solicitante, codigo: RecCancelamentoCodigo, descricao: string): void {
    record.rec.encerramento = { cancelamento: { solicitante, codigo, descricao } } satisfies RecEncerramento;
    this.setRecStatus(record, 'CANCELADA');
    const chargeCode: CobRCancelamentoCodigo = solicitante === 'USUARIO_RECEBEDOR' || solicitante === 'PSP_RECEBEDOR' ? 'SLCR' : 'SLBD';
    for (const cobr of this.cobrs.values()) {
      if (cobr.idRec === record.rec.idRec && PENDING_CHARGES.has(cobr.status)) this.cancelCharge(cobr, solicitante, chargeCode, 'Recorrência cancelada.');
    }
  }

  private cancelCharge(cobr: CobRCompleta, solicitante: Solicitante, codigo: CobRCancelamentoCodigo, descricao: string): void {
    const at = this.clock.nowIso();
    for (const attempt of cobr.tentativas) if (OPEN_ATTEMPTS.has(attempt.status)) setAttemptStatus(attempt, 'CANCELADA', at);
    cobr.encerramento = { cancelamento: { solicitante, codigo, descricao } } satisfies CobREncerramento;
    this.setChargeStatus(cobr, 'CANCELADA');
  }

  private setChargeStatus(cobr: CobRCompleta, status: CobRStatus): void {
    cobr.status = status;
    cobr.atualizacao.push({ status, data: this.clock.nowIso() });
    this.changedCobrs.add(cobr.txid);
  }

  /** An attempt SOLICITADA, its end-to-end id stamped by the payer's PSP. */
  private newAttempt(cobr: CobRCompleta, tipo: TentativaTipo, dataLiquidacao: string): Tentativa {
    const ispb = (this.recs.get(cobr.idRec) as RecRecord).rec.pagador?.ispbParticipante;
    const at = this.clock.now();
    const attempt: Tentativa = { dataLiquidacao, tipo, status: 'SOLICITADA', endToEndId: endToEndId(at, ispb), atualizacao: [{ status: 'SOLICITADA', data: at.toISOString() }] };
    cobr.tentativas.push(attempt);
    return attempt;
  }

  /** The dates a retry may still settle on: none without PERMITE_3R_7D or with its 3 retries used. */
  private retryDates(cobr: CobRCompleta): string[] {
    if (cobr.politicaRetentativa !== 'PERMITE_3R_7D' || retriesOf(cobr) >= MAX_RETRIES) return [];
    const today = this.clock.today();
    const due = cobr.calendario.dataDeVencimento;
    const dates: string[] = [];
    for (let day = 1; day <= RETRY_WINDOW_DAYS; day += 1) {
      const date = addDays(due, day);
      if (date > today && !cobr.tentativas.some((attempt) => attempt.dataLiquidacao === date)) dates.push(date);
    }
    return dates;
  }

  private page<T>(items: T[], query: Record<string, string | undefined>): { paginacao: RecsConsultadas['parametros']['paginacao']; items: T[] } {
    const itensPorPagina = Math.min(Number(query['paginacao.itensPorPagina'] ?? this.cobs.pageSize), this.cobs.maxPageSize);
    const paginaAtual = Number(query['paginacao.paginaAtual'] ?? 0);
    const quantidadeDePaginas = Math.max(1, Math.ceil(items.length / itensPorPagina));
    return {
      paginacao: { paginaAtual, itensPorPagina, quantidadeDePaginas, quantidadeTotalDeItens: items.length },
      items: items.slice(paginaAtual * itensPorPagina, (paginaAtual + 1) * itensPorPagina),
    };
  }
}

/** A refusal of type `type` naming the offending property. */
function refusal(type: ProblemType): (property: string, reason: string) => PixProblem {
  return (property, reason) => problem(type, reason, [{ property, reason } satisfies PixViolation]);
}

/** The list endpoints' shared rules: `fim` not before `inicio`, not both `cpf` and `cnpj`. */
function checkedWindow(query: Record<string, string | undefined>, type: ProblemType): { inicio: string; fim: string } {
  const inicio = query.inicio as string;
  const fim = query.fim as string;
  if (Date.parse(fim) < Date.parse(inicio)) throw problem(type, 'O timestamp representado pelo parâmetro fim é anterior ao timestamp representado pelo parâmetro inicio.');
  if (query.cpf !== undefined && query.cnpj !== undefined) throw problem(type, 'Ambos os parâmetros cpf e cnpj estão preenchidos.');
  return { inicio, fim };
}

function inWindow(at: number, inicio: string, fim: string): boolean {
  return at >= Date.parse(inicio) && at <= Date.parse(fim);
}

function definedOnly(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Record<string, string>;
}

function isSameAccount(asked: DadosBancariosRecebedor, own: DadosBancariosRecebedor): boolean {
  return asked.conta === own.conta && asked.tipoConta === own.tipoConta && (asked.agencia ?? own.agencia) === own.agencia;
}

/** The day the first attempt settles: the due date, or the next business day from it when `ajusteDiaUtil`. */
function settlementDate(cobr: CobRCompleta): string {
  return cobr.ajusteDiaUtil ? businessDayFrom(cobr.calendario.dataDeVencimento) : cobr.calendario.dataDeVencimento;
}

function retriesOf(cobr: CobRCompleta): number {
  return cobr.tentativas.filter((attempt) => attempt.tipo === 'NTAG').length;
}

/**
 * The cycle a date falls in, counted from the recurrence's first date: weeks for SEMANAL, calendar months
 * (in groups of 3, 6 or 12) for the others. At most one live charge per recurrence and cycle.
 */
function cycleOf(calendario: RecCalendario, date: string): number {
  if (calendario.periodicidade === 'SEMANAL') return Math.floor(daysBetween(calendario.dataInicial, date) / 7);
  const month = (day: string) => Number(day.slice(0, 4)) * 12 + Number(day.slice(5, 7)) - 1;
  return Math.floor((month(date) - month(calendario.dataInicial)) / MONTHS_PER_PERIOD[calendario.periodicidade]);
}

function setAttemptStatus(attempt: Tentativa, status: TentativaStatus, at: string): void {
  attempt.status = status;
  attempt.atualizacao.push({ status, data: at });
}

function recNotification(rec: RecCompleta): RecNotification {
  return { idRec: rec.idRec, status: rec.status, atualizacao: rec.atualizacao, ...(rec.encerramento ? { encerramento: rec.encerramento } : {}), ativacao: rec.ativacao };
}

function cobrNotification(cobr: CobRCompleta): CobRNotification {
  return {
    idRec: cobr.idRec,
    txid: cobr.txid,
    status: cobr.status,
    atualizacao: cobr.atualizacao,
    ...(cobr.encerramento ? { encerramento: cobr.encerramento } : {}),
    tentativas: cobr.tentativas,
    ...(cobr.pix ? { pix: cobr.pix } : {}),
  };
}
