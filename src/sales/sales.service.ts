import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import * as QRCode from 'qrcode';
import { DataSource, EntityManager } from 'typeorm';
import { addDays, boletoDueDate } from '../domain/dates';
import { DomainError, FieldError, RequestValidationError } from '../domain/domain-error';
import { saleFees } from '../domain/fees';
import { Cents, cents } from '../domain/money';
import { reserveReleaseEffect, saleLedgerEffect } from '../domain/sale-ledger';
import { nextSaleStatus, SaleEvent } from '../domain/sale-status';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { NotificationsService } from '../notifications/notifications.service';
import { LedgerService } from '../ledger/ledger.service';
import { PAYMENT_PROVIDER, PaymentProvider } from '../providers/payment-provider.port';
import { SalesProfile, SellerService } from '../seller/seller.service';
import { CreateSaleDto } from './dto/create-sale.dto';
import { CreateSaleResponse, TransactionResponse } from './dto/sale.response';
import { ReversalReason, SaleEntity } from './entities/sale.entity';
import { toCreateSaleResponse, toTransaction } from './sale.presenter';
import { SalesRepository } from './sales.repository';

/** Smallest sale: R$ 1.00 (platform.md §7: a positive amount below it is 422 MINIMUM_AMOUNT). */
export const MINIMUM_SALE_CENTS = cents(100);
/** Boleto due date when the request does not give one (platform.md §7). */
export const DEFAULT_BOLETO_DAYS = 3;
/** Rows one scheduler pass handles per kind of work. */
const BATCH = 500;

const REVERSAL_REASONS: Partial<Record<SaleEvent, ReversalReason>> = {
  REFUNDED: 'REFUNDED',
  CHARGEBACK_CONFIRMED: 'CHARGEBACK_CONFIRMED',
  MED_LOST: 'MED_LOST',
};

export interface SchedulerSummary {
  expiredSales: number;
  releasedReserves: number;
}

@Injectable()
export class SalesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sales: SalesRepository,
    private readonly sellers: SellerService,
    private readonly ledger: LedgerService,
    private readonly idempotency: IdempotencyService,
    private readonly notifications: NotificationsService,
    @Inject(PAYMENT_PROVIDER) private readonly provider: PaymentProvider,
  ) {}

  /** POST /api/sales: validates the business rules, then creates (and for cards charges) the sale in one transaction. */
  async create(sellerId: number, request: CreateSaleDto, idempotencyKey: string | undefined) {
    checkSaleRules(request);
    const profile = await this.sellers.salesProfile(sellerId);
    checkPermission(request, profile);
    if (request.postbackUrl) await this.notifications.assertPostbackUrl(request.postbackUrl);
    return this.idempotency.run<CreateSaleResponse>(
      { sellerId, scope: 'POST /api/sales', key: idempotencyKey, request },
      async (manager) => {
        const sale = await this.open(manager, sellerId, request, profile);
        const qrCode = sale.pixCode ? await QRCode.toDataURL(sale.pixCode, { errorCorrectionLevel: 'M', margin: 2, width: 320 }) : null;
        return { status: 201, body: toCreateSaleResponse(sale, qrCode) };
      },
    );
  }

  /** GET /api/transactions/{id}: 404 unknown, 403 another seller's. */
  async transaction(sellerId: number, saleId: number): Promise<TransactionResponse> {
    const sale = await this.sales.findById(saleId);
    this.assertOwned(sale, sellerId, saleId);
    return toTransaction(sale, await this.sales.itemsOf(saleId));
  }

  /** A provider event (sandbox route): the move of spec 3.1 with its balance effect, in one transaction. */
  async applyEvent(sellerId: number, saleId: number, event: SaleEvent, now = new Date()): Promise<TransactionResponse> {
    await this.dataSource.transaction(async (manager) => {
      const sale = await this.sales.findByIdForUpdate(saleId, manager);
      this.assertOwned(sale, sellerId, saleId);
      await this.move(manager, sale, event, now);
    });
    return this.transaction(sellerId, saleId);
  }

  /**
   * What the scheduled jobs do at `now`, for one seller or (null) for all: PENDENTE PIX and boletos past
   * their expiry become CANCELADO; card reserves past their holding period go back to available.
   */
  async runDueWork(now: Date, sellerId: number | null): Promise<SchedulerSummary> {
    const expiredSales = await this.dataSource.transaction(async (manager) => {
      const ids = await this.sales.claimExpired(now, sellerId, BATCH, manager);
      for (const id of ids) {
        const sale = await this.sales.findByIdForUpdate(id, manager);
        if (sale) await this.move(manager, sale, 'EXPIRED', now);
      }
      return ids.length;
    });
    const releasedReserves = await this.dataSource.transaction(async (manager) => {
      const ids = await this.sales.claimReservesDue(now, sellerId, BATCH, manager);
      for (const id of ids) {
        const sale = await this.sales.findByIdForUpdate(id, manager);
        if (!sale?.reserveAmountCents) continue;
        await this.sales.update(id, { reserveSettledAt: now }, manager);
        await this.ledger.post(manager, {
          sellerId: sale.sellerId,
          referenceType: 'SALE',
          referenceId: sale.id,
          ...reserveReleaseEffect(sale.reserveAmountCents),
        });
      }
      return ids.length;
    });
    return { expiredSales, releasedReserves };
  }

  private assertOwned(sale: SaleEntity | null, sellerId: number, saleId: number): asserts sale is SaleEntity {
    if (!sale) throw new DomainError('NOT_FOUND', `Sale ${saleId} not found`);
    if (sale.sellerId !== sellerId) throw new DomainError('FORBIDDEN', `Sale ${saleId} belongs to another account`);
  }

  /** Inserts the sale PENDENTE, then asks the provider for its PIX code, boleto or card charge. */
  private async open(manager: EntityManager, sellerId: number, request: CreateSaleDto, profile: SalesProfile): Promise<SaleEntity> {
    const now = new Date();
    const card = request.card && isCardMethod(request.paymentMethod) ? await this.provider.tokenizeCard(request.card) : null;
    const tracking = Object.fromEntries(
      (['utmSource', 'utmMedium', 'utmCampaign', 'utmContent', 'utmTerm', 'src', 'sck'] as const)
        .filter((key) => request[key] !== undefined)
        .map((key) => [key, request[key] as string]),
    );
    let sale = await this.sales.insert(
      {
        sellerId,
        status: 'PENDENTE',
        paymentMethod: request.paymentMethod,
        amountCents: cents(request.amount),
        installments: request.paymentMethod === 'CREDIT_CARD' ? installmentsOf(request) : null,
        customerName: request.customer.name,
        customerEmail: request.customer.email,
        customerDocumentType: request.customer.document?.type ?? null,
        customerDocumentNumber: request.customer.document?.number ?? null,
        customerPhone: request.customer.phone ?? null,
        cardToken: card?.token ?? null,
        cardLastFour: card?.lastFour ?? null,
        cardBrand: card?.brand ?? null,
        shipping: request.shipping ? { ...request.shipping } : null,
        postbackUrl: request.postbackUrl ?? null,
        tracking,
        metadata: request.metadata ?? null,
      },
      request.items.map((item) => ({
        title: item.title,
        unitPriceCents: cents(item.unitPrice),
        quantity: item.quantity,
        tangible: item.tangible,
        productId: item.productId ?? null,
        planId: item.planId ?? null,
        planName: item.planName ?? null,
        externalId: item.id ?? null,
      })),
      manager,
    );

    switch (request.paymentMethod) {
      case 'PIX': {
        const pix = await this.provider.createPixCharge({
          amountCents: sale.amountCents,
          txid: `SALE${sale.id}`,
          receiverKey: request.pix?.key ?? null,
          merchantName: profile.merchantName,
          merchantCity: profile.merchantCity,
        });
        const expiresAt = request.pix?.expiresInDays ? addDays(now, request.pix.expiresInDays) : null;
        await this.sales.update(sale.id, { pixCode: pix.code, pixReceiverKey: pix.receiverKey, externalTransactionId: pix.externalId, expiresAt }, manager);
        break;
      }
      case 'BOLETO': {
        const due = boletoDueDate(now, request.boleto?.expiresInDays ?? DEFAULT_BOLETO_DAYS);
        const boleto = await this.provider.createBoleto({ amountCents: sale.amountCents, dueDate: due.dueDate, reference: sale.id });
        await this.sales.update(sale.id, { boletoCode: boleto.code, externalTransactionId: boleto.externalId, expiresAt: due.expiresAt }, manager);
        break;
      }
      case 'TRANSFER':
        await this.sales.update(sale.id, { externalTransactionId: `trf_${sale.id}` }, manager);
        break;
      case 'CREDIT_CARD':
      case 'DEBIT_CARD': {
        sale = await this.move(manager, sale, 'SENT_TO_ACQUIRER', now);
        const charge = await this.provider.chargeCard({
          token: card?.token as string,
          amountCents: sale.amountCents,
          installments: sale.installments ?? 1,
          kind: 'FIRST',
          reference: sale.id,
        });
        await this.sales.update(sale.id, { externalTransactionId: charge.externalId }, manager);
        const outcome: Record<typeof charge.outcome, SaleEvent> = {
          APPROVED: 'ACQUIRER_APPROVED',
          REFUSED: 'ACQUIRER_REFUSED',
          FAILED: 'PROCESSING_FAILED',
        };
        await this.move(manager, { ...sale, externalTransactionId: charge.externalId }, outcome[charge.outcome], now);
        break;
      }
    }
    return (await this.sales.findById(sale.id, manager)) as SaleEntity;
  }

  /**
   * The one way a sale changes status: the transition table decides the next status (or refuses with
   * INVALID_TRANSITION); the first payment fixes the fees; the balance effect and the postback are
   * written in the caller's transaction.
   */
  private async move(manager: EntityManager, sale: SaleEntity, event: SaleEvent, now: Date): Promise<SaleEntity> {
    const next = nextSaleStatus(sale.status, event, sale.paymentMethod);
    const changes: Partial<SaleEntity> & { status: typeof next } = { status: next };
    const schedule = (await this.sellers.salesProfile(sale.sellerId)).fees;

    let netAmountCents = sale.netAmountCents ?? cents(0);
    let reserveHeldCents: Cents = sale.reserveSettledAt === null ? (sale.reserveAmountCents ?? cents(0)) : cents(0);
    if (event === 'PAYMENT_CONFIRMED' || event === 'ACQUIRER_APPROVED') {
      const fees = saleFees(sale.amountCents, sale.paymentMethod, schedule);
      netAmountCents = fees.netAmountCents;
      reserveHeldCents = fees.reserveAmountCents;
      Object.assign(changes, {
        systemFeeCents: fees.systemFeeCents,
        netAmountCents: fees.netAmountCents,
        reserveAmountCents: fees.reserveAmountCents,
        completedAt: now,
        reserveReleaseDueAt: fees.reserveAmountCents > 0 ? addDays(now, schedule.cardReserveDays) : null,
        reserveSettledAt: fees.reserveAmountCents > 0 ? null : now,
      });
    }
    const reversal = REVERSAL_REASONS[event];
    if (reversal) {
      changes.reversalReason = reversal;
      if (reserveHeldCents > 0) changes.reserveSettledAt = now;
    }

    if (!(await this.sales.updateStatusIfCurrent(sale.id, sale.status, changes, manager))) {
      throw new DomainError('CONFLICT', `Sale ${sale.id} was changed by another request; retry`);
    }
    const effect = saleLedgerEffect(event, { netAmountCents, reserveHeldCents, chargebackFineCents: schedule.chargebackFineCents });
    if (effect) {
      await this.ledger.post(manager, { sellerId: sale.sellerId, referenceType: 'SALE', referenceId: sale.id, ...effect });
    }
    if (sale.postbackUrl) {
      const moved = (await this.sales.findById(sale.id, manager)) as SaleEntity;
      await this.notifications.enqueueSaleStatusChange(manager, {
        sellerId: sale.sellerId,
        resourceId: sale.id,
        url: sale.postbackUrl,
        previousStatus: sale.status,
        status: next,
        changedAt: now,
        data: toTransaction(moved, await this.sales.itemsOf(sale.id, manager)),
      });
    }
    return { ...sale, ...changes };
  }
}

const isCardMethod = (method: string) => method === 'CREDIT_CARD' || method === 'DEBIT_CARD';

function installmentsOf(request: CreateSaleDto): number {
  return request.installments?.number ?? request.card?.installments ?? 1;
}

/** Rules across fields that the DTO cannot say alone (spec 7.1, platform.md §7). */
export function checkSaleRules(request: CreateSaleDto, today = new Date()): void {
  const errors: FieldError[] = [];
  const creditOnly = 'installments are for CREDIT_CARD sales only';
  if (request.paymentMethod !== 'CREDIT_CARD') {
    if (request.installments?.number !== undefined) errors.push({ field: 'installments.number', message: creditOnly });
    if (request.card?.installments !== undefined) errors.push({ field: 'card.installments', message: creditOnly });
  }
  if (request.installments?.number !== undefined && request.card?.installments !== undefined && request.installments.number !== request.card.installments) {
    errors.push({ field: 'card.installments', message: 'card.installments and installments.number disagree' });
  }
  if (request.card && isCardMethod(request.paymentMethod)) {
    const expiry = Number(request.card.expirationYear) * 12 + Number(request.card.expirationMonth);
    const current = today.getUTCFullYear() * 12 + today.getUTCMonth() + 1;
    if (expiry < current) errors.push({ field: 'card.expirationYear', message: 'the card has expired' });
  }
  if (request.subscription && request.paymentMethod !== 'CREDIT_CARD' && request.paymentMethod !== 'PIX') {
    errors.push({ field: 'paymentMethod', message: 'subscriptions are paid by CREDIT_CARD or PIX only' });
  }
  if (errors.length > 0) throw new RequestValidationError([], errors);
  if (request.subscription?.enabled) {
    throw new DomainError('NOT_SUPPORTED', 'Subscriptions are not available yet: send the sale without subscription.enabled');
  }
  if (request.amount < MINIMUM_SALE_CENTS) {
    throw new DomainError('MINIMUM_AMOUNT', `amount must be at least ${MINIMUM_SALE_CENTS} cents`);
  }
}

function checkPermission(request: CreateSaleDto, profile: SalesProfile): void {
  const allowed: Record<CreateSaleDto['paymentMethod'], boolean> = {
    PIX: profile.isPixAvailable,
    CREDIT_CARD: profile.isCreditCardAvailable,
    DEBIT_CARD: profile.isCreditCardAvailable,
    BOLETO: profile.isBoletoAvailable,
    TRANSFER: true,
  };
  if (!allowed[request.paymentMethod]) {
    throw new DomainError('FORBIDDEN', `${request.paymentMethod} payments are not enabled for this account`);
  }
}
