import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { forEachConcurrently } from '../common/concurrency';
import { addDays, boletoDueDate, brazilDate, endOfBrazilDay } from '../domain/dates';
import { DomainError } from '../domain/domain-error';
import { FeeSchedule } from '../domain/fees';
import { Cents, cents } from '../domain/money';
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
import { SaleQueryDto } from './dto/sale-query.dto';
import { SaleEntity } from './entities/sale.entity';
import { SaleItemEntity } from './entities/sale-item.entity';
import { pixQrCodeDataUri } from './pix-qr-code';
import { SaleHooks } from './sale-hooks';
import { assertOwnedSale, MoveContext, SaleTransitionsService } from './sale-transitions.service';
import { SaleListItem, toCreateSaleResponse, toSaleListItem, toTransaction } from './sale.presenter';
import { SalesRepository } from './sales.repository';

export { DEFAULT_BOLETO_DAYS, MINIMUM_SALE_CENTS } from '../domain/sale-request';

const SCOPE = 'POST /api/sales';

export interface CreatedSale {
  status: number;
  body: CreateSaleResponse;
  replayed: boolean;
}

/** A charge of a subscription, written as a sale (SalesService.openRenewal). */
export interface RenewalSale {
  saleId: number;
  sellerId: number;
  subscriptionId: number;
  period: number;
  attempt: number;
  paymentMethod: 'PIX' | 'CREDIT_CARD';
  amountCents: Cents;
  title: string;
  productId: number | null;
  customer: { name: string; email: string; document: string | null; phone: string | null };
  card: CardToken | null;
  document: PaymentDocument | null;
  postbackUrl: string | null;
}

/** What the provider gave a PIX or boleto sale before it is written. */
export type PaymentDocument = Pick<SaleEntity, 'pixCode' | 'pixReceiverKey' | 'boletoCode' | 'externalTransactionId' | 'expiresAt'>;

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
    private readonly hooks: SaleHooks,
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
    const found = await this.sales.findForLookup(saleId);
    const sale = found?.sale ?? null;
    assertOwnedSale(sale, sellerId, saleId);
    return toTransaction(sale, found?.items ?? []);
  }

  /** A page of the seller's sales, newest first, filtered; dates are Brazilian days, both inclusive. */
  async list(sellerId: number, query: SaleQueryDto): Promise<{ sales: SaleListItem[]; pagination: { page: number; limit: number; total: number; totalPages: number } }> {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    if (query.startDate && query.endDate && query.startDate > query.endDate) {
      throw new DomainError('VALIDATION_ERROR', 'startDate must not be after endDate', { field: 'startDate' });
    }
    const { rows, total } = await this.sales.page(
      sellerId,
      {
        status: query.status,
        paymentMethod: query.paymentMethod,
        search: query.search?.trim() || undefined,
        createdFrom: query.startDate ? addDays(endOfBrazilDay(query.startDate), -1) : undefined,
        createdBefore: query.endDate ? endOfBrazilDay(query.endDate) : undefined,
      },
      page,
      limit,
    );
    return { sales: rows.map(toSaleListItem), pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
  }

  /** The sale's status history, oldest first: 404 unknown, 403 another seller's. */
  async statusHistory(sellerId: number, saleId: number): Promise<Array<{ previousStatus: string | null; status: string; changedAt: Date }>> {
    assertOwnedSale(await this.sales.findById(saleId), sellerId, saleId);
    return this.sales.statusHistory(saleId);
  }

  /** Paid sales (PAGO now) per Brazilian day over the last `days` days up to `now`, every day listed, oldest first. */
  async paidPerDay(sellerId: number, days: number, now = new Date()): Promise<Array<{ day: string; amountCents: Cents; count: number }>> {
    const today = brazilDate(now);
    const first = brazilDate(addDays(now, -(days - 1)));
    const rows = await this.sales.paidPerDay(sellerId, addDays(endOfBrazilDay(first), -1));
    const byDay = new Map(rows.map((row) => [row.day, row]));
    const result: Array<{ day: string; amountCents: Cents; count: number }> = [];
    for (let offset = days - 1; offset >= 0; offset -= 1) {
      const day = brazilDate(addDays(now, -offset));
      if (day > today) break;
      result.push(byDay.get(day) ?? { day, amountCents: cents(0), count: 0 });
    }
    return result;
  }

  /** PIX, boleto and transfer: the provider's document first, then the sale, its key and its answer in one transaction. */
  private async createDocumentSale(sellerId: number, request: CreateSaleDto, profile: SalesProfile, idempotent: IdempotentRequest | null): Promise<CreatedSale> {
    const now = new Date();
    const saleId = await this.sales.nextId();
    const document = await this.paymentDocument(saleId, request, profile, now);
    const qrCode = document.pixCode ? pixQrCodeDataUri(document.pixCode) : null;
    const outcome = await this.dataSource.transaction(async (manager) => {
      const prior = await this.idempotency.claim(manager, idempotent);
      if (prior) return prior;
      const columns = { ...this.saleColumns(sellerId, request), ...document, id: saleId, status: 'PENDENTE' as const };
      const subscriptionId = await this.openSubscription(manager, columns, request, now);
      const sale = await this.sales.insert({ ...columns, ...billingColumns(subscriptionId) }, this.itemRows(request), manager);
      const body = await this.withSubscription(toCreateSaleResponse(sale, qrCode), sale, manager);
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
      const subscriptionId = await this.openSubscription(manager, columns, request, now);
      const sale = await this.sales.insert({ ...columns, ...billingColumns(subscriptionId) }, this.itemRows(request), manager);
      await this.idempotency.attachResource(manager, idempotent, sale.id);
      return this.transitions.move(manager, sale, 'SENT_TO_ACQUIRER', { now, fees: profile.fees });
    });
    if ('kind' in opened) return this.answerPriorUse(opened);
    const answerOpened = async () => ({ status: 201, body: await this.withSubscription(toCreateSaleResponse(await this.currentOr(opened), null), opened), replayed: false });

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
      return answerOpened();
    }
    try {
      const body = await this.dataSource.transaction(async (manager) => {
        const sale = (await this.sales.findByIdForUpdate(opened.id, manager)) as SaleEntity;
        const moved = await this.transitions.applyCharge(manager, sale, charge, { now: new Date(), fees: profile.fees });
        const answer = await this.withSubscription(toCreateSaleResponse(moved, null), moved, manager);
        await this.idempotency.saveResponse(manager, idempotent, 201, answer);
        return answer;
      });
      return { status: 201, body, replayed: false };
    } catch (error) {
      this.logger.error({ err: error, saleId: opened.id }, 'Card charge answered but its outcome was not saved; the recovery job will apply it');
      return answerOpened();
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
    return { status: 201, body: await this.withSubscription(toCreateSaleResponse(sale, null), sale), replayed: true };
  }

  /** Opens the subscription of a sale with subscription.enabled, in the sale's transaction; its id, or null. */
  private async openSubscription(manager: EntityManager, sale: Partial<SaleEntity>, request: CreateSaleDto, now: Date): Promise<number | null> {
    if (!request.subscription?.enabled) return null;
    return this.hooks.subscriptions.open(manager, sale, request.items, request.subscription, now);
  }

  /** The creation answer with `sale.subscription` (spec 2.5) when the sale created a subscription. */
  private async withSubscription(body: CreateSaleResponse, sale: SaleEntity, manager?: EntityManager): Promise<CreateSaleResponse> {
    if (sale.subscriptionId === null) return body;
    const subscription = await this.hooks.subscriptions.summary(sale.subscriptionId, manager);
    return subscription ? { ...body, sale: { ...body.sale, subscription } } : body;
  }

  /**
   * A renewal of a subscription (the subscriptions module's billing), in the caller's transaction: the
   * sale written under `saleId` for its (subscription, period, attempt), and for a card sent to the
   * acquirer. Null when that attempt exists already (another instance made it): the unique index decides.
   */
  async openRenewal(manager: EntityManager, renewal: RenewalSale, context: MoveContext): Promise<SaleEntity | null> {
    const sale = await this.sales.insertIfAbsent(renewalSaleColumns(renewal), [renewalItem(renewal)], manager);
    if (!sale) return null;
    if (renewal.paymentMethod === 'CREDIT_CARD') return this.transitions.move(manager, sale, 'SENT_TO_ACQUIRER', context);
    if (sale.postbackUrl) {
      // A PIX renewal is announced to the subscription's postbackUrl: the customer has a new code to pay.
      await this.notifications.enqueueSaleStatusChange(manager, {
        sellerId: sale.sellerId,
        resourceId: sale.id,
        url: sale.postbackUrl,
        previousStatus: null,
        status: sale.status,
        changedAt: context.now,
        data: toTransaction(sale, await this.sales.itemsOf(sale.id, manager)),
      });
    }
    return sale;
  }

  /** The PIX code of a renewal, from the provider (outside any transaction), under the id its sale will have. */
  async renewalPixDocument(sellerId: number, saleId: number, amountCents: Cents, expiresAt: Date): Promise<PaymentDocument> {
    const profile = await this.sellers.salesProfile(sellerId);
    const pix = await this.provider.createPixCharge({ amountCents, txid: `SALE${saleId}`, receiverKey: null, merchantName: profile.merchantName, merchantCity: profile.merchantCity });
    return { pixCode: pix.code, pixReceiverKey: pix.receiverKey, boletoCode: null, externalTransactionId: pix.externalId, expiresAt };
  }

  /**
   * In the caller's transaction: the subscription's charges still open (PENDENTE, or FALHA that a retry
   * could still pay), of one period or of all, moved to CANCELADO, so that a cancelled, paused or
   * retried subscription cannot be paid twice or after the fact.
   */
  async cancelOpenCharges(manager: EntityManager, subscriptionId: number, period: number | null, context: MoveContext): Promise<number> {
    const open = await this.sales.findOpenOfSubscriptionForUpdate(subscriptionId, period, manager);
    for (const sale of open) await this.transitions.move(manager, sale, 'CANCELLED', context);
    return open.length;
  }

  /** Paid sales of a subscription stopped before their charge was approved, to be refunded (in the caller's transaction). */
  markRefundDue(manager: EntityManager, saleIds: number[], at: Date): Promise<void> {
    return this.sales.markRefundDue(saleIds, at, manager);
  }

  /** Card sales of the subscription whose charge is between its two commits. */
  inProcessingOfSubscription(subscriptionId: number): Promise<Array<{ id: number; sellerId: number }>> {
    return this.sales.inProcessingOfSubscription(subscriptionId);
  }

  nextSaleId(): Promise<number> {
    return this.sales.nextId();
  }

  /** `count` sale ids for a billing batch, in one round trip. */
  nextSaleIds(count: number): Promise<number[]> {
    return this.sales.nextIds(count);
  }

  /**
   * The renewals of a billing batch, in the caller's transaction, with the same result as openRenewal
   * for each: every sale written PENDENTE with its item and status line (multi-row statements; one whose
   * (subscription, period, attempt) exists already is skipped, the unique index decides), the cards
   * sent to the acquirer (SaleTransitionsService.moveMany), the PIX renewals announced to their
   * postbackUrl. The sales written, in id order.
   */
  async openRenewals(manager: EntityManager, renewals: RenewalSale[], now: Date, schedules: ReadonlyMap<number, FeeSchedule>): Promise<SaleEntity[]> {
    const byId = new Map(renewals.map((renewal) => [renewal.saleId, renewal]));
    const written = await this.sales.insertManyIfAbsent(
      renewals.map(renewalSaleColumns),
      (saleId) => [renewalItem(byId.get(saleId) as RenewalSale)],
      manager,
    );
    const cards = written.filter((sale) => sale.paymentMethod === 'CREDIT_CARD');
    const sent = new Map(
      (await this.transitions.moveMany(manager, cards.map((sale) => ({ sale, event: 'SENT_TO_ACQUIRER' as const })), now, schedules)).map((sale) => [sale.id, sale]),
    );
    // Charged by the caller after the commit, `concurrency` at a time: out of the recovery job's reach until then.
    await this.transitions.holdFromRecovery(
      cards.map((sale) => sale.id),
      manager,
    );
    // A PIX renewal is announced to the subscription's postbackUrl: the customer has a new code to pay.
    const announced = written.filter((sale) => sale.paymentMethod === 'PIX' && sale.postbackUrl);
    const items = await this.sales.itemsOfMany(announced.map((sale) => sale.id), manager);
    await this.notifications.enqueueSaleStatusChanges(
      manager,
      announced.map((sale) => ({
        sellerId: sale.sellerId,
        resourceId: sale.id,
        url: sale.postbackUrl as string,
        previousStatus: null,
        status: sale.status,
        changedAt: now,
        data: toTransaction(sale, items.get(sale.id) ?? []),
      })),
    );
    return written.map((sale) => sent.get(sale.id) ?? sale);
  }

  /**
   * The PIX codes of a batch's renewals, from the provider (outside any transaction), each under the id
   * its sale will have, `concurrency` asked at once: by sale id.
   */
  async renewalPixDocuments(
    requests: Array<{ sellerId: number; saleId: number; amountCents: Cents; expiresAt: Date }>,
    concurrency: number,
  ): Promise<Map<number, PaymentDocument>> {
    const profiles = new Map<number, Promise<SalesProfile>>();
    const profileOf = (sellerId: number) => profiles.get(sellerId) ?? profiles.set(sellerId, this.sellers.salesProfile(sellerId)).get(sellerId) as Promise<SalesProfile>;
    const documents = new Map<number, PaymentDocument>();
    await forEachConcurrently(requests, concurrency, async ({ sellerId, saleId, amountCents, expiresAt }) => {
      const profile = await profileOf(sellerId);
      const pix = await this.provider.createPixCharge({ amountCents, txid: `SALE${saleId}`, receiverKey: null, merchantName: profile.merchantName, merchantCity: profile.merchantCity });
      documents.set(saleId, { pixCode: pix.code, pixReceiverKey: pix.receiverKey, boletoCode: null, externalTransactionId: pix.externalId, expiresAt });
    });
    return documents;
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

function billingColumns(subscriptionId: number | null): Partial<SaleEntity> {
  return subscriptionId === null ? {} : { subscriptionId, billingPeriod: 0, billingAttempt: 0 };
}

function cardColumns(card: CardToken): Partial<SaleEntity> {
  return { cardToken: card.token, cardLastFour: card.lastFour, cardBrand: card.brand };
}

const NO_PAYMENT_DOCUMENT: PaymentDocument = { pixCode: null, pixReceiverKey: null, boletoCode: null, externalTransactionId: null, expiresAt: null };

/** The sale of a subscription's charge, as written (PENDENTE) by openRenewal and openRenewals. */
function renewalSaleColumns(renewal: RenewalSale): Partial<SaleEntity> & { id: number; status: 'PENDENTE' } {
  return {
    id: renewal.saleId,
    sellerId: renewal.sellerId,
    status: 'PENDENTE',
    paymentMethod: renewal.paymentMethod,
    amountCents: renewal.amountCents,
    installments: renewal.paymentMethod === 'CREDIT_CARD' ? 1 : null,
    customerName: renewal.customer.name,
    customerEmail: renewal.customer.email,
    customerDocumentType: renewal.customer.document ? (renewal.customer.document.length > 11 ? 'cnpj' : 'cpf') : null,
    customerDocumentNumber: renewal.customer.document,
    customerPhone: renewal.customer.phone,
    cardToken: renewal.card?.token ?? null,
    cardLastFour: renewal.card?.lastFour ?? null,
    cardBrand: renewal.card?.brand ?? null,
    ...NO_PAYMENT_DOCUMENT,
    ...(renewal.document ?? {}),
    shipping: null,
    postbackUrl: renewal.postbackUrl,
    tracking: {},
    metadata: null,
    subscriptionId: renewal.subscriptionId,
    billingPeriod: renewal.period,
    billingAttempt: renewal.attempt,
  };
}

/** The one item of a subscription's charge: the plan at the subscription's amount. */
function renewalItem(renewal: RenewalSale): Partial<SaleItemEntity> {
  return { title: renewal.title, unitPriceCents: renewal.amountCents, quantity: 1, tangible: false, productId: renewal.productId, planId: null, planName: null, externalId: null };
}
