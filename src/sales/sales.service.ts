import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import * as QRCode from 'qrcode';
import { DataSource } from 'typeorm';
import { addDays, boletoDueDate } from '../domain/dates';
import { cents } from '../domain/money';
import {
  checkPaymentPermission,
  checkSaleRules,
  DEFAULT_BOLETO_DAYS,
  installmentsOf,
  isCardMethod,
  withoutCardSecrets,
} from '../domain/sale-request';
import { IdempotencyService, IdempotentRequest, PriorUse } from '../idempotency/idempotency.service';
import { NotificationsService } from '../notifications/notifications.service';
import { CardToken, chargeReference, ChargeResult, PAYMENT_PROVIDER, PaymentProvider } from '../providers/payment-provider.port';
import { SalesProfile, SellerService } from '../seller/seller.service';
import { CreateSaleDto } from './dto/create-sale.dto';
import { CreateSaleResponse, TransactionResponse } from './dto/sale.response';
import { SaleEntity } from './entities/sale.entity';
import { SaleItemEntity } from './entities/sale-item.entity';
import { assertOwnedSale, SaleTransitionsService } from './sale-transitions.service';
import { toCreateSaleResponse, toTransaction } from './sale.presenter';
import { SalesRepository } from './sales.repository';

export { DEFAULT_BOLETO_DAYS, MINIMUM_SALE_CENTS } from '../domain/sale-request';

const SCOPE = 'POST /api/sales';

export interface CreatedSale {
  status: number;
  body: CreateSaleResponse;
  replayed: boolean;
}

/** What the provider gave a PIX or boleto sale before it is written. */
type PaymentDocument = Pick<SaleEntity, 'pixCode' | 'pixReceiverKey' | 'boletoCode' | 'externalTransactionId' | 'expiresAt'>;

/**
 * Sale creation (POST /api/sales) and lookup (GET /api/transactions/{id}). No provider call runs inside
 * a transaction: a PIX code or boleto is asked for before the sale is written (under an id taken from
 * the sequence); a card sale is committed EM_PROCESSAMENTO first, charged with its id as the provider's
 * reference, and its answer applied in a second transaction by SaleTransitionsService.
 */
@Injectable()
export class SalesService {
  private readonly logger = new Logger(SalesService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sales: SalesRepository,
    private readonly transitions: SaleTransitionsService,
    private readonly sellers: SellerService,
    private readonly idempotency: IdempotencyService,
    private readonly notifications: NotificationsService,
    @Inject(PAYMENT_PROVIDER) private readonly provider: PaymentProvider,
  ) {}

  async create(sellerId: number, request: CreateSaleDto, idempotencyKey: string | undefined): Promise<CreatedSale> {
    checkSaleRules(request);
    const idempotent = this.idempotency.prepare(sellerId, SCOPE, idempotencyKey, withoutCardSecrets(request));
    const prior = await this.idempotency.priorUse(idempotent);
    if (prior) return this.answerPriorUse(prior);
    const profile = await this.sellers.salesProfile(sellerId);
    checkPaymentPermission(request.paymentMethod, profile);
    if (request.postbackUrl) await this.notifications.assertPostbackUrl(request.postbackUrl);
    return isCardMethod(request.paymentMethod)
      ? this.createCardSale(sellerId, request, profile, idempotent)
      : this.createDocumentSale(sellerId, request, profile, idempotent);
  }

  /** GET /api/transactions/{id}: 404 unknown, 403 another seller's. */
  async transaction(sellerId: number, saleId: number): Promise<TransactionResponse> {
    const sale = await this.sales.findById(saleId);
    assertOwnedSale(sale, sellerId, saleId);
    return toTransaction(sale, await this.sales.itemsOf(saleId));
  }

  /** PIX, boleto and transfer: the provider's document first, then the sale, its key and its answer in one transaction. */
  private async createDocumentSale(sellerId: number, request: CreateSaleDto, profile: SalesProfile, idempotent: IdempotentRequest | null): Promise<CreatedSale> {
    const now = new Date();
    const saleId = await this.sales.nextId();
    const document = await this.paymentDocument(saleId, request, profile, now);
    const qrCode = document.pixCode ? await QRCode.toDataURL(document.pixCode, { errorCorrectionLevel: 'M', margin: 2, width: 320 }) : null;
    const outcome = await this.dataSource.transaction(async (manager) => {
      const prior = await this.idempotency.claim(manager, idempotent);
      if (prior) return prior;
      const sale = await this.sales.insert({ ...this.saleColumns(sellerId, request), ...document, id: saleId, status: 'PENDENTE' }, this.itemRows(request), manager);
      const body = toCreateSaleResponse(sale, qrCode);
      await this.idempotency.attachResource(manager, idempotent, sale.id);
      await this.idempotency.saveResponse(manager, idempotent, 201, body);
      return body;
    });
    return 'kind' in outcome ? this.answerPriorUse(outcome) : { status: 201, body: outcome, replayed: false };
  }

  private async paymentDocument(saleId: number, request: CreateSaleDto, profile: SalesProfile, now: Date): Promise<PaymentDocument> {
    const none: PaymentDocument = { pixCode: null, pixReceiverKey: null, boletoCode: null, externalTransactionId: null, expiresAt: null };
    const amountCents = cents(request.amount);
    switch (request.paymentMethod) {
      case 'PIX': {
        const pix = await this.provider.createPixCharge({
          amountCents,
          txid: `SALE${saleId}`,
          receiverKey: request.pix?.key ?? null,
          merchantName: profile.merchantName,
          merchantCity: profile.merchantCity,
        });
        const expiresAt = request.pix?.expiresInDays ? addDays(now, request.pix.expiresInDays) : null;
        return { ...none, pixCode: pix.code, pixReceiverKey: pix.receiverKey, externalTransactionId: pix.externalId, expiresAt };
      }
      case 'BOLETO': {
        const due = boletoDueDate(now, request.boleto?.expiresInDays ?? DEFAULT_BOLETO_DAYS);
        const boleto = await this.provider.createBoleto({ amountCents, dueDate: due.dueDate, reference: saleId });
        return { ...none, boletoCode: boleto.code, externalTransactionId: boleto.externalId, expiresAt: due.expiresAt };
      }
      case 'TRANSFER':
        return { ...none, externalTransactionId: `trf_${saleId}` };
      case 'CREDIT_CARD':
      case 'DEBIT_CARD':
        throw new Error('A card sale is charged (createCardSale), not issued a payment document');
    }
  }

  /**
   * Card sales, in two commits around the charge: (1) the sale EM_PROCESSAMENTO with its idempotency
   * claim; (2) outside any transaction, the charge with the sale's id as reference; (3) the answer
   * applied and saved for replays. If (2) or (3) fails the sale stays EM_PROCESSAMENTO, the request is
   * answered with that state, and the recovery job resolves it by asking the provider.
   */
  private async createCardSale(sellerId: number, request: CreateSaleDto, profile: SalesProfile, idempotent: IdempotentRequest | null): Promise<CreatedSale> {
    const now = new Date();
    const card = await this.provider.tokenizeCard(request.card as NonNullable<CreateSaleDto['card']>);
    const saleId = await this.sales.nextId();
    const opened = await this.dataSource.transaction(async (manager) => {
      const prior = await this.idempotency.claim(manager, idempotent);
      if (prior) return prior;
      const columns = { ...this.saleColumns(sellerId, request), ...cardColumns(card), id: saleId, status: 'PENDENTE' as const };
      const sale = await this.sales.insert(columns, this.itemRows(request), manager);
      await this.idempotency.attachResource(manager, idempotent, sale.id);
      return this.transitions.move(manager, sale, 'SENT_TO_ACQUIRER', { now, fees: profile.fees });
    });
    if ('kind' in opened) return this.answerPriorUse(opened);

    let charge: ChargeResult;
    try {
      charge = await this.provider.chargeCard({
        reference: chargeReference(opened.id),
        token: card.token,
        amountCents: opened.amountCents,
        installments: opened.installments ?? 1,
        kind: 'FIRST',
      });
    } catch (error) {
      this.logger.error({ err: error, saleId: opened.id }, 'Card charge did not answer; the sale stays EM_PROCESSAMENTO for the recovery job');
      return { status: 201, body: toCreateSaleResponse(opened, null), replayed: false };
    }
    try {
      const body = await this.dataSource.transaction(async (manager) => {
        const sale = (await this.sales.findByIdForUpdate(opened.id, manager)) as SaleEntity;
        const moved = await this.transitions.applyCharge(manager, sale, charge, { now: new Date(), fees: profile.fees });
        const answer = toCreateSaleResponse(moved, null);
        await this.idempotency.saveResponse(manager, idempotent, 201, answer);
        return answer;
      });
      return { status: 201, body, replayed: false };
    } catch (error) {
      this.logger.error({ err: error, saleId: opened.id }, 'Card charge answered but its outcome was not saved; the recovery job will apply it');
      return { status: 201, body: toCreateSaleResponse(await this.currentOr(opened), null), replayed: false };
    }
  }

  /** The sale as it is now (another path may have moved it), or `fallback` when it cannot be read. */
  private async currentOr(fallback: SaleEntity): Promise<SaleEntity> {
    return (await this.sales.findById(fallback.id).catch(() => null)) ?? fallback;
  }

  /** A key used before: its saved answer, or (first request between its commits) the sale as it is now. */
  private async answerPriorUse(prior: PriorUse): Promise<CreatedSale> {
    if (prior.kind === 'REPLAY') return { status: prior.status, body: prior.body as CreateSaleResponse, replayed: true };
    const sale = (await this.sales.findById(prior.resourceId)) as SaleEntity;
    return { status: 201, body: toCreateSaleResponse(sale, null), replayed: true };
  }

  private saleColumns(sellerId: number, request: CreateSaleDto): Partial<SaleEntity> {
    const tracking = Object.fromEntries(
      (['utmSource', 'utmMedium', 'utmCampaign', 'utmContent', 'utmTerm', 'src', 'sck'] as const)
        .filter((key) => request[key] !== undefined)
        .map((key) => [key, request[key] as string]),
    );
    return {
      sellerId,
      paymentMethod: request.paymentMethod,
      amountCents: cents(request.amount),
      installments: request.paymentMethod === 'CREDIT_CARD' ? installmentsOf(request) : null,
      customerName: request.customer.name,
      customerEmail: request.customer.email,
      customerDocumentType: request.customer.document?.type ?? null,
      customerDocumentNumber: request.customer.document?.number ?? null,
      customerPhone: request.customer.phone ?? null,
      shipping: request.shipping ? { ...request.shipping } : null,
      postbackUrl: request.postbackUrl ?? null,
      tracking,
      metadata: request.metadata ?? null,
    };
  }

  private itemRows(request: CreateSaleDto): Array<Partial<SaleItemEntity>> {
    return request.items.map((item) => ({
      title: item.title,
      unitPriceCents: cents(item.unitPrice),
      quantity: item.quantity,
      tangible: item.tangible,
      productId: item.productId ?? null,
      planId: item.planId ?? null,
      planName: item.planName ?? null,
      externalId: item.id ?? null,
    }));
  }
}

function cardColumns(card: CardToken): Partial<SaleEntity> {
  return { cardToken: card.token, cardLastFour: card.lastFour, cardBrand: card.brand };
}
