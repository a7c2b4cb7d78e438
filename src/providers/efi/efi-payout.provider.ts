import { createHash } from 'node:crypto';
import Redis from 'ioredis';
import { Semaphore } from 'redis-semaphore';
import { cents, centsToReaisString, reaisToCents } from '../../domain/money';
import { samePixKey } from '../../domain/pix-key';
import { PayoutState } from '../../domain/withdrawal-status';
import { ApiPixClient } from '../api-pix/api-pix.client';
import { API_PIX } from '../api-pix/api-pix.provider';
import { ListedPayout, PayoutProvider, PayoutReceipt, PayoutRefusedError, PayoutRequest, PayoutResult } from '../payout-provider.port';
import { PixRequestRefusedError } from '../pix-provider.port';

/** The provider name written on the withdrawals Efí pays out. */
export const EFI = 'efi';

/** Efí's send settings (EFI_* variables) and the paying key (API_PIX_RECEIVER_KEY: the account the Pix were received in). */
export interface EfiSendSettings {
  sendVersion: 'v2' | 'v3';
  sendIdPrefix: string;
  sendsAtOnce: number;
  payerKey: string;
  /** The API Pix client's longest wait for one answer: a send slot is held at most a few of them. */
  timeoutMs: number;
  /** The least time between two sends of one withdrawal (EFI_RESEND_AFTER_SECONDS, in ms). */
  resendAfterMs: number;
}

/** A sent Pix as Efí's look-ups and list answer it (efi-pix-envio.md §4; the fields this adapter reads). */
interface SentPix {
  idEnvio?: string;
  endToEndId?: string;
  e2eId?: string;
  valor?: string;
  status?: string;
  horario?: { solicitacao?: string; liquidacao?: string };
  gnExtras?: { erro?: { codigo?: string; motivo?: string } };
  favorecido?: { chave?: string };
}

/** A send's answer (§2.4): the end-to-end id under `e2eId` (docs, 1.x SDK) or `endToEndId` (2.x SDK) — both accepted. */
interface SendAnswer {
  idEnvio?: string;
  e2eId?: string;
  endToEndId?: string;
  status?: string;
}

/** The list's answer: the BCB-style envelope of the 2.x SDK, or (defensively) a bare array (§4, unconfirmed). */
type SentPixList = { pix?: SentPix[]; parametros?: { paginacao?: { paginaAtual?: number; quantidadeDePaginas?: number } } } | SentPix[];

const STATES: Record<string, PayoutState> = { EM_PROCESSAMENTO: 'PROCESSING', REALIZADO: 'COMPLETED', NAO_REALIZADO: 'REJECTED' };
/** Most items a page of the list holds (§4: 1–1000). */
const PAGE_SIZE = 1000;
/** Longest list read in one reconciliation (pages): a longer one is an error, not a silent truncation. */
const MAX_PAGES = 100;

/**
 * Payouts by Pix through Efí's send extension of its API Pix (../shared/reference/efi-pix-envio.md), on
 * the same connection as the PIX adapter (host, OAuth client with the send scopes, client certificate):
 * `PUT /{v3|v2}/gn/pix/{idEnvio}` from the receiving key to the seller's key with the seller's own
 * document (Efí refuses a key of another owner: chave_nao_pertence_ao_documento), the idEnvio derived
 * from the withdrawal (EFI_SEND_ID_PREFIX + its id, the same on every try, so a repeated send never pays
 * twice); look-ups by idEnvio; the list of sent Pix for reconciliation. At most EFI_SENDS_AT_ONCE sends
 * are on their way at once across every instance (a Redis semaphore), as Efí asks.
 *
 * Unconfirmed points, tolerated: the E2E field's name (`e2eId` or `endToEndId`); a repeated idEnvio with the
 * same body answered 409 or replayed (a 409 is resolved by the look-up, never by a new id); the list as an
 * envelope or a bare array; the send path's version (EFI_SEND_VERSION).
 */
export class EfiPayoutProvider implements PayoutProvider {
  readonly requiresPayeeDocument = true;
  /** The sends leave the account the API Pix adapter receives into. */
  readonly paysFrom = API_PIX;
  readonly resendAfterMs: number;
  /** The send slots of the paying key, shared by every instance (Redis). */
  private readonly slotsKey: string;
  /** A slot is held for one send (its token and its one try); one left by a killed process frees itself after that. */
  private readonly slotHeldMs: number;

  constructor(
    private readonly client: ApiPixClient,
    private readonly settings: EfiSendSettings,
    private readonly redis: Redis,
  ) {
    this.slotsKey = `efi:send-slots:${createHash('sha256').update(settings.payerKey).digest('hex').slice(0, 16)}`;
    this.slotHeldMs = settings.timeoutMs * 2 + 5_000;
    this.resendAfterMs = settings.resendAfterMs;
  }

  providerReferenceFor(reference: string): string {
    return this.sendId(reference);
  }

  /** One holder of a send slot (a semaphore's holder is one acquisition: each send takes its own). */
  private slot(): Semaphore {
    return new Semaphore(this.redis, this.slotsKey, this.settings.sendsAtOnce, {
      lockTimeout: this.slotHeldMs,
      acquireTimeout: this.slotHeldMs * 2,
      retryInterval: 50,
      refreshInterval: 0,
    });
  }

  /** The idEnvio of a reference (`^[a-zA-Z0-9]{1,35}$`). */
  sendId(reference: string): string {
    return `${this.settings.sendIdPrefix}${reference}`;
  }

  /** The reference of one of the gateway's idEnvio, or null for a send it did not make. */
  referenceOf(sendId: string): string | null {
    const { sendIdPrefix } = this.settings;
    return sendId.startsWith(sendIdPrefix) && /^[1-9][0-9]{0,9}$/.test(sendId.slice(sendIdPrefix.length)) ? sendId.slice(sendIdPrefix.length) : null;
  }

  async requestPayout(request: PayoutRequest): Promise<PayoutReceipt> {
    if (!request.payee) throw new PayoutRefusedError(request.reference, 'The seller has no document: Efí pays only to a key of the seller’s own document');
    const body = {
      valor: centsToReaisString(request.netAmountCents),
      pagador: { chave: this.settings.payerKey, infoPagador: `Saque ${request.reference}` },
      favorecido: { chave: request.pixKey, [request.payee.documentType === 'CPF' ? 'cpf' : 'cnpj']: request.payee.documentNumber },
    };
    // The idEnvio the withdrawal recorded at its first attempt, whatever EFI_SEND_ID_PREFIX says now.
    const sendId = request.providerReference;
    const slot = this.slot();
    await slot.acquire();
    let answer: { status: number; body: SendAnswer };
    try {
      // One try: a try retried here could be refused while the first is still on its way at Efí, and
      // that refusal taken for the withdrawal's fate. No answer is left to the recovery job, which looks
      // it up and sends again only EFI_RESEND_AFTER_SECONDS after this attempt.
      answer = await this.client.call<SendAnswer>('PUT', `/${this.settings.sendVersion}/gn/pix/${sendId}`, body, { fromOrigin: true, once: true });
    } catch (error) {
      if (!(error instanceof PixRequestRefusedError)) throw error;
      // The id was used already: by this withdrawal's own earlier try (its answer lost), which the look-up finds.
      if (error.status === 409) return this.receiptOfEarlierSend(request, error);
      throw new PayoutRefusedError(request.reference, reasonOf(error));
    } finally {
      await slot.release();
    }
    if (answer.status === 404) throw new PayoutRefusedError(request.reference, 'chave_favorecido_nao_encontrada: the key was not found');
    const externalId = answer.body.e2eId ?? answer.body.endToEndId;
    if (!externalId) throw new Error(`Efí answered the send ${sendId} without an end-to-end id`);
    return { externalId, status: 'PROCESSING' };
  }

  async findPayout(reference: string, providerReference: string | null): Promise<PayoutResult | null> {
    const answer = await this.client.call<SentPix>('GET', `/v2/gn/pix/enviados/id-envio/${providerReference ?? this.sendId(reference)}`, undefined, { fromOrigin: true });
    if (answer.status === 404) return null;
    return resultOf(answer.body);
  }

  async listPayouts(from: Date, to: Date): Promise<ListedPayout[]> {
    const listed: ListedPayout[] = [];
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const query = new URLSearchParams({ inicio: from.toISOString(), fim: to.toISOString(), 'paginacao.paginaAtual': String(page), 'paginacao.itensPorPagina': String(PAGE_SIZE) });
      const answer = await this.client.call<SentPixList>('GET', `/v2/gn/pix/enviados?${query.toString()}`, undefined, { fromOrigin: true });
      if (answer.status === 404) return listed;
      const items = Array.isArray(answer.body) ? answer.body : (answer.body.pix ?? []);
      for (const item of items) {
        const result = resultOf(item);
        listed.push({
          reference: item.idEnvio ? this.referenceOf(item.idEnvio) : null,
          providerReference: item.idEnvio ?? '',
          status: result.status,
          amountCents: result.amountCents ?? cents(0),
          externalId: result.externalId,
          requestedAt: new Date(item.horario?.solicitacao ?? 0),
        });
      }
      // A bare array says no page count: a full page may have a next one.
      const pages = Array.isArray(answer.body) ? (items.length === PAGE_SIZE ? page + 2 : page + 1) : (answer.body.parametros?.paginacao?.quantidadeDePaginas ?? 1);
      if (page + 1 >= pages || items.length === 0) return listed;
    }
    throw new Error(`Efí's list of sent Pix from ${from.toISOString()} to ${to.toISOString()} has more than ${MAX_PAGES} pages`);
  }

  /**
   * A 409 on our idEnvio: the send that took it, looked up (never a new id). A send of another amount or
   * key under it is not this withdrawal's (another environment on the account with the same prefix, a send
   * made by hand): never taken as its payment, left to an operator. None found is a refusal: the id is
   * held with no send under it (Efí keeps the idEnvio of a send it refused), and no earlier attempt of
   * ours can be on its way any more (attempts are EFI_RESEND_AFTER_SECONDS apart), so it can never be paid.
   */
  private async receiptOfEarlierSend(request: PayoutRequest, conflict: PixRequestRefusedError): Promise<PayoutReceipt> {
    const { reference, providerReference } = request;
    const earlier = await this.findPayout(reference, providerReference);
    if (!earlier) throw new PayoutRefusedError(reference, `${reasonOf(conflict)} (Efí holds the idEnvio ${providerReference} with no send under it)`);
    if ((earlier.amountCents !== undefined && earlier.amountCents !== request.netAmountCents) || (earlier.pixKey !== undefined && !samePixKey(earlier.pixKey, request.pixKey))) {
      throw new Error(`Efí has a send under ${providerReference} of another amount or key than withdrawal ${reference}'s: not its payment; left to an operator`);
    }
    if (!earlier.externalId) throw new Error(`Efí answered 409 for the send of ${reference} and its look-up gives no end-to-end id yet`);
    if (earlier.status === 'REJECTED') throw new PayoutRefusedError(reference, earlier.reason ?? 'NAO_REALIZADO');
    return { externalId: earlier.externalId, status: 'PROCESSING' };
  }
}

/** What a sent Pix says of its payout. */
function resultOf(sent: SentPix): PayoutResult {
  const status = STATES[sent.status ?? ''];
  if (!status) throw new Error(`Efí reported a sent Pix in an unknown status: ${String(sent.status)}`);
  const amount = sent.valor === undefined ? null : reaisToCents(sent.valor);
  const erro = sent.gnExtras?.erro;
  return {
    status,
    externalId: sent.endToEndId ?? sent.e2eId ?? null,
    reason: status === 'REJECTED' ? ([erro?.codigo, erro?.motivo].filter(Boolean).join(': ') || 'NAO_REALIZADO') : null,
    ...(amount === null ? {} : { amountCents: amount }),
    ...(sent.favorecido?.chave ? { pixKey: sent.favorecido.chave } : {}),
  };
}

/** Efí's refusal in its own words: `nome: mensagem` (or the RFC 7807 problem's title and detail). */
function reasonOf(error: PixRequestRefusedError): string {
  const { nome, mensagem, title, detail } = error.problem;
  const what = nome ?? title ?? `HTTP ${error.status}`;
  const why = mensagem ?? detail;
  return why ? `${what}: ${why}` : what;
}
