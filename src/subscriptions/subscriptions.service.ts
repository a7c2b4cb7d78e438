import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { addDays, endOfBrazilDay } from '../domain/dates';
import { DomainError } from '../domain/domain-error';
import { SaleStatus } from '../domain/sale-status';
import {
  addCycle,
  BillingAction,
  BillingCycle,
  DEFAULT_DUNNING,
  DunningPolicy,
  dueBillingAction,
  nextRetryAt,
  subscriptionMetrics,
  SubscriptionMetrics,
} from '../domain/subscription-billing';
import { canMove, nextSubscriptionStatus, SubscriptionEvent } from '../domain/subscription-status';
import { NotificationsService } from '../notifications/notifications.service';
import { chargeReference, ChargeResult, PAYMENT_PROVIDER, PaymentProvider } from '../providers/payment-provider.port';
import { SaleSubscriptionResponse } from '../sales/dto/sale.response';
import { SaleEntity } from '../sales/entities/sale.entity';
import { SaleHooks, SubscriptionRequest, SubscriptionSaleHook } from '../sales/sale-hooks';
import { SaleTransitionsService } from '../sales/sale-transitions.service';
import { SalesService } from '../sales/sales.service';
import { SellerService } from '../seller/seller.service';
import { SubscriptionListItem, SubscriptionResponse } from './dto/subscription.response';
import { SubscriptionQueryDto } from './dto/subscription-query.dto';
import { SubscriptionEntity } from './entities/subscription.entity';
import { toSaleSubscription, toSubscription, toSubscriptionListItem } from './subscription.presenter';
import { SubscriptionsRepository } from './subscriptions.repository';

const BATCH = 500;
/** Steps one billing pass takes for one subscription at most (a renewal, then nothing due: usually one). */
const MAX_STEPS = 10;

export interface BillingSummary {
  renewals: number;
  retries: number;
  cancelled: number;
  pastDue: number;
}

/**
 * Subscriptions (spec 2.4-2.7, 3.2, 4.7-4.12): opened with their creating sale, charged by the billing
 * job on their billing dates (every charge a sale, through the same two-commit card path), moved by the
 * table of domain/subscription-status.ts, each status change announced by a signed postback.
 */
@Injectable()
export class SubscriptionsService implements SubscriptionSaleHook, OnModuleInit {
  private readonly logger = new Logger(SubscriptionsService.name);
  private readonly dunning: DunningPolicy;
  /** Subscriptions billed at once by this instance; always one pool connection left for requests. */
  private readonly billingConcurrency: number;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly sales: SalesService,
    private readonly transitions: SaleTransitionsService,
    private readonly sellers: SellerService,
    private readonly notifications: NotificationsService,
    private readonly hooks: SaleHooks,
    @Inject(PAYMENT_PROVIDER) private readonly provider: PaymentProvider,
    config: AppConfig,
  ) {
    this.dunning = { ...DEFAULT_DUNNING, ...config.subscriptionDunning };
    this.billingConcurrency = Math.max(1, Math.min(config.billingConcurrency, config.database.poolSize - 1));
  }

  onModuleInit(): void {
    this.hooks.register(this);
  }

  // ---- with the creating sale (SaleHooks) ----

  async open(manager: EntityManager, sale: Partial<SaleEntity>, items: Array<{ title: string; productId?: number | null }>, request: SubscriptionRequest, now: Date): Promise<number> {
    const cycle = request.billingCycle as BillingCycle;
    return this.subscriptions.insert(
      {
        sellerId: sale.sellerId,
        status: 'PENDING',
        billingCycle: cycle,
        amountCents: sale.amountCents,
        paymentMethod: sale.paymentMethod as 'PIX' | 'CREDIT_CARD',
        cardToken: sale.cardToken ?? null,
        cardLastFour: sale.cardLastFour ?? null,
        cardBrand: sale.cardBrand ?? null,
        customerName: sale.customerName,
        customerEmail: sale.customerEmail,
        customerDocument: sale.customerDocumentNumber ?? null,
        customerPhone: sale.customerPhone ?? null,
        productId: items[0]?.productId ?? null,
        productName: items[0]?.title ?? 'Subscription',
        metadata: {},
        postbackUrl: sale.postbackUrl ?? null,
        trialDays: request.trialDays ?? 0,
        // platform.md §7: creation + the cycle while PENDING, recomputed from the first confirmed payment.
        nextBillingDate: addCycle(now, cycle),
        currentPeriod: 0,
        periodDueAt: now,
        periodAttempts: 1,
        totalBillings: 1,
        lastPaymentStatus: 'PENDENTE',
      },
      manager,
    );
  }

  async summary(subscriptionId: number, manager?: EntityManager): Promise<SaleSubscriptionResponse | null> {
    const subscription = await this.subscriptions.findById(subscriptionId, manager);
    return subscription && toSaleSubscription(subscription);
  }

  /** A sale of the subscription moved: its first payment activates it; a renewal's outcome moves it and its counters. */
  async saleMoved(manager: EntityManager, sale: SaleEntity, previous: SaleStatus, now: Date): Promise<void> {
    const subscription = await this.subscriptions.findByIdForUpdate(sale.subscriptionId as number, manager);
    if (!subscription) return;
    const first = sale.billingPeriod === 0;
    const changes: Partial<SubscriptionEntity> = {};
    let event: SubscriptionEvent | null = null;

    if (sale.status === 'PAGO' && (previous === 'PENDENTE' || previous === 'EM_PROCESSAMENTO' || previous === 'FALHA')) {
      Object.assign(changes, {
        successfulBillings: subscription.successfulBillings + 1,
        failedBillings: subscription.failedBillings - (previous === 'FALHA' ? 1 : 0),
        lastPaymentDate: now,
        lastPaymentStatus: 'PAGO',
      });
      if (first && subscription.status === 'PENDING') {
        const trial = subscription.trialDays > 0;
        const trialEndsAt = trial ? addDays(now, subscription.trialDays) : null;
        event = trial ? 'FIRST_PAYMENT_CONFIRMED_WITH_TRIAL' : 'FIRST_PAYMENT_CONFIRMED';
        Object.assign(changes, { startedAt: now, trialEndsAt, periodDueAt: now, nextBillingDate: trialEndsAt ?? addCycle(now, subscription.billingCycle) });
      } else if (!first && sale.billingPeriod === subscription.currentPeriod) {
        if (subscription.status === 'TRIALING' || subscription.status === 'PAST_DUE') event = 'CHARGE_CONFIRMED';
        Object.assign(changes, { pastDueSince: null, nextRetryAt: null, awaitingPaymentSince: null });
      }
    } else if (sale.status === 'RECUSADO' || sale.status === 'FALHA') {
      // Either comes only from PENDENTE or EM_PROCESSAMENTO: counted once, and uncounted by a FALHA → PAGO retry above.
      Object.assign(changes, { failedBillings: subscription.failedBillings + 1, lastPaymentStatus: sale.status });
      const billed = subscription.status === 'PAST_DUE' || canMove(subscription.status, 'CHARGE_FAILED');
      if (!first && billed && sale.billingPeriod === subscription.currentPeriod && subscription.periodDueAt) {
        if (subscription.status !== 'PAST_DUE') event = 'CHARGE_FAILED';
        Object.assign(changes, {
          pastDueSince: subscription.pastDueSince ?? subscription.periodDueAt,
          nextRetryAt: nextRetryAt(subscription.periodDueAt, subscription.periodAttempts, this.dunning),
        });
      } else if (first && sale.status === 'RECUSADO' && subscription.status === 'PENDING') {
        // The first charge refused for good: the subscription never starts.
        event = 'CANCEL';
        Object.assign(changes, cancelledColumns(now, 'First payment refused'));
      }
    } else if (sale.status === 'CANCELADO' && previous === 'PENDENTE') {
      Object.assign(changes, { failedBillings: subscription.failedBillings + 1, lastPaymentStatus: 'FALHA' });
      if (first && subscription.status === 'PENDING') {
        // The first PIX expired (or was cancelled) unpaid: the subscription never starts.
        event = 'CANCEL';
        Object.assign(changes, cancelledColumns(now, 'First payment not made'));
      }
      // A PIX renewal that expired unpaid: the grace period ends the subscription.
    } else {
      return;
    }
    await this.apply(manager, subscription, event, changes, now);
  }

  // ---- the seller's routes ----

  async list(sellerId: number, query: SubscriptionQueryDto): Promise<{ subscriptions: SubscriptionListItem[]; pagination: { page: number; limit: number; total: number; totalPages: number } }> {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    if (query.startDate && query.endDate && query.startDate > query.endDate) {
      throw new DomainError('VALIDATION_ERROR', 'startDate must not be after endDate');
    }
    const { rows, total } = await this.subscriptions.page(
      sellerId,
      {
        status: query.status,
        search: query.search?.trim() || undefined,
        createdFrom: query.startDate ? addDays(endOfBrazilDay(query.startDate), -1) : undefined,
        createdBefore: query.endDate ? endOfBrazilDay(query.endDate) : undefined,
      },
      page,
      limit,
    );
    return { subscriptions: rows.map(toSubscriptionListItem), pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
  }

  async get(sellerId: number, id: number): Promise<SubscriptionResponse> {
    return toSubscription(await this.owned(sellerId, id));
  }

  async metrics(sellerId: number, now = new Date()): Promise<SubscriptionMetrics> {
    return subscriptionMetrics(await this.subscriptions.metricsRows(sellerId), now);
  }

  /** Spec 4.9: ACTIVE or TRIALING only; ALREADY_PAUSED for a paused one, INVALID_STATUS otherwise. */
  async pause(sellerId: number, id: number, now = new Date()): Promise<{ id: number; status: string; pausedAt: string }> {
    const moved = await this.userMove(
      sellerId,
      id,
      'PAUSE',
      (s) => (s.status === 'PAUSED' ? 'ALREADY_PAUSED' : 'INVALID_STATUS'),
      () => ({ pausedAt: now, awaitingPaymentSince: null, pastDueSince: null, nextRetryAt: null }),
      now,
    );
    return { id: moved.id, status: moved.status, pausedAt: (moved.pausedAt as Date).toISOString() };
  }

  /** Spec 4.10: PAUSED only; the next billing date is recomputed from the resume date (resume + one cycle). */
  async resume(sellerId: number, id: number, now = new Date()): Promise<{ id: number; status: string; nextBillingDate: string; resumedAt: string }> {
    // A trial paused and resumed before its end still bills at its end; otherwise one cycle after the resume.
    const nextBilling = (s: SubscriptionEntity) => (s.trialEndsAt && s.trialEndsAt.getTime() > now.getTime() ? s.trialEndsAt : addCycle(now, s.billingCycle));
    const moved = await this.userMove(sellerId, id, 'RESUME', () => 'INVALID_STATUS', (s) => ({ resumedAt: now, nextBillingDate: nextBilling(s) }), now);
    return { id: moved.id, status: moved.status, nextBillingDate: (moved.nextBillingDate as Date).toISOString(), resumedAt: now.toISOString() };
  }

  /** Spec 4.11: at once (CANCELLED) or at the end of the current period (a scheduled date, status unchanged). */
  async cancel(sellerId: number, id: number, reason: string | null, immediately: boolean, now = new Date()): Promise<Record<string, unknown>> {
    const refuse = (s: SubscriptionEntity) => (s.status === 'CANCELLED' ? 'ALREADY_CANCELLED' : 'INVALID_STATUS');
    const current = await this.owned(sellerId, id);
    if (immediately || current.status === 'PENDING' || current.status === 'PAUSED') {
      // PENDING and PAUSED have no period running: a cancellation at the period end is a cancellation now.
      const moved = await this.userMove(sellerId, id, 'CANCEL', refuse, () => cancelledColumns(now, reason), now);
      return { id: moved.id, status: moved.status, cancelledAt: now.toISOString(), cancellationReason: reason };
    }
    return this.dataSource.transaction(async (manager) => {
      const subscription = await this.ownedForUpdate(manager, sellerId, id);
      if (!canMove(subscription.status, 'CANCEL')) throw new DomainError(refuse(subscription), `Subscription ${id} is ${subscription.status}`);
      const periodEnd = subscription.nextBillingDate ?? now;
      await this.subscriptions.update(id, { scheduledCancellationDate: periodEnd, cancellationReason: reason }, manager);
      return { id, status: subscription.status, scheduledCancellationDate: periodEnd.toISOString(), cancellationReason: reason };
    });
  }

  // ---- billing (the scheduler and the sandbox route) ----

  /**
   * The billing job at `now`, for one seller or (null) for all: each subscription with work due is
   * claimed (lease + SKIP LOCKED), then stepped until nothing more is due: scheduled cancellations, grace
   * periods ended, PIX renewals overdue, card retries, renewals. Charges are made by the card path of
   * sales (two commits around the acquirer); each (period, attempt) is a unique sale.
   */
  async runBilling(now: Date, sellerId: number | null): Promise<BillingSummary> {
    const summary: BillingSummary = { renewals: 0, retries: 0, cancelled: 0, pastDue: 0 };
    for (;;) {
      const ids = await this.subscriptions.claimDue(now, sellerId, this.dunning.graceDays, this.dunning.pixOverdueDays, BATCH);
      // The claimed batch is billed by BILLING_CONCURRENCY workers: each subscription by one of them, each
      // holding at most one connection at a time (a renewal is a chain of short round trips, mostly waiting).
      const queue = [...ids];
      const worker = async () => {
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
          try {
            await this.bill(id, now, summary);
          } catch (error) {
            this.logger.error({ err: error, subscriptionId: id }, 'Billing a subscription failed; it is retried on the next pass');
          } finally {
            await this.subscriptions.releaseClaim(id);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.billingConcurrency, ids.length) }, worker));
      if (ids.length < BATCH) return summary;
    }
  }

  private async bill(id: number, now: Date, summary: BillingSummary): Promise<void> {
    for (let step = 0; step < MAX_STEPS; step += 1) {
      const subscription = await this.subscriptions.findById(id);
      if (!subscription) return;
      const action = dueBillingAction(subscription, now, this.dunning);
      if (!action) return;
      const done = await this.step(subscription, action, now);
      if (!done) return;
      if (action.kind === 'RENEW') summary.renewals += 1;
      else if (action.kind === 'RETRY') summary.retries += 1;
      else if (action.kind === 'PIX_OVERDUE') summary.pastDue += 1;
      else summary.cancelled += 1;
    }
  }

  /** One billing step; false when another worker did it first (nothing changed here). */
  private async step(subscription: SubscriptionEntity, action: BillingAction, now: Date): Promise<boolean> {
    switch (action.kind) {
      case 'CANCEL_AT_PERIOD_END':
        return this.systemMove(subscription, action, 'CANCEL', (s) => cancelledColumns(s.scheduledCancellationDate ?? now, s.cancellationReason), now);
      case 'GRACE_PERIOD_ENDED':
        return this.systemMove(subscription, action, 'GRACE_PERIOD_ENDED', () => cancelledColumns(now, 'Not paid within the grace period'), now);
      case 'PIX_OVERDUE':
        return this.systemMove(subscription, action, 'CHARGE_FAILED', (s) => ({ pastDueSince: s.awaitingPaymentSince }), now);
      case 'RENEW':
        return this.charge(subscription, action, subscription.currentPeriod + 1, 0, subscription.nextBillingDate as Date, now);
      case 'RETRY':
        return this.charge(subscription, action, subscription.currentPeriod, subscription.periodAttempts, subscription.periodDueAt as Date, now);
    }
  }

  /**
   * One charge of a period: the sale (unique per subscription, period and attempt) written with the
   * subscription's new period in one transaction; a card is then charged outside it, with the sale's id
   * as reference, and its answer applied in a second transaction (which moves the subscription).
   */
  private async charge(subscription: SubscriptionEntity, action: BillingAction, period: number, attempt: number, dueAt: Date, now: Date): Promise<boolean> {
    const saleId = await this.sales.nextSaleId();
    const pix = subscription.paymentMethod === 'PIX';
    const document = pix ? await this.sales.renewalPixDocument(subscription.sellerId, saleId, subscription.amountCents, addDays(dueAt, this.dunning.pixExpiryDays)) : null;
    const fees = await this.sellers.feeSchedule(subscription.sellerId);
    const opened = await this.dataSource.transaction(async (manager) => {
      const current = await this.subscriptions.findByIdForUpdate(subscription.id, manager);
      if (!current || dueBillingAction(current, now, this.dunning)?.kind !== action.kind || current.currentPeriod !== subscription.currentPeriod) return null;
      // A retry replaces the period's earlier attempts: none of them can be paid afterwards.
      if (attempt > 0) await this.sales.cancelOpenCharges(manager, current.id, period, { now, fees });
      const sale = await this.sales.openRenewal(
        manager,
        {
          saleId,
          sellerId: current.sellerId,
          subscriptionId: current.id,
          period,
          attempt,
          paymentMethod: current.paymentMethod,
          amountCents: current.amountCents,
          title: current.productName,
          productId: current.productId,
          customer: { name: current.customerName, email: current.customerEmail, document: current.customerDocument, phone: current.customerPhone },
          card: pix ? null : { token: current.cardToken as string, lastFour: current.cardLastFour ?? '', brand: current.cardBrand ?? 'UNKNOWN' },
          document,
          postbackUrl: current.postbackUrl,
        },
        { now, fees },
      );
      if (!sale) return null;
      await this.subscriptions.update(
        current.id,
        {
          currentPeriod: period,
          periodDueAt: dueAt,
          periodAttempts: attempt + 1,
          nextRetryAt: null,
          nextBillingDate: attempt === 0 ? nextBillingAfter(dueAt, now, current.billingCycle) : current.nextBillingDate,
          awaitingPaymentSince: pix ? dueAt : null,
          totalBillings: current.totalBillings + 1,
          lastPaymentStatus: 'PENDENTE',
        },
        manager,
      );
      return { sale, token: current.cardToken };
    });
    if (!opened) return false;
    if (pix) return true;
    let result: ChargeResult;
    try {
      result = await this.provider.chargeCard({ reference: chargeReference(saleId), token: opened.token as string, amountCents: opened.sale.amountCents, installments: 1, kind: 'RENEWAL' });
    } catch (error) {
      this.logger.error({ err: error, saleId }, 'Renewal charge did not answer; the recovery job resolves the sale');
      return true;
    }
    await this.transitions.applyChargeOutcome(saleId, result, fees, now);
    return true;
  }

  /** A move the billing job makes on its own (cancellation, grace, PIX overdue), re-checked under the row lock. */
  private async systemMove(
    subscription: SubscriptionEntity,
    action: BillingAction,
    event: SubscriptionEvent,
    columns: (s: SubscriptionEntity) => Partial<SubscriptionEntity>,
    now: Date,
  ): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const current = await this.subscriptions.findByIdForUpdate(subscription.id, manager);
      if (!current || dueBillingAction(current, now, this.dunning)?.kind !== action.kind) return false;
      await this.apply(manager, current, event, columns(current), now);
      return true;
    });
  }

  /** A move the seller asks for: refused in the spec 7.5 codes when the table does not allow it. */
  private async userMove(
    sellerId: number,
    id: number,
    event: SubscriptionEvent,
    refusal: (s: SubscriptionEntity) => 'ALREADY_PAUSED' | 'ALREADY_CANCELLED' | 'INVALID_STATUS',
    columns: (s: SubscriptionEntity) => Partial<SubscriptionEntity>,
    now: Date,
  ): Promise<SubscriptionEntity> {
    return this.dataSource.transaction(async (manager) => {
      const subscription = await this.ownedForUpdate(manager, sellerId, id);
      if (!canMove(subscription.status, event)) {
        throw new DomainError(refusal(subscription), `Subscription ${id} is ${subscription.status}: it cannot ${event.toLowerCase()}`);
      }
      return this.apply(manager, subscription, event, columns(subscription), now);
    });
  }

  /** The one place a subscription's status changes: the table decides, the row is saved, the postback written. */
  private async apply(manager: EntityManager, subscription: SubscriptionEntity, event: SubscriptionEvent | null, changes: Partial<SubscriptionEntity>, now: Date): Promise<SubscriptionEntity> {
    const next = event ? nextSubscriptionStatus(subscription.status, event) : subscription.status;
    const final = next === 'CANCELLED' || next === 'EXPIRED';
    const columns: Partial<SubscriptionEntity> = { ...changes, status: next, ...(final ? { nextBillingDate: null, nextRetryAt: null, scheduledCancellationDate: null } : {}) };
    await this.subscriptions.update(subscription.id, columns, manager);
    if (next !== subscription.status && (next === 'CANCELLED' || next === 'PAUSED')) {
      // Nothing of a cancelled or paused subscription can be paid afterwards.
      await this.sales.cancelOpenCharges(manager, subscription.id, null, { now, fees: await this.sellers.feeScheduleIn(manager, subscription.sellerId) });
    }
    const moved = { ...subscription, ...columns, updatedAt: now } as SubscriptionEntity;
    if (next !== subscription.status && subscription.postbackUrl) {
      await this.notifications.enqueueSubscriptionStatusChange(manager, {
        sellerId: subscription.sellerId,
        resourceId: subscription.id,
        url: subscription.postbackUrl,
        previousStatus: subscription.status,
        status: next,
        changedAt: now,
        data: toSubscription(moved),
      });
    }
    return moved;
  }

  private async owned(sellerId: number, id: number): Promise<SubscriptionEntity> {
    return assertOwnedSubscription(await this.subscriptions.findById(id), sellerId, id);
  }

  private async ownedForUpdate(manager: EntityManager, sellerId: number, id: number): Promise<SubscriptionEntity> {
    return assertOwnedSubscription(await this.subscriptions.findByIdForUpdate(id, manager), sellerId, id);
  }
}

/** NOT_FOUND when absent, FORBIDDEN when another seller's (spec 7.5). */
function assertOwnedSubscription(subscription: SubscriptionEntity | null, sellerId: number, id: number): SubscriptionEntity {
  if (!subscription) throw new DomainError('NOT_FOUND', `Subscription ${id} not found`);
  if (subscription.sellerId !== sellerId) throw new DomainError('FORBIDDEN', `Subscription ${id} belongs to another account`);
  return subscription;
}

/**
 * The next billing date after a renewal charged at `now` for a period due at `dueAt`: one cycle after
 * the period, or, when the charge comes so late that date has passed too, one cycle after the charge
 * (missed periods are not charged all at once).
 */
function nextBillingAfter(dueAt: Date, now: Date, cycle: BillingCycle): Date {
  const next = addCycle(dueAt, cycle);
  return next.getTime() > now.getTime() ? next : addCycle(now, cycle);
}

function cancelledColumns(at: Date, reason: string | null): Partial<SubscriptionEntity> {
  return { cancelledAt: at, cancellationReason: reason };
}

