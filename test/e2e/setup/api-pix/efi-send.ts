/**
 * Efí's Pix send API (payouts), simulated on the API Pix simulator's host, OAuth client and client certificate:
 * `PUT /v3/gn/pix/{idEnvio}` (and `/v2/...`), the look-ups by `idEnvio` and by E2E id, the list of sent Pix,
 * the statuses EM_PROCESSAMENTO → REALIZADO | NAO_REALIZADO and their callbacks to the payer key's webhook.
 * The protocol is ../shared/reference/efi-pix-envio.md (cited below as "ref §n"); every request the gateway
 * sends and every answer and callback made here is judged by efi-pix-envio.schemas.json (draft 2020-12): a
 * request off it is answered 400 and lands in the simulator's `violations`, as does an answer or callback
 * of the simulator's own that is off it.
 *
 * Points the reference leaves **unconfirmed** are options (`EfiSendOptions`), default first:
 *
 * - `versions` ['v3', 'v2']: which `PUT /{v}/gn/pix/{idEnvio}` paths are served (what /v3 changed is
 *   unconfirmed, §2.1; the SDKs moved to /v3, Ruby and .NET still call /v2). Another version: 404 + violation.
 * - `sameBodyRetry` 'conflict': a reused idEnvio with the same body answers 409 `id_envio_duplicado` like
 *   any reuse (the reference's reading, §2.2); 'replay' answers 201 with the same send (same E2E id).
 * - `refusedSendConsumesId` false: a send refused synchronously (4xx) does not use its idEnvio up.
 * - `idEnvioCaseSensitive` true: `abc` and `ABC` are two sends.
 * - `e2eField` 'e2eId': the E2E field of the send's answer (docs, SDK 1.x); 'endToEndId' (SDK 2.x) or 'both'.
 * - `listShape` 'envelope': `{parametros, pix[]}` (SDK 2.x); 'array' answers a bare array (SDK 1.x JSDoc).
 * - `emptyList` 'page': an empty list is a 200 with `pix: []`; 'not-found' answers 404 (the docs' 404 tab).
 * - `unknownKeyRefusal` 'chave_invalida' (400): a destination key no owner was registered for;
 *   'chave_favorecido_nao_encontrada' answers 404 (third-party report).
 * - `noWebhookRefusal` 400 `chave_invalida` "… não possui webhook cadastrado": a payer key of the account
 *   without a webhook (the send requires one, ref §3.2; the error is unconfirmed).
 * - `invalidRequestName` 'json_invalido': the `nome` of the 400 (with `erros`) for a body or idEnvio off
 *   the schema (seen on another Efí endpoint, T1).
 * - `unauthorizedBody` 'oauth': a 401 answers `{error: 'invalid_token', error_description}`; 'none': no body.
 * - `notifyProcessing` false: no callback for EM_PROCESSAMENTO (the attribute table lists it, no example has it).
 * - `homologation` false: when true, sends to `efipay@sejaefi.com.br` play the homologation table (§5.5):
 *   up to 10.00 REALIZADO, up to 20.00 NAO_REALIZADO, above refused with `homologationOverLimitRefusal`
 *   (default 400 `valor_invalido`; status and body unconfirmed). Returns on 4.00/5.00 are not played.
 * - `sendRateLimitPerSecond` 500 (documented, D8): above it the send answers 429 with an RFC 7807 body and
 *   `Retry-After: 1` (body and headers unconfirmed).
 * - `callbackRetryDelaysMs` []: Efí retries a callback answered non-2xx up to 10 times over days (§3.3);
 *   give the (compressed) delays to play retries.
 * - `cpf`/`cnpj` list filters match the beneficiary's document (whose document is unconfirmed);
 *   `exibirCodigoBanco` is accepted and changes nothing; `devolucoes` are not played (never present).
 * - A bank-data send (`favorecido.contaBanco`) is accepted without an owner check (whether Efí checks the
 *   document before sending is unconfirmed).
 * - Token requests: Efí's JSON body with HTTP Basic is accepted next to the form body (form unconfirmed).
 */
import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { IncomingHttpHeaders } from 'node:http';
import { resolve } from 'node:path';
import { CallbackDelivery } from './callbacks';
import { Clock } from './clock';
import { FaultFilter, FaultPlan } from './faults';
import { endToEndId, randomAlphanumeric } from './ids';
import { TokenIssuer } from './oauth';

const SCHEMAS_FILE = process.env.EFI_PIX_SCHEMAS_FILE ?? resolve(__dirname, '../../../../../shared/reference/efi-pix-envio.schemas.json');
const SCHEMAS_ID = 'efi-pix-envio.schemas.json';

/** Efí's ISPB: it stamps the E2E id of every Pix the account sends (ref §7). */
export const EFI_ISPB = '09089356';
/** The scopes of the send API (ref §1.4). */
export const EFI_SEND_SCOPE = 'pix.send';
export const EFI_READ_SCOPE = 'gn.pix.send.read';
export const EFI_SCOPES = [EFI_SEND_SCOPE, EFI_READ_SCOPE, 'webhook.write', 'webhook.read'];
/** Efí's test destination key in homologation (ref §5.5). */
export const EFI_HOMOLOGATION_KEY = 'efipay@sejaefi.com.br';

/** Requests (by method and path) of the send; used as the default filter of the send faults. */
export const EFI_SEND_PATH = /^\/v\d+\/gn\/pix\/[^/]+$/;

export type EfiSendStatus = 'EM_PROCESSAMENTO' | 'REALIZADO' | 'NAO_REALIZADO';
export type EfiFinalStatus = Exclude<EfiSendStatus, 'EM_PROCESSAMENTO'>;
export type EfiApiVersion = 'v2' | 'v3';
export type EfiNotify = 'once' | 'twice' | 'never';

/** `gnExtras.erro` of a NAO_REALIZADO callback (ref §3.3): an SPI reason code, who refused, why. */
export interface EfiErro {
  codigo: string;
  origem: string;
  motivo: string;
}

/** Who owns a destination key in DICT, as the test sets it up; `denied`/`blocked` refuse sends to it. */
export interface EfiKeyOwner {
  nome: string;
  cpf?: string;
  cnpj?: string;
  /** Efí's risk analysis refuses sends to this key: 422 `pagamento_negado`. */
  denied?: boolean;
  /** The owner's document is blocked: 400 `documento_bloqueado`. */
  blocked?: boolean;
}

export interface EfiRefusalSpec {
  status: number;
  nome: string;
  mensagem: string;
}

/** Sends settle on their own `afterMs` after they are registered (each notified once, unless lost). */
export interface EfiAutoSettle {
  afterMs: number;
  status: EfiFinalStatus;
  erro?: Partial<EfiErro>;
}

export interface EfiSendOptions {
  versions?: EfiApiVersion[];
  sameBodyRetry?: 'conflict' | 'replay';
  refusedSendConsumesId?: boolean;
  idEnvioCaseSensitive?: boolean;
  e2eField?: 'e2eId' | 'endToEndId' | 'both';
  listShape?: 'envelope' | 'array';
  emptyList?: 'page' | 'not-found';
  unknownKeyRefusal?: 'chave_invalida' | 'chave_favorecido_nao_encontrada';
  noWebhookRefusal?: EfiRefusalSpec;
  invalidRequestName?: string;
  unauthorizedBody?: 'oauth' | 'none';
  notifyProcessing?: boolean;
  homologation?: boolean;
  homologationOverLimitRefusal?: EfiRefusalSpec;
  sendRateLimitPerSecond?: number;
  callbackRetryDelaysMs?: number[];
  /** Sends settle by themselves after a delay (null: only settleSend settles them). */
  autoSettle?: EfiAutoSettle | null;
  /** The list's page size when the client names none (documented default 100). */
  listPageSize?: number;
  /** Keys of the account besides the receiver key (they take no webhook: sends from them are refused). */
  accountKeys?: string[];
  /** Destination keys and their owners (see registerKeyOwner). */
  keyOwners?: Record<string, EfiKeyOwner>;
}

type ResolvedOptions = Required<Omit<EfiSendOptions, 'keyOwners' | 'accountKeys'>>;

const DEFAULTS: ResolvedOptions = {
  versions: ['v3', 'v2'],
  sameBodyRetry: 'conflict',
  refusedSendConsumesId: false,
  idEnvioCaseSensitive: true,
  e2eField: 'e2eId',
  listShape: 'envelope',
  emptyList: 'page',
  unknownKeyRefusal: 'chave_invalida',
  noWebhookRefusal: { status: 400, nome: 'chave_invalida', mensagem: 'A chave informada não possui webhook cadastrado' },
  invalidRequestName: 'json_invalido',
  unauthorizedBody: 'oauth',
  notifyProcessing: false,
  homologation: false,
  homologationOverLimitRefusal: { status: 400, nome: 'valor_invalido', mensagem: 'Valor acima do limite permitido em homologação' },
  sendRateLimitPerSecond: 500,
  callbackRetryDelaysMs: [],
  autoSettle: null,
  listPageSize: 100,
};

/** The send's documented refusals (ref §2.5), by `nome`, with their status and message. */
export const EFI_REFUSALS = {
  documento_bloqueado: { status: 400, mensagem: 'O documento desta conta tem bloqueios que impedem a emissão' },
  chave_invalida: { status: 400, mensagem: 'A chave informada não faz referência à conta Efí autenticada' },
  chave_nao_pertence_ao_documento: { status: 400, mensagem: 'O cpf do favorecido é diferente do documento em posse da chave' },
  valor_invalido: { status: 400, mensagem: 'O valor informado é inválido' },
  id_envio_duplicado: { status: 409, mensagem: 'O id de envio informado já foi utilizado em outro pagamento' },
  pagamento_negado: { status: 422, mensagem: 'Pagamento negado por análises' },
  erro_aplicacao: { status: 500, mensagem: 'Ocorreu um erro ao validar a chave' },
  chave_favorecido_nao_encontrada: { status: 404, mensagem: 'A chave do favorecido não foi encontrada' },
} as const;
export type EfiRefusalName = keyof typeof EFI_REFUSALS;

const DEFAULT_ERRO: EfiErro = {
  codigo: 'AC03',
  origem: 'PSP do usuário recebedor',
  motivo: 'Número da agência e/ou conta transacional do usuário recebedor inexistente ou inválido',
};

const NOTIFICATIONS: Record<EfiNotify, number> = { once: 1, twice: 2, never: 0 };

/** The send's request body (`SendRequest`), as the schema allows it. */
export interface SendRequestBody {
  valor: string;
  pagador: { chave: string; infoPagador?: string };
  favorecido:
    | { chave: string; cpf?: string; cnpj?: string }
    | { contaBanco: { nome: string; cpf?: string; cnpj?: string; codigoBanco: string; agencia: string; conta: string; tipoConta: 'cacc' | 'svgs' } };
}

/** A sent Pix as the look-ups answer it (`SentPix`). */
export interface SentPix {
  endToEndId: string;
  idEnvio: string;
  valor: string;
  chave: string;
  status: EfiSendStatus;
  infoPagador?: string;
  horario: { solicitacao: string; liquidacao?: string };
  favorecido: Record<string, unknown>;
}

/** One request the simulator received, secrets redacted; `status` 0 when the answer was lost. */
export interface EfiRecordedRequest {
  at: string;
  method: string;
  /** Path and query string, as sent. */
  path: string;
  /** 'send' for `PUT /v{n}/gn/pix/{idEnvio}`. */
  operation: 'token' | 'send' | 'lookup-id-envio' | 'lookup-e2e' | 'list' | 'other';
  /** The path's idEnvio, for sends and look-ups by idEnvio. */
  idEnvio?: string;
  headers: Record<string, string>;
  /** The parsed JSON body (the raw text when not JSON, undefined when empty). */
  body: unknown;
  status: number;
}

/** One callback about a sent Pix: its body, where it went, and each delivery (none: lost or no webhook). */
export interface EfiCallback {
  idEnvio: string;
  status: EfiSendStatus;
  url: string | undefined;
  body: { pix: Array<Record<string, unknown>> };
  deliveries: CallbackDelivery[];
  /** Dropped on purpose (loseCallbacks / notify 'never'). */
  lost: boolean;
  /** Made by forgeCallback: no send has this idEnvio, or not this status. */
  forged: boolean;
}

/** What the simulator hands this API: its clock, tokens, faults, the receiver's webhooks and callback machinery. */
export interface EfiSendDeps {
  receiverKey: string;
  clock: Clock;
  tokens: TokenIssuer;
  faults: FaultPlan;
  violations: string[];
  webhookUrl(chave: string): string | undefined;
  deliver(url: string, body: unknown): Promise<CallbackDelivery>;
  track(work: Promise<unknown>): void;
}

export interface EfiCall {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  rawBody: string;
}

export interface EfiAnswer {
  status: number;
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

interface SendRecord {
  key: string;
  idEnvio: string;
  e2eId: string;
  valor: string;
  pagadorChave: string;
  infoPagador?: string;
  favorecido: SendRequestBody['favorecido'];
  owner?: EfiKeyOwner;
  status: EfiSendStatus;
  solicitacao: string;
  liquidacao?: string;
  erro?: EfiErro;
  /** Canonical JSON of the request body; null for a send the test registered. */
  bodyKey: string | null;
  /** The first answer, replayed by sameBodyRetry 'replay'. */
  origin: 'gateway' | 'test';
}

type RouteName = 'send' | 'lookup-id-envio' | 'lookup-e2e' | 'list';

interface MatchedRoute {
  name: RouteName;
  version: string;
  param?: string;
}

/**
 * Efí's send API. Tests reach it as `simulator.efi`: register key owners, settle sends, plan faults and
 * callbacks, read the recorded requests. See the file's header for the protocol and its options.
 */
export class EfiSendSimulator {
  readonly requests: EfiRecordedRequest[] = [];
  readonly callbacks: EfiCallback[] = [];
  private options: ResolvedOptions;
  private readonly owners = new Map<string, EfiKeyOwner>();
  private readonly accountKeys: Set<string>;
  private readonly sends = new Map<string, SendRecord>();
  /** idEnvio keys used up by refused sends (refusedSendConsumesId). */
  private readonly consumed = new Set<string>();
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; cancel: () => void }>();
  private readonly recentSends: number[] = [];
  private accountBlocked = false;
  private loseBudget = 0;
  private duplicateBudget = 0;

  constructor(
    private readonly deps: EfiSendDeps,
    options: EfiSendOptions = {},
  ) {
    const { keyOwners, accountKeys, ...rest } = options;
    this.options = { ...DEFAULTS, ...stripUndefined(rest) };
    this.accountKeys = new Set([deps.receiverKey, ...(accountKeys ?? [])]);
    for (const [chave, owner] of Object.entries(keyOwners ?? {})) this.registerKeyOwner(chave, owner);
    this.owners.set(EFI_HOMOLOGATION_KEY, this.owners.get(EFI_HOMOLOGATION_KEY) ?? { nome: 'EFI S.A.', cnpj: '09089356000118' });
  }

  // ---------------------------------------------------------------- scenario controls

  /** Changes options from now on (e.g. `{ sameBodyRetry: 'replay' }`); sends already made keep their state. */
  configure(options: Omit<EfiSendOptions, 'keyOwners' | 'accountKeys'>): void {
    this.options = { ...this.options, ...stripUndefined(options) };
  }

  /**
   * `chave` is a DICT key owned by `owner`: a send to it naming another `favorecido.cpf`/`cnpj` is refused
   * with `chave_nao_pertence_ao_documento`; an unregistered key is refused as `unknownKeyRefusal` says.
   */
  registerKeyOwner(chave: string, owner: EfiKeyOwner): void {
    if (owner.cpf !== undefined && !/^\d{11}$/.test(owner.cpf)) throw new Error(`owner cpf ${owner.cpf} is not 11 digits`);
    if (owner.cnpj !== undefined && !/^\d{14}$/.test(owner.cnpj)) throw new Error(`owner cnpj ${owner.cnpj} is not 14 digits`);
    if ((owner.cpf === undefined) === (owner.cnpj === undefined)) throw new Error('a key owner has a cpf or a cnpj');
    this.owners.set(chave, { ...owner });
  }

  removeKeyOwner(chave: string): void {
    this.owners.delete(chave);
  }

  /** The account's own document is blocked: every send answers 400 `documento_bloqueado`. */
  setAccountBlocked(blocked: boolean): void {
    this.accountBlocked = blocked;
  }

  /** Tokens issued from now on carry at most these scopes (the application's switches in Efí's portal); null: all. */
  setApplicationScopes(scopes: string[] | null): void {
    this.deps.tokens.setApplicationScopes(scopes);
  }

  /** From now on sends settle by themselves (see EfiAutoSettle); null stops it for sends registered later. */
  setAutoSettle(autoSettle: EfiAutoSettle | null): void {
    this.options.autoSettle = autoSettle;
  }

  /**
   * Send `idEnvio` (EM_PROCESSAMENTO) reaches `status`; the webhook of its payer key is called (`notify`:
   * once unless lost/duplicated by plan) with `erro` on NAO_REALIZADO (AC03 when none given; a string is
   * the `motivo`). Resolves with the sent Pix once the deliveries were answered.
   */
  async settleSend(idEnvio: string, status: EfiFinalStatus, reason?: string | Partial<EfiErro>, options: { notify?: EfiNotify } = {}): Promise<SentPix> {
    const send = this.mustFind(idEnvio);
    if (send.status !== 'EM_PROCESSAMENTO') throw new Error(`send ${idEnvio} is already ${send.status}`);
    this.cancelTimer(send.key);
    this.applyStatus(send, status, typeof reason === 'string' ? { motivo: reason } : reason);
    await this.notify(send, options.notify);
    return this.view(send);
  }

  /** The next `count` callbacks about sends are not delivered (recorded with `lost: true`). */
  loseCallbacks(count: number): void {
    this.loseBudget += count;
  }

  /** The next `count` callbacks about sends are delivered twice in a row. */
  duplicateCallbacks(count: number): void {
    this.duplicateBudget += count;
  }

  /** Calls the webhook again with the send's current state (a late, repeated callback). */
  async redeliverCallback(idEnvio: string): Promise<EfiCallback> {
    return this.notify(this.mustFind(idEnvio), 'once');
  }

  /**
   * A callback no send justifies, to the payer key's webhook (or `url`): by default a REALIZADO for an
   * idEnvio that does not exist; with the `idEnvio` of a send, a status that send does not have (the
   * other final one unless `status` is given). Shaped as a real one; delivered once.
   */
  async forgeCallback(forged: { idEnvio?: string; status?: EfiSendStatus; valor?: string; endToEndId?: string; chave?: string; erro?: EfiErro; url?: string } = {}): Promise<EfiCallback> {
    const send = forged.idEnvio === undefined ? undefined : this.find(forged.idEnvio);
    const status = forged.status ?? (send?.status === 'REALIZADO' ? 'NAO_REALIZADO' : 'REALIZADO');
    const chave = forged.chave ?? send?.pagadorChave ?? this.deps.receiverKey;
    const item = {
      endToEndId: forged.endToEndId ?? send?.e2eId ?? endToEndId(this.deps.clock.now(), EFI_ISPB),
      chave,
      tipo: 'SOLICITACAO',
      status,
      valor: forged.valor ?? send?.valor ?? '1.00',
      horario: status === 'REALIZADO' ? this.deps.clock.nowIso() : null,
      gnExtras: {
        idEnvio: forged.idEnvio ?? `forjado${randomAlphanumeric(20)}`,
        ...(status === 'NAO_REALIZADO' ? { erro: forged.erro ?? DEFAULT_ERRO } : {}),
      },
    };
    const url = forged.url ?? this.callbackUrl(chave);
    return this.deliver(item.gnExtras.idEnvio, status, url, { pix: [item] }, 1, true);
  }

  /**
   * A send the gateway never made (from Efí's app, or by another integration): registered directly as the
   * test says, listed and found by the look-ups; notified only when `notify` says so. Returns it.
   */
  async registerUnknownSend(options: {
    valor: string;
    idEnvio?: string;
    status?: EfiSendStatus;
    favorecido?: SendRequestBody['favorecido'];
    pagadorChave?: string;
    at?: Date | string;
    erro?: Partial<EfiErro>;
    notify?: EfiNotify;
  }): Promise<SentPix> {
    assertValor(options.valor);
    const idEnvio = options.idEnvio ?? `app${randomAlphanumeric(29)}`;
    if (!/^[a-zA-Z0-9]{1,35}$/.test(idEnvio)) throw new Error(`idEnvio ${idEnvio} is off ^[a-zA-Z0-9]{1,35}$`);
    if (this.find(idEnvio)) throw new Error(`a send ${idEnvio} exists`);
    const at = options.at === undefined ? this.deps.clock.now() : new Date(options.at);
    const favorecido = options.favorecido ?? { chave: `alguem${randomAlphanumeric(6)}@example.com` };
    const send: SendRecord = {
      key: this.keyOf(idEnvio),
      idEnvio,
      e2eId: endToEndId(at, EFI_ISPB),
      valor: options.valor,
      pagadorChave: options.pagadorChave ?? this.deps.receiverKey,
      favorecido,
      owner: 'chave' in favorecido ? this.owners.get(favorecido.chave) : undefined,
      status: 'EM_PROCESSAMENTO',
      solicitacao: at.toISOString(),
      bodyKey: null,
      origin: 'test',
    };
    this.sends.set(send.key, send);
    if (options.status && options.status !== 'EM_PROCESSAMENTO') this.applyStatus(send, options.status, options.erro);
    if (options.notify && options.notify !== 'never') await this.notify(send, options.notify);
    return this.view(send);
  }

  /**
   * Changes what the PSP lists for a send (reconciliation differences): its amount and/or status, no
   * callback. REALIZADO gains a settlement time if it had none; NAO_REALIZADO an `erro`.
   */
  alterSend(idEnvio: string, changes: { valor?: string; status?: EfiSendStatus; erro?: Partial<EfiErro> }): SentPix {
    const send = this.mustFind(idEnvio);
    if (changes.valor !== undefined) {
      assertValor(changes.valor);
      send.valor = changes.valor;
    }
    if (changes.status !== undefined) {
      this.cancelTimer(send.key);
      this.applyStatus(send, changes.status, changes.erro);
    }
    return this.view(send);
  }

  /** The next `count` sends (PUT) are handled, then their connection drops: registered, answer lost. */
  dropAnswerNextSend(count = 1, filter: FaultFilter = {}): void {
    this.deps.faults.dropNext(count, { ...sendFilter(), ...filter });
  }

  /** The next `count` sends are handled (registered), their answer written `ms` later: a client timeout. */
  holdAnswerNextSend(count: number, ms: number, filter: FaultFilter = {}): void {
    this.deps.faults.holdNext(count, ms, { ...sendFilter(), ...filter });
  }

  /** The next `count` sends wait `ms` before they are handled (registered only then). */
  delayNextSend(count: number, ms: number, filter: FaultFilter = {}): void {
    this.deps.faults.delayNext(count, ms, { ...sendFilter(), ...filter });
  }

  /**
   * The next `count` sends answer `status` before anything is registered: 500 `erro_aplicacao` (ErroEfi,
   * documented), another 5xx an RFC 7807 problem.
   */
  failNextSend(count = 1, status = 500, filter: FaultFilter = {}): void {
    this.deps.faults.failNext(count, status, { ...sendFilter(), ...filter }, undefined, efiFailureBody(status));
  }

  /** The next `count` sends are refused with a documented `nome` (nothing registered), whatever they carry. */
  refuseNextSend(count: number, nome: EfiRefusalName, filter: FaultFilter = {}): void {
    const refusal = EFI_REFUSALS[nome];
    this.deps.faults.failNext(count, refusal.status, { ...sendFilter(), ...filter }, undefined, { nome, mensagem: refusal.mensagem });
  }

  // ---------------------------------------------------------------- reading the state

  /** The send as the look-ups show it, or undefined. */
  send(idEnvio: string): SentPix | undefined {
    const send = this.find(idEnvio);
    return send ? this.view(send) : undefined;
  }

  allSends(): SentPix[] {
    return this.ordered().map((send) => this.view(send));
  }

  /** The `PUT /v{n}/gn/pix/{idEnvio}` requests received (for one idEnvio when given), answered or not. */
  sendRequests(idEnvio?: string): EfiRecordedRequest[] {
    return this.requests.filter((request) => request.operation === 'send' && (idEnvio === undefined || request.idEnvio === idEnvio));
  }

  /** How many PUTs each idEnvio received: "each withdrawal sent exactly once" is every count 1. */
  sendCountsByIdEnvio(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const request of this.sendRequests()) counts[request.idEnvio ?? ''] = (counts[request.idEnvio ?? ''] ?? 0) + 1;
    return counts;
  }

  distinctIdEnvios(): string[] {
    return Object.keys(this.sendCountsByIdEnvio());
  }

  // ---------------------------------------------------------------- the simulator's hooks

  /** Whether `path` is Efí's (`/v{n}/gn/...`): the simulator routes it here. */
  handles(path: string): boolean {
    return /^\/v\d+\/gn\//.test(path);
  }

  /** Authentication (401), scope (403), schema (400), then Efí's rules. */
  answer(call: EfiCall): EfiAnswer {
    const path = call.url.pathname;
    const route = matchRoute(call.method, path);
    if (!route) {
      this.violation(call, 'not an operation of Efí this simulator plays');
      return json(404, problema('NaoEncontrado', 'Não Encontrado', 404, `${call.method} ${path} não existe.`));
    }
    if (route.name === 'send' && !this.options.versions.includes(route.version as EfiApiVersion)) {
      this.violation(call, `/${route.version} is not served (versions: ${this.options.versions.join(', ')})`);
      return json(404, problema('NaoEncontrado', 'Não Encontrado', 404, `${call.method} ${path} não existe.`));
    }
    const scopes = this.deps.tokens.scopesOf(call.headers.authorization);
    if (!scopes) {
      const body = this.options.unauthorizedBody === 'oauth' ? { error: 'invalid_token', error_description: 'Token de acesso inválido, expirado ou ausente' } : undefined;
      return { status: 401, body, headers: { 'WWW-Authenticate': 'Bearer' } };
    }
    const needed = route.name === 'send' ? EFI_SEND_SCOPE : EFI_READ_SCOPE;
    if (!scopes.has(needed)) return json(403, { error: 'insufficient_scope', error_description: 'Access token has insufficient scope' });
    switch (route.name) {
      case 'send':
        return this.sendAnswer(call, route.param ?? '');
      case 'lookup-id-envio':
        return this.lookupAnswer(call, 'idEnvio', route.param ?? '');
      case 'lookup-e2e':
        return this.lookupAnswer(call, 'e2eId', route.param ?? '');
      case 'list':
        return this.listAnswer(call);
    }
  }

  /** A planned fault's answer on Efí's paths: the body planned, else Efí's 500 or an RFC 7807 problem. */
  failureAnswer(status: number, body: unknown): EfiAnswer {
    return json(status, body ?? efiFailureBody(status));
  }

  /** Every answer given on Efí's paths against the schemas: a mismatch is the simulator's bug. */
  checkAnswer(call: EfiCall, answer: EfiAnswer): void {
    const route = matchRoute(call.method, call.url.pathname);
    const found: string[] = [];
    if (answer.status < 300 && route) {
      if (route.name === 'send') found.push(...validateEfi('SendResponse', answer.body));
      else if (route.name === 'list' && Array.isArray(answer.body)) answer.body.forEach((item, i) => found.push(...validateEfi('SentPix', item).map((text) => `[${i}]${text}`)));
      else if (route.name === 'list') found.push(...validateEfi('SentPixList', answer.body));
      else found.push(...validateEfi('SentPix', answer.body));
    } else if (answer.status >= 400 && answer.body !== undefined) {
      const body = answer.body as Record<string, unknown>;
      const schema = 'nome' in body ? 'ErroEfi' : 'error' in body ? 'ErroOAuth' : 'Problema';
      found.push(...validateEfi(schema, body));
    } else if (answer.status >= 400 && !(answer.status === 401 && this.options.unauthorizedBody === 'none')) {
      found.push('an error answer without a body');
    }
    this.deps.violations.push(...found.map((text) => `answer to ${call.method} ${call.url.pathname} (${answer.status}): ${text}`));
  }

  /** Records a request the simulator received (every path), its secrets redacted. */
  record(call: EfiCall, status: number): void {
    const route = matchRoute(call.method, call.url.pathname);
    const operation = call.url.pathname === '/oauth/token' ? 'token' : (route?.name ?? 'other');
    const idEnvio = route && (route.name === 'send' || route.name === 'lookup-id-envio') ? route.param : undefined;
    this.requests.push({
      at: new Date().toISOString(),
      method: call.method,
      path: `${call.url.pathname}${call.url.search}`,
      operation,
      ...(idEnvio !== undefined ? { idEnvio } : {}),
      headers: redactedHeaders(call.headers),
      body: recordedBody(call),
      status,
    });
  }

  /** Cancels the pending automatic settlements (the simulator is closing). */
  stop(): void {
    for (const key of [...this.timers.keys()]) this.cancelTimer(key);
  }

  // ---------------------------------------------------------------- operations

  private sendAnswer(call: EfiCall, idEnvio: string): EfiAnswer {
    if (!this.withinRateLimit()) {
      return { ...json(429, problema('about:blank', 'Too Many Requests', 429, 'Limite de requisições excedido.')), headers: { 'Retry-After': '1' } };
    }
    const parsed = parseJson(call);
    const problems = [
      ...(/^[a-zA-Z0-9]{1,35}$/.test(idEnvio) ? [] : [{ chave: 'pattern', caminho: 'idEnvio', mensagem: 'deve corresponder a ^[a-zA-Z0-9]{1,35}$' }]),
      ...parsed.problems,
      ...(parsed.problems.length === 0 ? ajvProblems('SendRequest', parsed.body) : []),
    ];
    if (problems.length > 0) {
      problems.forEach((one) => this.violation(call, `${one.caminho}: ${one.mensagem}`));
      return json(400, { nome: this.options.invalidRequestName, mensagem: 'Requisição inválida', erros: problems });
    }
    const body = parsed.body as SendRequestBody;
    const key = this.keyOf(idEnvio);
    const bodyKey = canonical(body);
    const existing = this.sends.get(key);
    if (existing) {
      if (existing.bodyKey === bodyKey && this.options.sameBodyRetry === 'replay') return json(201, this.sendResponse(existing));
      return refusal('id_envio_duplicado');
    }
    if (this.consumed.has(key)) return refusal('id_envio_duplicado');
    const refused = this.refusalOf(body);
    if (refused) {
      if (this.options.refusedSendConsumesId) this.consumed.add(key);
      return json(refused.status, { nome: refused.nome, mensagem: refused.mensagem });
    }
    const send: SendRecord = {
      key,
      idEnvio,
      e2eId: endToEndId(this.deps.clock.now(), EFI_ISPB),
      valor: body.valor,
      pagadorChave: body.pagador.chave,
      ...(body.pagador.infoPagador !== undefined ? { infoPagador: body.pagador.infoPagador } : {}),
      favorecido: body.favorecido,
      owner: 'chave' in body.favorecido ? this.owners.get(body.favorecido.chave) : undefined,
      status: 'EM_PROCESSAMENTO',
      solicitacao: this.deps.clock.nowIso(),
      bodyKey,
      origin: 'gateway',
    };
    this.sends.set(key, send);
    this.afterRegistered(send);
    return json(201, this.sendResponse(send));
  }

  /** Efí's checks of a well-formed send, in the order the reference suggests; null when it is accepted. */
  private refusalOf(body: SendRequestBody): EfiRefusalSpec | null {
    if (this.accountBlocked) return named('documento_bloqueado');
    if (!this.accountKeys.has(body.pagador.chave)) return named('chave_invalida');
    if (!this.deps.webhookUrl(body.pagador.chave)) return this.options.noWebhookRefusal;
    if (Number(body.valor) <= 0) return named('valor_invalido', 'O valor deve ser maior que zero');
    if (!('chave' in body.favorecido)) return null;
    const favorecido = body.favorecido;
    const owner = this.owners.get(favorecido.chave);
    if (!owner) {
      return this.options.unknownKeyRefusal === 'chave_favorecido_nao_encontrada'
        ? named('chave_favorecido_nao_encontrada')
        : named('chave_invalida', 'A chave do favorecido é inválida ou não está registrada no DICT');
    }
    if (favorecido.cpf !== undefined && favorecido.cpf !== owner.cpf) return named('chave_nao_pertence_ao_documento');
    if (favorecido.cnpj !== undefined && favorecido.cnpj !== owner.cnpj) {
      return named('chave_nao_pertence_ao_documento', 'O cnpj do favorecido é diferente do documento em posse da chave');
    }
    if (owner.blocked) return named('documento_bloqueado', 'O documento do favorecido tem bloqueios que impedem o pagamento');
    if (owner.denied) return named('pagamento_negado');
    if (this.options.homologation && favorecido.chave === EFI_HOMOLOGATION_KEY && Number(body.valor) > 20) return this.options.homologationOverLimitRefusal;
    return null;
  }

  /** EM_PROCESSAMENTO may be notified; then the homologation table or the auto-settlement takes over. */
  private afterRegistered(send: SendRecord): void {
    // After the answer is written: the client sees its 201 before the callback, as from a real PSP.
    if (this.options.notifyProcessing) this.deps.track(new Promise((written) => setImmediate(written)).then(() => this.notify(send)));
    const homologation = this.options.homologation && 'chave' in send.favorecido && send.favorecido.chave === EFI_HOMOLOGATION_KEY;
    if (homologation) {
      const status: EfiFinalStatus = Number(send.valor) <= 10 ? 'REALIZADO' : 'NAO_REALIZADO';
      this.schedule(send, this.options.autoSettle?.afterMs ?? 0, status);
    } else if (this.options.autoSettle) {
      this.schedule(send, this.options.autoSettle.afterMs, this.options.autoSettle.status, this.options.autoSettle.erro);
    }
  }

  private schedule(send: SendRecord, afterMs: number, status: EfiFinalStatus, erro?: Partial<EfiErro>): void {
    const work = new Promise<void>((done) => {
      const timer = setTimeout(() => {
        this.timers.delete(send.key);
        if (send.status !== 'EM_PROCESSAMENTO') return done();
        this.applyStatus(send, status, erro);
        this.notify(send).then(() => done(), () => done());
      }, afterMs);
      this.timers.set(send.key, { timer, cancel: done });
    });
    this.deps.track(work);
  }

  private cancelTimer(key: string): void {
    const pending = this.timers.get(key);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.timers.delete(key);
    pending.cancel();
  }

  private lookupAnswer(call: EfiCall, by: 'idEnvio' | 'e2eId', value: string): EfiAnswer {
    const pattern = by === 'idEnvio' ? /^[a-zA-Z0-9]{1,35}$/ : /^[a-zA-Z0-9]{32}$/;
    const query = [...call.url.searchParams.keys()];
    if (!pattern.test(value) || query.length > 0 || call.rawBody.length > 0) {
      const reasons = [
        ...(pattern.test(value) ? [] : [{ razao: `deve corresponder a ${pattern.source}`, propriedade: by }]),
        ...query.map((name) => ({ razao: 'não é um parâmetro desta operação', propriedade: name })),
        ...(call.rawBody.length > 0 ? [{ razao: 'esta operação não tem corpo', propriedade: 'body' }] : []),
      ];
      reasons.forEach((reason) => this.violation(call, `${reason.propriedade}: ${reason.razao}`));
      return json(400, { ...problema('RequisicaoInvalida', 'Requisição inválida.', 400, 'Requisição inválida.'), violacoes: reasons });
    }
    const send = by === 'idEnvio' ? this.find(value) : [...this.sends.values()].find((one) => one.e2eId === value);
    if (!send) return json(404, problema('PixEnviadoNaoEncontrado', 'Não Encontrado', 404, `Pix enviado não encontrado para o ${by} informado.`));
    return json(200, this.view(send));
  }

  private listAnswer(call: EfiCall): EfiAnswer {
    const { filters, reasons } = listFilters(call.url.searchParams, this.options.listPageSize);
    if (call.rawBody.length > 0) reasons.push({ razao: 'esta operação não tem corpo', propriedade: 'body' });
    if (reasons.length > 0 || !filters) {
      reasons.forEach((reason) => this.violation(call, `${reason.propriedade}: ${reason.razao}`));
      return json(400, { ...problema('RequisicaoInvalida', 'Requisição inválida.', 400, 'Os parâmetros da consulta não respeitam o schema.'), violacoes: reasons });
    }
    const [from, to] = [Date.parse(filters.inicio), Date.parse(filters.fim)];
    const matching = this.ordered().filter((send) => {
      const at = Date.parse(send.solicitacao);
      const document = 'chave' in send.favorecido ? send.owner : send.favorecido.contaBanco;
      return (
        at >= from &&
        at <= to &&
        (filters.status === undefined || send.status === filters.status) &&
        (filters.cpf === undefined || document?.cpf === filters.cpf) &&
        (filters.cnpj === undefined || document?.cnpj === filters.cnpj) &&
        filters.devolucaoPresente !== true
      );
    });
    if (matching.length === 0 && this.options.emptyList === 'not-found') {
      return json(404, problema('PixEnviadoNaoEncontrado', 'Não Encontrado', 404, 'Nenhum Pix enviado encontrado no período informado.'));
    }
    const { paginaAtual, itensPorPagina } = filters;
    const page = matching.slice(paginaAtual * itensPorPagina, (paginaAtual + 1) * itensPorPagina).map((send) => this.view(send));
    if (this.options.listShape === 'array') return json(200, page);
    const { inicio, fim, status, cpf, cnpj, devolucaoPresente } = filters;
    return json(200, {
      parametros: {
        inicio,
        fim,
        ...(status !== undefined ? { status } : {}),
        ...(cpf !== undefined ? { cpf } : {}),
        ...(cnpj !== undefined ? { cnpj } : {}),
        ...(devolucaoPresente !== undefined ? { devolucaoPresente } : {}),
        paginacao: { paginaAtual, itensPorPagina, quantidadeDePaginas: Math.ceil(matching.length / itensPorPagina), quantidadeTotalDeItens: matching.length },
      },
      pix: page,
    });
  }

  // ---------------------------------------------------------------- state and callbacks

  private applyStatus(send: SendRecord, status: EfiSendStatus, erro?: Partial<EfiErro>): void {
    send.status = status;
    if (status === 'REALIZADO') {
      send.liquidacao = send.liquidacao ?? this.deps.clock.nowIso();
      delete send.erro;
    } else if (status === 'NAO_REALIZADO') {
      send.erro = { ...DEFAULT_ERRO, ...stripUndefined(erro ?? {}) };
      delete send.liquidacao;
    } else {
      delete send.liquidacao;
      delete send.erro;
    }
  }

  /** The callback for the send's current status, `notify` times (by default: the planned losses/duplicates, else once). */
  private notify(send: SendRecord, notify?: EfiNotify): Promise<EfiCallback> {
    let times: number;
    if (notify !== undefined) {
      times = NOTIFICATIONS[notify];
    } else if (this.loseBudget > 0) {
      this.loseBudget -= 1;
      times = 0;
    } else if (this.duplicateBudget > 0) {
      this.duplicateBudget -= 1;
      times = 2;
    } else {
      times = 1;
    }
    return this.deliver(send.idEnvio, send.status, this.callbackUrl(send.pagadorChave), { pix: [this.callbackItem(send)] }, times, false);
  }

  /** `{webhookUrl}/pix` of `chave` (the suffix appended verbatim: a URL ending in `?ignorar=` gets it in its query). */
  private callbackUrl(chave: string): string | undefined {
    const webhookUrl = this.deps.webhookUrl(chave);
    return webhookUrl === undefined ? undefined : `${webhookUrl}/pix`;
  }

  private async deliver(idEnvio: string, status: EfiSendStatus, url: string | undefined, body: EfiCallback['body'], times: number, forged: boolean): Promise<EfiCallback> {
    const found = [...validateEfi('WebhookCallback', body), ...body.pix.flatMap((item, i) => validateEfi('WebhookSentPixItem', item).map((text) => `pix[${i}]${text}`))];
    this.deps.violations.push(...found.map((text) => `callback for send ${idEnvio}: ${text}`));
    const callback: EfiCallback = { idEnvio, status, url, body, deliveries: [], lost: times === 0, forged };
    this.callbacks.push(callback);
    if (!url) return callback;
    for (let i = 0; i < times; i += 1) {
      let delivery = await this.deps.deliver(url, body);
      callback.deliveries.push(delivery);
      for (const delay of this.options.callbackRetryDelaysMs) {
        if (delivery.status >= 200 && delivery.status < 300) break;
        await new Promise((done) => setTimeout(done, delay));
        delivery = await this.deps.deliver(url, body);
        callback.deliveries.push(delivery);
      }
    }
    return callback;
  }

  private callbackItem(send: SendRecord): Record<string, unknown> {
    return {
      endToEndId: send.e2eId,
      chave: send.pagadorChave,
      tipo: 'SOLICITACAO',
      status: send.status,
      valor: send.valor,
      horario: send.status === 'REALIZADO' ? (send.liquidacao ?? null) : null,
      ...(send.infoPagador !== undefined ? { infoPagador: send.infoPagador } : {}),
      gnExtras: { idEnvio: send.idEnvio, ...(send.status === 'NAO_REALIZADO' && send.erro ? { erro: send.erro } : {}) },
    };
  }

  private sendResponse(send: SendRecord): Record<string, unknown> {
    const field = this.options.e2eField;
    return {
      idEnvio: send.idEnvio,
      ...(field === 'e2eId' || field === 'both' ? { e2eId: send.e2eId } : {}),
      ...(field === 'endToEndId' || field === 'both' ? { endToEndId: send.e2eId } : {}),
      valor: send.valor,
      horario: { solicitacao: send.solicitacao },
      status: send.status,
    };
  }

  private view(send: SendRecord): SentPix {
    let favorecido: Record<string, unknown>;
    if ('chave' in send.favorecido) {
      const owner = send.owner;
      const identificacao = owner ? { nome: owner.nome, ...(owner.cpf ? { cpf: maskCpf(owner.cpf) } : { cnpj: maskCnpj(owner.cnpj ?? '') }) } : undefined;
      favorecido = { chave: send.favorecido.chave, ...(identificacao ? { identificacao } : {}) };
    } else {
      const { nome, cpf, cnpj, agencia, conta, tipoConta } = send.favorecido.contaBanco;
      favorecido = { contaBanco: { nome, ...(cpf ? { cpf: maskCpf(cpf) } : {}), ...(cnpj ? { cnpj: maskCnpj(cnpj) } : {}), agencia, conta, tipoConta } };
    }
    return {
      endToEndId: send.e2eId,
      idEnvio: send.idEnvio,
      valor: send.valor,
      chave: send.pagadorChave,
      status: send.status,
      ...(send.infoPagador !== undefined ? { infoPagador: send.infoPagador } : {}),
      horario: { solicitacao: send.solicitacao, ...(send.liquidacao ? { liquidacao: send.liquidacao } : {}) },
      favorecido,
    };
  }

  private ordered(): SendRecord[] {
    return [...this.sends.values()].sort((a, b) => Date.parse(a.solicitacao) - Date.parse(b.solicitacao));
  }

  private keyOf(idEnvio: string): string {
    return this.options.idEnvioCaseSensitive ? idEnvio : idEnvio.toLowerCase();
  }

  private find(idEnvio: string): SendRecord | undefined {
    return this.sends.get(this.keyOf(idEnvio));
  }

  private mustFind(idEnvio: string): SendRecord {
    const send = this.find(idEnvio);
    if (!send) throw new Error(`no send ${idEnvio}`);
    return send;
  }

  private withinRateLimit(): boolean {
    const now = Date.now();
    while (this.recentSends.length > 0 && this.recentSends[0] <= now - 1000) this.recentSends.shift();
    if (this.recentSends.length >= this.options.sendRateLimitPerSecond) return false;
    this.recentSends.push(now);
    return true;
  }

  private violation(call: EfiCall, text: string): void {
    this.deps.violations.push(`${call.method} ${call.url.pathname}: ${text}`);
  }
}

// ---------------------------------------------------------------- schemas

export type EfiSchemaName =
  | 'SendRequest'
  | 'SendResponse'
  | 'SentPix'
  | 'SentPixList'
  | 'ErroEfi'
  | 'Problema'
  | 'ErroOAuth'
  | 'TokenRequest'
  | 'TokenResponse'
  | 'WebhookConfigRequest'
  | 'WebhookResendRequest'
  | 'WebhookCallback'
  | 'WebhookSentPixItem';

let efiAjv: Ajv2020 | null = null;
const efiValidators = new Map<string, ValidateFunction>();

function efiValidator(name: EfiSchemaName): ValidateFunction {
  const cached = efiValidators.get(name);
  if (cached) return cached;
  if (!efiAjv) {
    let schemas: Record<string, unknown>;
    try {
      schemas = JSON.parse(readFileSync(SCHEMAS_FILE, 'utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new Error(`Efí schemas not found at ${SCHEMAS_FILE} (set EFI_PIX_SCHEMAS_FILE): ${(error as Error).message}`);
    }
    efiAjv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(efiAjv);
    efiAjv.addSchema(schemas, SCHEMAS_ID);
  }
  const compiled = efiAjv.compile({ $ref: `${SCHEMAS_ID}#/$defs/${name}` });
  efiValidators.set(name, compiled);
  return compiled;
}

/** What is wrong with `data` as `$defs/<name>` of efi-pix-envio.schemas.json (empty: nothing). */
export function validateEfi(name: EfiSchemaName, data: unknown): string[] {
  const validate = efiValidator(name);
  if (validate(data)) return [];
  return [...new Set((validate.errors ?? []).map((error) => `${error.instancePath || '/'}: ${errorText(error)}`))];
}

function ajvProblems(name: EfiSchemaName, data: unknown): Array<{ chave: string; caminho: string; mensagem: string }> {
  const validate = efiValidator(name);
  if (validate(data)) return [];
  const seen = new Set<string>();
  const found: Array<{ chave: string; caminho: string; mensagem: string }> = [];
  for (const error of validate.errors ?? []) {
    const caminho = ['body', ...error.instancePath.split('/').filter(Boolean)].join('.');
    const mensagem = errorText(error);
    if (seen.has(`${caminho} ${mensagem}`)) continue;
    seen.add(`${caminho} ${mensagem}`);
    found.push({ chave: error.keyword, caminho, mensagem });
  }
  return found;
}

function errorText(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') return `${error.message} (${String(params.additionalProperty)})`;
  if (error.keyword === 'enum') return `${error.message} (${(params.allowedValues as unknown[]).join(', ')})`;
  return error.message ?? error.keyword;
}

// ---------------------------------------------------------------- helpers

function matchRoute(method: string, path: string): MatchedRoute | null {
  const decode = (text: string): string | null => {
    try {
      return decodeURIComponent(text);
    } catch {
      return null;
    }
  };
  if (method === 'GET') {
    if (path === '/v2/gn/pix/enviados') return { name: 'list', version: 'v2' };
    const byId = /^\/v2\/gn\/pix\/enviados\/id-envio\/([^/]+)$/.exec(path);
    if (byId) return decode(byId[1]) === null ? null : { name: 'lookup-id-envio', version: 'v2', param: decode(byId[1]) ?? '' };
    const byE2e = /^\/v2\/gn\/pix\/enviados\/([^/]+)$/.exec(path);
    if (byE2e) return decode(byE2e[1]) === null ? null : { name: 'lookup-e2e', version: 'v2', param: decode(byE2e[1]) ?? '' };
  }
  if (method === 'PUT') {
    const send = /^\/(v\d+)\/gn\/pix\/([^/]+)$/.exec(path);
    if (send && decode(send[2]) !== null) return { name: 'send', version: send[1], param: decode(send[2]) ?? '' };
  }
  return null;
}

interface ListFilters {
  inicio: string;
  fim: string;
  status?: EfiSendStatus;
  cpf?: string;
  cnpj?: string;
  devolucaoPresente?: boolean;
  paginaAtual: number;
  itensPorPagina: number;
}

const LIST_PARAMETERS = ['inicio', 'fim', 'status', 'devolucaoPresente', 'cpf', 'cnpj', 'exibirCodigoBanco', 'paginacao.paginaAtual', 'paginacao.itensPorPagina'];
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** The list's query (ref §4) read and checked: `reasons` says what is off. */
function listFilters(params: URLSearchParams, defaultPageSize: number): { filters: ListFilters | null; reasons: Array<{ razao: string; propriedade: string }> } {
  const reasons: Array<{ razao: string; propriedade: string }> = [];
  const off = (propriedade: string, razao: string) => reasons.push({ propriedade, razao });
  for (const name of new Set(params.keys())) {
    if (!LIST_PARAMETERS.includes(name)) off(name, 'não é um parâmetro desta operação');
    else if (params.getAll(name).length > 1) off(name, 'está repetido');
  }
  const value = (name: string) => params.get(name) ?? undefined;
  const inicio = value('inicio');
  const fim = value('fim');
  for (const [name, text] of [['inicio', inicio], ['fim', fim]] as const) {
    if (text === undefined) off(name, 'é obrigatório');
    else if (!RFC3339.test(text) || Number.isNaN(Date.parse(text))) off(name, 'deve ser uma data RFC 3339');
  }
  if (inicio && fim && Date.parse(inicio) > Date.parse(fim)) off('fim', 'deve ser posterior a inicio');
  const status = value('status');
  if (status !== undefined && !['EM_PROCESSAMENTO', 'REALIZADO', 'NAO_REALIZADO'].includes(status)) off('status', 'deve ser EM_PROCESSAMENTO, REALIZADO ou NAO_REALIZADO');
  const cpf = value('cpf');
  if (cpf !== undefined && !/^\d{11}$/.test(cpf)) off('cpf', 'deve ter 11 dígitos');
  const cnpj = value('cnpj');
  if (cnpj !== undefined && !/^\d{14}$/.test(cnpj)) off('cnpj', 'deve ter 14 dígitos');
  if (cpf !== undefined && cnpj !== undefined) off('cnpj', 'cpf e cnpj não podem ser usados juntos');
  for (const name of ['devolucaoPresente', 'exibirCodigoBanco']) {
    const text = value(name);
    if (text !== undefined && text !== 'true' && text !== 'false') off(name, 'deve ser true ou false');
  }
  const integer = (name: string, min: number, max: number, fallback: number): number => {
    const text = value(name);
    if (text === undefined) return fallback;
    if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
      off(name, `deve ser um inteiro de ${min} a ${max}`);
      return fallback;
    }
    return Number(text);
  };
  const paginaAtual = integer('paginacao.paginaAtual', 0, Number.MAX_SAFE_INTEGER, 0);
  const itensPorPagina = integer('paginacao.itensPorPagina', 1, 1000, defaultPageSize);
  if (reasons.length > 0 || inicio === undefined || fim === undefined) return { filters: null, reasons };
  const devolucao = value('devolucaoPresente');
  return {
    filters: {
      inicio,
      fim,
      ...(status !== undefined ? { status: status as EfiSendStatus } : {}),
      ...(cpf !== undefined ? { cpf } : {}),
      ...(cnpj !== undefined ? { cnpj } : {}),
      ...(devolucao !== undefined ? { devolucaoPresente: devolucao === 'true' } : {}),
      paginaAtual,
      itensPorPagina,
    },
    reasons,
  };
}

function parseJson(call: EfiCall): { body: unknown; problems: Array<{ chave: string; caminho: string; mensagem: string }> } {
  const problems: Array<{ chave: string; caminho: string; mensagem: string }> = [];
  const contentType = call.headers['content-type'];
  if (!/^application\/json\b/i.test(contentType ?? '')) problems.push({ chave: 'content-type', caminho: 'content-type', mensagem: `deve ser application/json, não ${contentType ?? 'ausente'}` });
  if (call.rawBody.length === 0) return { body: undefined, problems: [...problems, { chave: 'required', caminho: 'body', mensagem: 'é obrigatório' }] };
  try {
    return { body: JSON.parse(call.rawBody), problems };
  } catch {
    return { body: undefined, problems: [...problems, { chave: 'json', caminho: 'body', mensagem: 'não é JSON' }] };
  }
}

function json(status: number, body: unknown): EfiAnswer {
  return { status, body, contentType: 'application/json' };
}

function problema(type: string, title: string, status: number, detail: string): Record<string, unknown> {
  return { type: type === 'about:blank' ? type : `https://pix.bcb.gov.br/api/v2/error/${type}`, title, status, detail };
}

function named(nome: EfiRefusalName, mensagem?: string): EfiRefusalSpec {
  return { status: EFI_REFUSALS[nome].status, nome, mensagem: mensagem ?? EFI_REFUSALS[nome].mensagem };
}

function refusal(nome: EfiRefusalName): EfiAnswer {
  const spec = named(nome);
  return json(spec.status, { nome: spec.nome, mensagem: spec.mensagem });
}

/** Efí's 500 (`erro_aplicacao`, documented for the send); other statuses as an RFC 7807 problem. */
function efiFailureBody(status: number): unknown {
  if (status === 500) return { nome: 'erro_aplicacao', mensagem: EFI_REFUSALS.erro_aplicacao.mensagem };
  const titles: Record<number, string> = { 502: 'Bad Gateway', 503: 'Serviço Indisponível', 504: 'Tempo esgotado.' };
  return problema('about:blank', titles[status] ?? 'Erro', status, titles[status] ?? 'Erro');
}

function sendFilter(): FaultFilter {
  return { method: 'PUT', path: EFI_SEND_PATH };
}

/** Stable JSON: keys sorted at every level, so two bodies that mean the same compare equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function maskCpf(cpf: string): string {
  return `***.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-**`;
}

function maskCnpj(cnpj: string): string {
  return `**.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-**`;
}

const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

function redactedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const redacted: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    if (!SECRET_HEADERS.has(name)) redacted[name] = text;
    else redacted[name] = name === 'cookie' ? '[redacted]' : `${text.split(' ')[0]} [redacted]`;
  }
  return redacted;
}

function recordedBody(call: EfiCall): unknown {
  if (call.rawBody.length === 0) return undefined;
  if (/^application\/x-www-form-urlencoded\b/i.test(call.headers['content-type'] ?? '')) {
    const form = new URLSearchParams(call.rawBody);
    if (form.has('client_secret')) form.set('client_secret', '[redacted]');
    return Object.fromEntries(form);
  }
  try {
    return JSON.parse(call.rawBody);
  } catch {
    return call.rawBody;
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, one]) => one !== undefined)) as Partial<T>;
}

function assertValor(valor: string): void {
  if (!/^\d{1,10}\.\d{2}$/.test(valor)) throw new Error(`valor ${valor} is not "<reais>.<two decimals>"`);
}
