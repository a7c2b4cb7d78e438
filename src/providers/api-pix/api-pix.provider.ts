import { Logger, OnModuleDestroy } from '@nestjs/common';
import { Cents, centsToReaisString, reaisToCents } from '../../domain/money';
import { PixCharge, PixChargeRequest, PixProvider, PixRequestRefusedError, PixReturn, ReceivedPix } from '../pix-provider.port';
import { ApiPixClient } from './api-pix.client';

/** The API Pix PSP's name in the registry and on every record it holds. */
export const API_PIX = 'api-pix';

/** The wire shapes of the BCB's API Pix 2.9.0 the adapter reads (components/schemas). */
interface CobGerada {
  txid: string;
  status: string;
  chave: string;
  pixCopiaECola?: string;
  valor: { original: string };
}
interface DevolucaoWire {
  id: string;
  rtrId?: string;
  valor: string;
  status: PixReturn['status'];
  motivo?: string;
  /** DevolucaoNatureza: ORIGINAL (absent), RETIRADA, MED_OPERACIONAL, MED_FRAUDE, MED_PIX_AUTOMATICO. */
  natureza?: string;
}
interface PixWire {
  endToEndId: string;
  txid?: string;
  valor: string;
  horario: string;
  devolucoes?: DevolucaoWire[];
}
interface PixConsultados {
  parametros: { paginacao: { paginaAtual: number; quantidadeDePaginas: number } };
  pix?: PixWire[];
}

/** Items asked per page of GET /pix. */
const PAGE_SIZE = 100;

/**
 * The PIX provider port on a PSP's API Pix (BCB, release 2.9.0): immediate charges (`/cob`), received
 * Pix (`/pix`) and their returns (`/pix/{e2eid}/devolucao/{id}`), and the webhook of the receiver's key.
 * Amounts cross here as the standard's decimal strings, converted by domain/money.ts.
 */
export class ApiPixProvider implements PixProvider, OnModuleDestroy {
  readonly name = API_PIX;
  readonly keepsChargesOpen = false;
  readonly reconciled = true;
  private readonly logger = new Logger(ApiPixProvider.name);

  constructor(
    private readonly client: ApiPixClient,
    private readonly receiverKey: string,
  ) {}

  async createCharge(request: PixChargeRequest): Promise<PixCharge> {
    const body = {
      calendario: { expiracao: request.expiresInSeconds },
      ...(request.payer?.documentNumber && request.payer.documentType
        ? { devedor: { [request.payer.documentType === 'CPF' ? 'cpf' : 'cnpj']: request.payer.documentNumber, nome: request.payer.name.slice(0, 200) } }
        : {}),
      valor: { original: centsToReaisString(request.amountCents) },
      chave: this.receiverKey,
      ...(request.description ? { solicitacaoPagador: request.description.slice(0, 140) } : {}),
    };
    const path = `/cob/${request.txid}`;
    let cob: CobGerada;
    try {
      cob = await this.expect<CobGerada>('PUT', path, body);
    } catch (error) {
      // A retry after an answer that was lost: the txid is taken, by the charge we asked for.
      if (!(error instanceof PixRequestRefusedError)) throw error;
      const existing = await this.client.call<CobGerada>('GET', path);
      if (existing.status === 404 || existing.body.valor.original !== body.valor.original) throw error;
      cob = existing.body;
    }
    if (!cob.pixCopiaECola) throw new Error(`The PSP answered charge ${request.txid} without its pixCopiaECola`);
    return { code: cob.pixCopiaECola, receiverKey: cob.chave, externalId: cob.txid };
  }

  async removeCharge(txid: string): Promise<void> {
    try {
      await this.client.call('PATCH', `/cob/${txid}`, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' });
    } catch (error) {
      // Paid or removed meanwhile: a Pix that came in is applied or returned by reconciliation.
      if (!(error instanceof PixRequestRefusedError)) throw error;
      this.logger.warn({ txid, status: error.status }, 'The PSP would not remove a charge; leaving it to reconciliation');
    }
  }

  async findPix(endToEndId: string): Promise<ReceivedPix | null> {
    const answer = await this.client.call<PixWire>('GET', `/pix/${encodeURIComponent(endToEndId)}`);
    return answer.status === 404 ? null : toReceived(answer.body);
  }

  async listReceived(from: Date, to: Date, options: { withReturnsOnly?: boolean } = {}): Promise<ReceivedPix[]> {
    const received: ReceivedPix[] = [];
    for (let page = 0; ; page += 1) {
      const query = new URLSearchParams({ inicio: from.toISOString(), fim: to.toISOString(), 'paginacao.paginaAtual': String(page), 'paginacao.itensPorPagina': String(PAGE_SIZE) });
      if (options.withReturnsOnly) query.set('devolucaoPresente', 'true');
      const answer = await this.expect<PixConsultados>('GET', `/pix?${query}`);
      received.push(...(answer.pix ?? []).map(toReceived));
      if (page + 1 >= answer.parametros.paginacao.quantidadeDePaginas) return received;
    }
  }

  async requestReturn(endToEndId: string, refundId: string, amountCents: Cents, description: string): Promise<PixReturn> {
    const body = { valor: centsToReaisString(amountCents), natureza: 'ORIGINAL', descricao: description.slice(0, 140) };
    return toReturn(await this.expect<DevolucaoWire>('PUT', `/pix/${encodeURIComponent(endToEndId)}/devolucao/${refundId}`, body));
  }

  async findReturn(endToEndId: string, refundId: string): Promise<PixReturn | null> {
    const answer = await this.client.call<DevolucaoWire>('GET', `/pix/${encodeURIComponent(endToEndId)}/devolucao/${refundId}`);
    return answer.status === 404 ? null : toReturn(answer.body);
  }

  /** Registers where the PSP notifies the Pix received on the receiver's key (PUT /webhook/{chave}). */
  async registerWebhook(webhookUrl: string): Promise<void> {
    await this.expect('PUT', `/webhook/${encodeURIComponent(this.receiverKey)}`, { webhookUrl });
  }

  onModuleDestroy(): void {
    this.client.close();
  }

  /** A call whose 404 is an error too (the resource must exist). */
  private async expect<T>(method: 'GET' | 'PUT' | 'PATCH', path: string, body?: unknown): Promise<T> {
    const answer = await this.client.call<T>(method, path, body);
    if (answer.status === 404) throw new PixRequestRefusedError(404, { title: 'Not found', detail: `${method} ${path}` });
    return answer.body;
  }
}

function amountOf(valor: string): Cents {
  const amount = reaisToCents(valor);
  if (amount === null) throw new Error(`The PSP answered an amount that is not one: ${JSON.stringify(valor)}`);
  return amount;
}

function toReturn(wire: DevolucaoWire): PixReturn {
  return { id: wire.id, returnId: wire.rtrId ?? null, amountCents: amountOf(wire.valor), status: wire.status, reason: wire.motivo ?? null, nature: wire.natureza ?? 'ORIGINAL' };
}

function toReceived(wire: PixWire): ReceivedPix {
  return {
    endToEndId: wire.endToEndId,
    txid: wire.txid ?? null,
    amountCents: amountOf(wire.valor),
    paidAt: new Date(wire.horario),
    returns: (wire.devolucoes ?? []).map(toReturn),
  };
}
