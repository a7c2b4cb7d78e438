import { readFile } from 'node:fs/promises';
import { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer, Server } from 'node:https';
import { once } from 'node:events';
import { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { AutomaticPsp, ChargeWindow, DEFAULT_CHARGE_WINDOW, PayerPsp } from './automatic';
import { CallbackDelivery, PspTls, deliverCallback } from './callbacks';
import { PixCertificates } from './certificates';
import { Clock } from './clock';
import { EFI_SCOPES, EfiSendOptions, EfiSendSimulator } from './efi-send';
import { FaultFilter, FaultPlan, PlannedFailure } from './faults';
import { randomTxid } from './ids';
import { TokenIssuer } from './oauth';
import { checkProblem, checkRequest, checkResponse, documentScopes, operationScopes, PixViolation, validateWebhookBody, violationText, WebhookKind } from './openapi';
import { generalProblem, PixProblem, problem, ProblemType } from './problems';
import { ReceivingPsp } from './psp';
import {
  CobCompleta,
  CobRCompleta,
  CobRRejeicaoCodigo,
  CobRSolicitada,
  CobSolicitada,
  DadosBancariosRecebedor,
  Devolucao,
  DevolucaoSolicitada,
  Pix,
  RecCancelamentoCodigo,
  RecCompleta,
  RecRejeicaoCodigo,
  RecRevisada,
  RecSolicitada,
  RefundOutcome,
} from './types';

export interface ApiPixSimulatorOptions {
  certs: PixCertificates;
  clientId: string;
  clientSecret: string;
  /** The receiver's Pix key: charges must name it; webhooks hang on it. */
  receiverKey: string;
  /** Lifetime of each access token; 3600 when absent. */
  tokenTtlSeconds?: number;
  /** The receiver's CNPJ, which `WebhookCompleto` requires. */
  receiverCnpj?: string;
  /** The merchant name and city written in every BR Code. */
  receiverName?: string;
  receiverCity?: string;
  /** The receiver's account, which every recurring charge must credit (`recebedor`); 0001 / 12345678 CORRENTE when absent. */
  receiverAccount?: DadosBancariosRecebedor;
  /** The PSP's "now" at start (see setNow); the wall clock when absent. */
  now?: Date;
  /** How many days before its due date a recurring charge may be created; 10 to 2 when absent. */
  chargeWindow?: ChargeWindow;
  /**
   * Plays Efí's Pix send API on the same host, OAuth client and certificate (efi-send.ts): its scopes join
   * the token's, and the token endpoint takes Efí's JSON body too. Off when absent.
   */
  efi?: EfiSendOptions;
}

/** How the payer settles a recurring charge's attempt, and whether the PSP tells the receiver. */
export interface SettleOptions {
  notify?: Notify;
  /** The payer's message to the receiver, on a paid attempt. */
  infoPagador?: string;
}

/**
 * A failed attempt. The catalog's code for insufficient funds (AM04) is not among the document's codes, and
 * the document gives no code a meaning; AB10 (a failure at the payer's PSP) is one of those that fail the
 * attempt only. A code of the document's list that rejects the charge (AC05, AM09, …) rejects it.
 */
export interface FailOptions {
  notify?: Notify;
  codigo?: CobRRejeicaoCodigo;
  descricao?: string;
}

/** The payer's side of a recurrence, for the scenario controls; `notify` says whether /rec is called. */
export interface RecurrenceActionOptions {
  notify?: Notify;
}

/** How often the PSP calls the webhook about one event: 'twice' plays a duplicate notification. */
export type Notify = 'once' | 'twice' | 'never';

export interface PayOptions {
  /** What the payer pays: the charge's `valor.original` when absent; another amount plays a mismatch. */
  amount?: string;
  notify?: Notify;
  /** Pays a charge that is expired, removed or already paid: a late (or second) payment. */
  force?: boolean;
  /** Matched by the GET /pix `cpf` filter; the document's Pix has no field for it. */
  payerCpf?: string;
  /** The payer's message to the receiver. */
  infoPagador?: string;
}

export interface UnknownPixOptions {
  /** A txid the receiver never created (random) when absent; null for a Pix without txid, never notified. */
  txid?: string | null;
  notify?: Notify;
  payerCpf?: string;
  payerCnpj?: string;
  infoPagador?: string;
}

export interface LoggedRequest {
  method: string;
  path: string;
  status: number;
}

interface Answer {
  status: number;
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

interface Call {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  rawBody: string;
}

interface RouteContext {
  params: Record<string, string>;
  query: Record<string, string>;
  body: unknown;
}

/** One operation of the document the simulator plays; `invalid` is the problem type of a request off its schema. */
interface Route {
  method: string;
  template: string;
  invalid: ProblemType;
  handle(context: RouteContext): Answer;
}

const API_PREFIX = '/v2';
const TOKEN_PATH = '/oauth/token';
const NOTIFICATIONS: Record<Notify, number> = { once: 1, twice: 2, never: 0 };

/**
 * A receiving PSP's API Pix (the BCB's document, release 2.9.0) on a real mutual-TLS server, for e2e tests of
 * the gateway: OAuth 2.0 client credentials, immediate charges, received Pix and their refunds, webhooks and
 * their callbacks. Every request is checked against the document, and so is every answer and callback the
 * simulator makes: anything off it lands in `violations` (an off-schema request is also answered 400).
 * Scenario controls play the payer, the refunds' settlement, expired tokens, outages and slowness.
 */
export class ApiPixSimulator {
  /** `https://127.0.0.1:<port>/v2` */
  baseUrl = '';
  /** `https://127.0.0.1:<port>/oauth/token` */
  tokenUrl = '';
  readonly violations: string[] = [];
  readonly requests: LoggedRequest[] = [];
  readonly callbacks: CallbackDelivery[] = [];
  private readonly pending = new Set<Promise<unknown>>();
  private readonly faults = new FaultPlan();
  private readonly routes: Route[];
  private autoSettleOutcome: RefundOutcome | null = null;
  private efiSend: EfiSendSimulator | undefined;
  private server: Server;

  private constructor(
    private readonly options: ApiPixSimulatorOptions,
    private readonly psp: ReceivingPsp,
    private readonly automatic: AutomaticPsp,
    private readonly clock: Clock,
    private readonly tokens: TokenIssuer,
    private readonly tls: PspTls,
  ) {
    this.routes = this.operations();
    if (options.efi) {
      this.efiSend = new EfiSendSimulator(
        {
          receiverKey: options.receiverKey,
          clock,
          tokens,
          faults: this.faults,
          violations: this.violations,
          webhookUrl: (chave) => this.psp.webhookUrl(chave),
          deliver: async (url, body) => {
            const delivery = await deliverCallback(url, body, this.tls);
            this.callbacks.push(delivery);
            return delivery;
          },
          track: (work) => this.track(work),
        },
        options.efi,
      );
    }
  }

  /** Efí's Pix send API (see efi-send.ts); the simulator must have been started with the `efi` option. */
  get efi(): EfiSendSimulator {
    if (!this.efiSend) throw new Error('Efí send API not simulated: start the simulator with the efi option');
    return this.efiSend;
  }

  static async start(options: ApiPixSimulatorOptions): Promise<ApiPixSimulator> {
    const [ca, cert, key] = await Promise.all([options.certs.caFile, options.certs.serverCertFile, options.certs.serverKeyFile].map((file) => readFile(file)));
    const receiver = {
      key: options.receiverKey,
      cnpj: options.receiverCnpj ?? '12345678000195',
      name: options.receiverName ?? 'PAYMENT GATEWAY LTDA',
      city: options.receiverCity ?? 'SAO PAULO',
    };
    const clock = new Clock(options.now);
    const psp = new ReceivingPsp(receiver, clock);
    const account = options.receiverAccount ?? { agencia: '0001', conta: '12345678', tipoConta: 'CORRENTE' };
    const automatic = new AutomaticPsp(receiver, account, psp, clock, options.chargeWindow ?? DEFAULT_CHARGE_WINDOW);
    const scopes = options.efi ? [...new Set([...documentScopes(), ...EFI_SCOPES])] : documentScopes();
    const tokens = new TokenIssuer(options, options.tokenTtlSeconds ?? 3600, scopes, options.efi !== undefined);
    const simulator = new ApiPixSimulator(options, psp, automatic, clock, tokens, { ca, cert, key });
    await simulator.listen({ ca, cert, key });
    return simulator;
  }

  get tokensIssued(): number {
    return this.tokens.issued;
  }

  /**
   * A payer pays charge `txid` (see ReceivingPsp.pay for when it becomes CONCLUIDA), and the webhook of the
   * receiver's key, if any, is called with the Pix; resolves once each delivery has been answered. Journey 3:
   * a charge that becomes CONCLUIDA approves the recurrence CRIADA whose `ativacao.dadosJornada.txid` it is,
   * and /rec is called too.
   */
  async pay(txid: string, options: PayOptions = {}): Promise<Pix> {
    if (options.amount !== undefined) assertAmount(options.amount);
    const pix = this.psp.pay(txid, { amount: options.amount, late: options.force, payer: { cpf: options.payerCpf }, infoPagador: options.infoPagador });
    if (this.psp.findCob(txid)?.status === 'CONCLUIDA') this.automatic.approveByPayment(txid);
    await this.notify([pix], options.notify ?? 'once');
    await this.notifyAutomatic(options.notify ?? 'once');
    return pix;
  }

  /**
   * The variables that point the gateway at this PSP (PIX_PROVIDER=api-pix, its URLs, OAuth client,
   * client certificate, CA, receiver key) with its webhook at `webhookUrl`; a test adds its own.
   */
  gatewayEnv(webhookUrl: string): Record<string, string> {
    const { certs, clientId, clientSecret, receiverKey } = this.options;
    return {
      PIX_PROVIDER: 'api-pix',
      API_PIX_BASE_URL: this.baseUrl,
      API_PIX_TOKEN_URL: this.tokenUrl,
      API_PIX_CLIENT_ID: clientId,
      API_PIX_CLIENT_SECRET: clientSecret,
      API_PIX_CERT_FILE: certs.clientCertFile,
      API_PIX_KEY_FILE: certs.clientKeyFile,
      API_PIX_CA_FILE: certs.caFile,
      API_PIX_RECEIVER_KEY: receiverKey,
      API_PIX_WEBHOOK_URL: webhookUrl,
    };
  }

  /** A Pix to the receiver's key that matches no charge (reconciliation): notified only when it has a txid. */
  async receiveUnknownPix(amount: string, options: UnknownPixOptions = {}): Promise<Pix> {
    assertAmount(amount);
    const txid = options.txid === undefined ? randomTxid() : (options.txid ?? undefined);
    const pix = this.psp.receive({ txid, valor: amount, payer: { cpf: options.payerCpf, cnpj: options.payerCnpj }, infoPagador: options.infoPagador });
    await this.notify([pix], options.notify ?? 'once');
    return pix;
  }

  /**
   * Every refund EM_PROCESSAMENTO reaches `outcome`; the webhook is called (unless `notify` is false) with
   * the Pix carrying them, once for all: the document has a refund reaching a final status trigger the
   * callback and lets the PSP group Pix in one. Returns those Pix.
   */
  async settleRefunds(outcome: RefundOutcome, options: { notify?: boolean; motivo?: string } = {}): Promise<Pix[]> {
    const settled = this.psp.settleRefunds(outcome, undefined, options.motivo);
    if (options.notify ?? true) await this.notify(settled, 'once');
    return settled;
  }

  /**
   * The PSP returns `valor` of Pix `e2eid` on its own (a MED, natureza MED_OPERACIONAL or MED_FRAUDE), with
   * an id the receiver never issued; the webhook is called with the Pix carrying it unless `notify` is false
   * (then only reconciliation can find it).
   */
  async returnOnItsOwn(e2eid: string, valor: string, options: { natureza?: 'MED_OPERACIONAL' | 'MED_FRAUDE'; notify?: boolean } = {}): Promise<Devolucao> {
    assertAmount(valor);
    const refund = this.psp.returnOnItsOwn(e2eid, valor, options.natureza ?? 'MED_OPERACIONAL');
    if (options.notify ?? true) await this.notify([this.psp.getPix(e2eid)], 'once');
    return refund;
  }

  /** From now on each refund settles with `outcome` (and is notified) right after its PUT is answered; null stops it. */
  autoSettleRefunds(outcome: RefundOutcome | null): void {
    this.autoSettleOutcome = outcome;
  }

  /**
   * The PSP's "now" becomes `date` (and runs on from it); null goes back to the wall clock. Every date rule
   * of Pix Automático reads it, as do the times the PSP stamps. Charges ATIVA that the policy no longer lets
   * retry become EXPIRADA (notified in the background: see whenIdle).
   */
  setNow(date: Date | string | null): void {
    this.clock.set(date === null ? null : new Date(date));
    this.automatic.sweep();
    this.track(this.notifyAutomatic('once'));
  }

  /** The PSP's now, and its date in Brazil (YYYY-MM-DD). */
  now(): Date {
    return this.clock.now();
  }

  today(): string {
    return this.clock.today();
  }

  /** How many days before its due date a recurring charge may be created (the rule is 10 to 2). */
  setChargeWindow(window: ChargeWindow): void {
    this.automatic.chargeWindow = { ...window };
  }

  /** The payer approves recurrence `idRec` by reading its QR (journey 2); journey 3 approves through pay(). */
  async approveRecurrence(idRec: string, options: RecurrenceActionOptions & { payer?: PayerPsp } = {}): Promise<RecCompleta> {
    const rec = this.automatic.approve(idRec, 'JORNADA_2', options.payer);
    await this.notifyAutomatic(options.notify ?? 'once');
    return rec;
  }

  /** The payer rejects it (AP13 when no code is given). */
  async rejectRecurrence(idRec: string, options: RecurrenceActionOptions & { codigo?: RecRejeicaoCodigo; descricao?: string } = {}): Promise<RecCompleta> {
    const rec = this.automatic.reject(idRec, options.codigo ?? 'AP13', options.descricao ?? 'Recorrência rejeitada pelo usuário pagador.');
    await this.notifyAutomatic(options.notify ?? 'once');
    return rec;
  }

  /** It was never approved in time: EXPIRADA. */
  async expireRecurrence(idRec: string, options: RecurrenceActionOptions = {}): Promise<RecCompleta> {
    const rec = this.automatic.expire(idRec);
    await this.notifyAutomatic(options.notify ?? 'once');
    return rec;
  }

  /**
   * The payer revokes the authorization: CANCELADA by USUARIO_PAGADOR with SLDB (the catalog's "requested by
   * the debtor", counterpart of the receiver's SLCR) unless told otherwise; charges pending under it are
   * cancelled too.
   */
  async revokeRecurrence(
    idRec: string,
    options: RecurrenceActionOptions & { solicitante?: 'USUARIO_PAGADOR' | 'PSP_PAGADOR'; codigo?: RecCancelamentoCodigo; descricao?: string } = {},
  ): Promise<RecCompleta> {
    const rec = this.automatic.revoke(idRec, options.solicitante ?? 'USUARIO_PAGADOR', options.codigo ?? 'SLDB', options.descricao ?? 'Autorização cancelada pelo usuário pagador.');
    await this.notifyAutomatic(options.notify ?? 'once');
    return rec;
  }

  /**
   * The current attempt of recurring charge `txid` is paid: CONCLUIDA, its Pix in `pix[]` and in GET /pix.
   * A charge the payer's PSP had not yet accepted is accepted first.
   */
  async payRecurringCharge(txid: string, options: SettleOptions = {}): Promise<Pix> {
    const pix = this.automatic.pay(txid, options.infoPagador);
    await this.notifyAutomatic(options.notify ?? 'once');
    return pix;
  }

  /** The current attempt fails (insufficient funds by default): see AutomaticPsp.fail for the charge's fate. */
  async failRecurringCharge(txid: string, options: FailOptions = {}): Promise<CobRCompleta> {
    const cobr = this.automatic.fail(txid, options.codigo ?? 'AB10', options.descricao ?? 'Saldo insuficiente na conta do usuário pagador.');
    await this.notifyAutomatic(options.notify ?? 'once');
    return cobr;
  }

  rec(idRec: string): RecCompleta | undefined {
    return this.automatic.findRec(idRec);
  }

  recs(): RecCompleta[] {
    return this.automatic.allRecs();
  }

  cobr(txid: string): CobRCompleta | undefined {
    return this.automatic.findCobr(txid);
  }

  cobrs(): CobRCompleta[] {
    return this.automatic.allCobrs();
  }

  /** Where /webhookrec and /webhookcobr point, if set. */
  automaticWebhookUrl(kind: 'rec' | 'cobr'): string | undefined {
    return this.automatic.webhookUrl(kind);
  }

  /** Every token issued so far is refused from now on (401), as after a PSP's key rotation. */
  expireTokens(): void {
    this.tokens.expireAll();
  }

  /** The next `count` matching calls answer `status` (503 by default) with the document's problem for it. */
  failNext(count: number, options: FaultFilter & { status?: number } = {}): void {
    this.faults.failNext(count, options.status ?? 503, options);
  }

  /**
   * The next `count` matching calls are refused with the document's problem `type` (a 4xx such as
   * CobOperacaoInvalida or AcessoNegado, with its status), `detail` saying which rule: a PSP that will
   * not do what is asked, however often it is asked. Checked against the document like any answer.
   */
  refuseNext(count: number, type: ProblemType, options: FaultFilter & { detail?: string } = {}): void {
    const { detail, ...filter } = options;
    const refusal = problem(type, detail);
    if (refusal.body.status < 400 || refusal.body.status >= 500) throw new Error(`${type} is not a refusal (4xx) but ${refusal.body.status}`);
    this.faults.failNext(count, refusal.body.status, filter, { type, detail });
  }

  /**
   * The next `count` matching calls are handled, then their connection drops before the answer is written:
   * the PSP did the work, the client never hears of it (a lost answer).
   */
  dropAnswerNext(count: number, options: FaultFilter = {}): void {
    this.faults.dropNext(count, options);
  }

  /**
   * The next `count` matching calls wait `ms` before they are handled: a client that gives up sooner
   * leaves the call to finish anyway, as a PSP would (a charge created behind a client's timeout).
   */
  delayNext(count: number, ms: number, options: FaultFilter = {}): void {
    this.faults.delayNext(count, ms, options);
  }

  /**
   * The next `count` matching calls are handled at once, their answer written `ms` later (unless the client
   * gave up and closed the connection): the PSP did the work behind a client's timeout.
   */
  holdAnswerNext(count: number, ms: number, options: FaultFilter = {}): void {
    this.faults.holdNext(count, ms, options);
  }

  /** The page size GET /pix, /rec and /cobr use, and the most a client may ask for: small values force pagination. */
  setPageSize(size: number): void {
    this.psp.pageSize = size;
    this.psp.maxPageSize = size;
  }

  clearViolations(): void {
    this.violations.splice(0);
  }

  cob(txid: string): CobCompleta | undefined {
    return this.psp.findCob(txid);
  }

  pixList(): Pix[] {
    return this.psp.allPix();
  }

  refunds(): Array<{ e2eid: string; devolucao: Devolucao }> {
    return this.psp.allRefunds();
  }

  webhookUrl(chave: string): string | undefined {
    return this.psp.webhookUrl(chave);
  }

  /** Resolves when background work (refunds settled automatically and their callbacks) is done. */
  async whenIdle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  async close(): Promise<void> {
    this.efiSend?.stop();
    await this.whenIdle();
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }

  /** Mutual TLS: the handshake itself fails for a client without a certificate of the PSP's CA. */
  private async listen(tls: PspTls): Promise<void> {
    this.server = createServer({ ...tls, requestCert: true, rejectUnauthorized: true }, (request, response) => void this.serve(request, response));
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    const origin = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.baseUrl = `${origin}${API_PREFIX}`;
    this.tokenUrl = `${origin}${TOKEN_PATH}`;
  }

  private async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? '/', 'https://simulator');
    const call: Call = { method: request.method ?? 'GET', url, headers: request.headers, rawBody: Buffer.concat(chunks).toString('utf8') };
    const answer = await this.answer(call).catch((error: Error) => this.crashAnswer(call, error));
    if (this.faults.takeDrop(call.method, url.pathname)) {
      this.requests.push({ method: call.method, path: `${url.pathname}${url.search}`, status: 0 });
      this.efiSend?.record(call, 0);
      request.socket.destroy();
      return;
    }
    this.requests.push({ method: call.method, path: `${url.pathname}${url.search}`, status: answer.status });
    this.efiSend?.record(call, answer.status);
    const hold = this.faults.takeHold(call.method, url.pathname);
    if (hold > 0) await sleep(hold, undefined, { ref: false });
    if (response.destroyed || request.socket.destroyed) return;
    const headers: Record<string, string> = { ...answer.headers };
    if (answer.body !== undefined) headers['Content-Type'] = answer.contentType ?? 'application/json';
    response.writeHead(answer.status, headers).end(answer.body === undefined ? undefined : JSON.stringify(answer.body));
  }

  /** A bug of the simulator answers 500 and fails the test through `violations`, rather than hanging the client. */
  private crashAnswer(call: Call, error: Error): Answer {
    this.violations.push(`simulator failed on ${call.method} ${call.url.pathname}: ${error.stack ?? error.message}`);
    return problemAnswer(generalProblem(500));
  }

  /** Planned faults first (a failing PSP fails before it looks at a request), then the token endpoint or the API. */
  private async answer(call: Call): Promise<Answer> {
    const path = call.url.pathname;
    const delay = this.faults.takeDelay(call.method, path);
    if (delay > 0) await sleep(delay);
    const efi = this.efiSend;
    if (efi?.handles(path)) {
      const answer = this.faultOr(call, () => efi.answer(call), (failure) => efi.failureAnswer(failure.status, failure.body));
      efi.checkAnswer(call, answer);
      return answer;
    }
    const route = this.route(call.method, path);
    const answer = this.faultOr(call, () => (path === TOKEN_PATH && call.method === 'POST' ? this.tokenAnswer(call) : this.apiAnswer(call, route)));
    if (path.startsWith(`${API_PREFIX}/`)) this.checkAnswer(call, route, answer);
    return answer;
  }

  private faultOr(call: Call, answer: () => Answer, failureAnswer?: (failure: PlannedFailure) => Answer): Answer {
    try {
      const failure = this.faults.takeFailure(call.method, call.url.pathname);
      if (failure !== null && failureAnswer) return failureAnswer(failure);
      if (failure !== null && failure.body !== undefined) return { status: failure.status, body: failure.body };
      if (failure !== null) throw failure.problem ? problem(failure.problem.type, failure.problem.detail) : generalProblem(failure.status);
      return answer();
    } catch (error) {
      if (error instanceof PixProblem) return problemAnswer(error);
      throw error;
    }
  }

  private tokenAnswer(call: Call): Answer {
    const answer = this.tokens.answer(call.headers['content-type'], call.headers.authorization, call.rawBody);
    return { ...answer, contentType: 'application/json' };
  }

  /** Authentication (401), the operation's scope (403), the document's schemas (400), then the PSP's rules. */
  private apiAnswer(call: Call, matched: { route: Route; params: Record<string, string> } | null): Answer {
    if (!matched) {
      this.violations.push(`${call.method} ${call.url.pathname}: not an operation this simulator plays`);
      throw generalProblem(404, `${call.method} ${call.url.pathname} não é simulado.`);
    }
    const { route, params } = matched;
    const scopes = this.tokens.scopesOf(call.headers.authorization);
    if (!scopes) throw unauthorized(call.headers.authorization !== undefined);
    const missing = operationScopes(route.method, route.template).filter((scope) => !scopes.has(scope));
    if (missing.length > 0) throw problem('AcessoNegado', `O token não tem o escopo ${missing.join(' ')}.`);
    const query = queryValues(call.url.searchParams);
    const { body, violations: bodyViolations } = parsedBody(call);
    const violations = [...bodyViolations, ...checkRequest(route.method, route.template, { params, query, body })];
    if (violations.length > 0) {
      this.violations.push(...violations.map((violation) => `${call.method} ${call.url.pathname}: ${violationText(violation)}`));
      throw problem(route.invalid, undefined, violations);
    }
    // The check refused repeated parameters: each is one string now.
    return route.handle({ params, query: query as Record<string, string>, body });
  }

  /** The simulator's own answer against the document: a mismatch is the simulator's bug, and fails the test too. */
  private checkAnswer(call: Call, matched: { route: Route } | null, answer: Answer): void {
    const contentType = answer.body === undefined ? undefined : answer.contentType;
    const found = matched ? checkResponse(matched.route.method, matched.route.template, answer.status, answer.body, contentType) : checkProblem(answer.body);
    this.violations.push(...found.map((violation) => `answer to ${call.method} ${call.url.pathname} (${answer.status}): ${violationText(violation)}`));
  }

  private route(method: string, path: string): { route: Route; params: Record<string, string> } | null {
    for (const route of this.routes.filter((candidate) => candidate.method === method)) {
      const params = matchTemplate(route.template, path);
      if (params) return { route, params };
    }
    return null;
  }

  /** The operations of the document played here, by template; the PSP's rules do the work. */
  private operations(): Route[] {
    const psp = this.psp;
    return [
      { method: 'PUT', template: '/cob/{txid}', invalid: 'CobOperacaoInvalida', handle: (c) => ({ status: 201, body: psp.putCob(c.params.txid, c.body as CobSolicitada) }) },
      { method: 'PATCH', template: '/cob/{txid}', invalid: 'CobOperacaoInvalida', handle: (c) => ({ status: 200, body: psp.patchCob(c.params.txid, c.body as CobSolicitada) }) },
      { method: 'GET', template: '/cob/{txid}', invalid: 'CobConsultaInvalida', handle: (c) => ({ status: 200, body: psp.getCob(c.params.txid) }) },
      { method: 'GET', template: '/pix/{e2eid}', invalid: 'RequisicaoInvalida', handle: (c) => ({ status: 200, body: psp.getPix(c.params.e2eid) }) },
      { method: 'GET', template: '/pix', invalid: 'PixConsultaInvalida', handle: (c) => ({ status: 200, body: psp.listPix(c.query) }) },
      { method: 'PUT', template: '/pix/{e2eid}/devolucao/{id}', invalid: 'PixDevolucaoInvalida', handle: (c) => ({ status: 201, body: this.refund(c) }) },
      { method: 'GET', template: '/pix/{e2eid}/devolucao/{id}', invalid: 'RequisicaoInvalida', handle: (c) => ({ status: 200, body: psp.getRefund(c.params.e2eid, c.params.id) }) },
      { method: 'PUT', template: '/webhook/{chave}', invalid: 'WebhookOperacaoInvalida', handle: (c) => this.setWebhook(c) },
      { method: 'GET', template: '/webhook/{chave}', invalid: 'RequisicaoInvalida', handle: (c) => ({ status: 200, body: psp.getWebhook(c.params.chave) }) },
      { method: 'DELETE', template: '/webhook/{chave}', invalid: 'RequisicaoInvalida', handle: (c) => this.deleteWebhook(c) },
      ...this.automaticOperations(),
    ];
  }

  /** Pix Automático: locations, recurrences, recurring charges and retries, and their two webhooks. */
  private automaticOperations(): Route[] {
    const automatic = this.automatic;
    /** A change made by a call is notified after the call's answer is written, as from a real PSP. */
    const thenNotify = <T>(body: T, status: number): Answer => {
      this.track(sleep(0).then(() => this.notifyAutomatic('once')));
      return { status, body };
    };
    return [
      { method: 'POST', template: '/locrec', invalid: 'RequisicaoInvalida', handle: () => ({ status: 201, body: automatic.createLocation() }) },
      { method: 'GET', template: '/locrec/{id}', invalid: 'PayloadLocationRecConsultaInvalida', handle: (c) => ({ status: 200, body: automatic.getLocation(c.params.id) }) },
      { method: 'POST', template: '/rec', invalid: 'RecOperacaoInvalida', handle: (c) => ({ status: 201, body: automatic.createRec(c.body as RecSolicitada) }) },
      { method: 'GET', template: '/rec', invalid: 'RecConsultaInvalida', handle: (c) => ({ status: 200, body: automatic.listRecs(c.query) }) },
      { method: 'GET', template: '/rec/{idRec}', invalid: 'RecConsultaInvalida', handle: (c) => ({ status: 200, body: automatic.getRec(c.params.idRec, c.query.txid) }) },
      { method: 'PATCH', template: '/rec/{idRec}', invalid: 'RecOperacaoInvalida', handle: (c) => thenNotify(automatic.patchRec(c.params.idRec, (c.body ?? {}) as RecRevisada), 200) },
      { method: 'PUT', template: '/cobr/{txid}', invalid: 'CobROperacaoInvalida', handle: (c) => this.createCobr(c) },
      { method: 'GET', template: '/cobr/{txid}', invalid: 'CobRConsultaInvalida', handle: (c) => ({ status: 200, body: automatic.getCobr(c.params.txid) }) },
      { method: 'PATCH', template: '/cobr/{txid}', invalid: 'CobROperacaoInvalida', handle: (c) => thenNotify(automatic.patchCobr(c.params.txid, c.body as { status?: 'CANCELADA' }), 200) },
      { method: 'GET', template: '/cobr', invalid: 'CobRConsultaInvalida', handle: (c) => ({ status: 200, body: automatic.listCobrs(c.query) }) },
      {
        method: 'POST',
        template: '/cobr/{txid}/retentativa/{data}',
        invalid: 'CobROperacaoInvalida',
        handle: (c) => thenNotify(automatic.retry(c.params.txid, c.params.data), 201),
      },
      ...(['rec', 'cobr'] as const).flatMap((kind): Route[] => {
        const template = kind === 'rec' ? '/webhookrec' : '/webhookcobr';
        return [
          {
            method: 'PUT',
            template,
            invalid: kind === 'rec' ? 'WebhookRecOperacaoInvalida' : 'WebhookCobROperacaoInvalida',
            handle: (c) => {
              automatic.putWebhook(kind, (c.body as { webhookUrl: string }).webhookUrl);
              return { status: 200 };
            },
          },
          { method: 'GET', template, invalid: 'RequisicaoInvalida', handle: () => ({ status: 200, body: automatic.getWebhook(kind) }) },
          {
            method: 'DELETE',
            template,
            invalid: 'RequisicaoInvalida',
            handle: () => {
              automatic.deleteWebhook(kind);
              return { status: 204 };
            },
          },
        ];
      }),
    ];
  }

  /**
   * PUT /cobr/{txid} answers the charge CRIADA; right after, the payer's PSP accepts its schedule instruction
   * (ATIVA, the first attempt AGENDADA) and /cobr is called with it.
   */
  private createCobr(context: RouteContext): Answer {
    const cobr = this.automatic.putCobr(context.params.txid, context.body as CobRSolicitada);
    this.track(
      sleep(0).then(() => {
        this.automatic.activate(cobr.txid);
        return this.notifyAutomatic('once');
      }),
    );
    return { status: 201, body: cobr };
  }

  private refund(context: RouteContext): Devolucao {
    const { e2eid, id } = context.params;
    const refund = this.psp.putRefund(e2eid, id, context.body as DevolucaoSolicitada);
    const outcome = this.autoSettleOutcome;
    if (outcome && refund.status === 'EM_PROCESSAMENTO') {
      // After the answer is written: the client sees EM_PROCESSAMENTO first, as from a real PSP.
      this.track(sleep(0).then(() => this.notify(this.psp.settleRefunds(outcome, { e2eid, id }), 'once')));
    }
    return refund;
  }

  private setWebhook(context: RouteContext): Answer {
    this.psp.putWebhook(context.params.chave, (context.body as { webhookUrl: string }).webhookUrl);
    return { status: 200 };
  }

  private deleteWebhook(context: RouteContext): Answer {
    this.psp.deleteWebhook(context.params.chave);
    return { status: 204 };
  }

  /**
   * Calls the webhook of the receiver's key with `pix`, `times` times in a row. The document notifies only
   * Pix with a txid, at `{webhookUrl}/pix` (the URL as registered, "/pix" appended to it verbatim).
   */
  private async notify(pix: Pix[], notify: Notify): Promise<void> {
    const notified = pix.filter((one) => one.txid !== undefined);
    if (notified.length > 0) await this.callback('pix', this.psp.webhookUrl(this.options.receiverKey), { pix: notified }, notify);
  }

  /**
   * The recurrences and recurring charges whose status changed since the last call, to /webhookrec's URL +
   * "/rec" as `{recs}` and /webhookcobr's + "/cobr" as `{cobsr}` (each change in one callback, the PSP may
   * batch). With `never` the changes are dropped: the receiver learns of them only by asking.
   */
  private async notifyAutomatic(notify: Notify): Promise<void> {
    const { recs, cobsr } = this.automatic.takeChanges();
    if (recs.length > 0) await this.callback('rec', this.automatic.webhookUrl('rec'), { recs }, notify);
    if (cobsr.length > 0) await this.callback('cobr', this.automatic.webhookUrl('cobr'), { cobsr }, notify);
  }

  /** One callback through the shared machinery: checked against the document, then delivered `notify` times. */
  private async callback(kind: WebhookKind, webhookUrl: string | undefined, body: unknown, notify: Notify): Promise<void> {
    if (!webhookUrl) return;
    const url = `${webhookUrl}/${kind}`;
    this.violations.push(...validateWebhookBody(body, kind).map((text) => `callback to ${url}: ${text}`));
    for (let i = 0; i < NOTIFICATIONS[notify]; i += 1) this.callbacks.push(await deliverCallback(url, body, this.tls));
  }

  private track(work: Promise<unknown>): void {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }
}

function problemAnswer(refusal: PixProblem): Answer {
  return { status: refusal.body.status, body: refusal.body, contentType: 'application/problem+json', headers: refusal.headers };
}

/** RFC 6750 §3: a 401 names the Bearer scheme, and says `invalid_token` when a credential was presented. */
function unauthorized(presented: boolean): PixProblem {
  const refused = generalProblem(401, presented ? 'Token de acesso inválido ou expirado.' : 'Token de acesso ausente.');
  return new PixProblem(refused.body, { 'WWW-Authenticate': presented ? 'Bearer realm="API Pix", error="invalid_token"' : 'Bearer realm="API Pix"' });
}

/** A body is JSON or nothing: anything else is reported with the schema's violations. */
function parsedBody(call: Call): { body: unknown; violations: PixViolation[] } {
  if (call.rawBody.length === 0) return { body: undefined, violations: [] };
  const violations: PixViolation[] = [];
  const contentType = call.headers['content-type'];
  if (!/^application\/json\b/i.test(contentType ?? '')) violations.push({ property: 'content-type', reason: `must be application/json, not ${contentType ?? 'absent'}` });
  try {
    return { body: JSON.parse(call.rawBody), violations };
  } catch {
    return { body: null, violations: [...violations, { property: 'body', reason: 'is not JSON' }] };
  }
}

/** Query parameters with repeated names kept as arrays, so the check can refuse them. */
function queryValues(params: URLSearchParams): Record<string, string | string[]> {
  const values: Record<string, string | string[]> = {};
  for (const name of new Set(params.keys())) {
    const all = params.getAll(name);
    values[name] = all.length > 1 ? all : all[0];
  }
  return values;
}

/** The decoded path parameters if `path` is `/v2` + `template`, else null. */
function matchTemplate(template: string, path: string): Record<string, string> | null {
  const names = [...template.matchAll(/\{([^}]+)\}/g)].map((found) => found[1]);
  const source = template.replace(/\{[^}]+\}/g, '([^/]+)');
  const match = new RegExp(`^${API_PREFIX}${source}$`).exec(path);
  if (!match) return null;
  try {
    return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(match[i + 1])]));
  } catch {
    return null;
  }
}

/** A scenario's amount must be one the document allows, or the simulator would answer off the schema. */
function assertAmount(amount: string): void {
  if (!/^\d{1,10}\.\d{2}$/.test(amount)) throw new Error(`amount ${amount} is not "<reais>.<two decimals>"`);
}
