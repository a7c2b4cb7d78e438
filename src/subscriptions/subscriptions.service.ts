import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { forEachConcurrently } from '../common/concurrency';
import { AppConfig } from '../config/app-config';
import { addDays, endOfBrazilDay } from '../domain/dates';
import { FeeSchedule } from '../domain/fees';
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
import { canMove, nextSubscriptionStatus, SubscriptionEvent, SubscriptionStatus } from '../domain/subscription-status';
import { NotificationsService, StatusChange } from '../notifications/notifications.service';
import { chargeReference, ChargeResult, PAYMENT_PROVIDER, PaymentProvider } from '../providers/payment-provider.port';
import { SaleSubscriptionResponse } from '../sales/dto/sale.response';
import { SaleEntity } from '../sales/entities/sale.entity';
import { SaleHooks, SubscriptionRequest, SubscriptionSaleHook } from '../sales/sale-hooks';
import { SaleTransitionsService } from '../sales/sale-transitions.service';
import { PaymentDocument, RenewalSale, SalesService } from '../sales/sales.service';
import { SellerService } from '../seller/seller.service';
import { SubscriptionListItem, SubscriptionResponse } from './dto/subscription.response';
import { SubscriptionQueryDto } from './dto/subscription-query.dto';
import { SubscriptionEntity } from './entities/subscription.entity';
import { toSaleSubscription, toSubscription, toSubscriptionListItem } from './subscription.presenter';
import { SubscriptionsRepository } from './subscriptions.repository';

const BATCH = 500;
/** Claimed batches billed at once by one instance (runBilling). */
const BATCHES_IN_FLIGHT = 2;
/** Steps one billing pass takes for one subscription at most (a renewal, then nothing due: usually one). */
const MAX_STEPS = 10;
/** How often a batch renews its hold on the sales it has still to charge (the recovery job's lease lasts a minute). */
const RECOVERY_HOLD_RENEWAL_MS = 20_000;
/** How old the batch's view of which subscriptions were stopped meanwhile may be when a card's turn comes. */
const STOPPED_CHECK_MS = 1_000;

/** How a billing run bills renewals: together per claimed batch (the default), or one by one as every other action. */
export interface BillingOptions {
  batchRenewals?: boolean;
}

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
    const productName = items[0]?.title ?? 'Subscription';
    const productId = await this.subscriptions.productIdFor(sale.sellerId as number, productName, items[0]?.productId ?? null, manager);
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
        productId,
        productName,
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
    const change = this.saleChange(subscription, sale, previous, now);
    if (!change) return;
    await this.apply(manager, subscription, change.event, change.changes, now);
    if (change.refund) await this.sales.markRefundDue(manager, [sale.id], now);
  }

  /**
   * Many sales of subscriptions moved (a billing batch), with the same result as saleMoved for each in
   * turn: the subscriptions concerned locked at once, their changes saved at once (applyMany). A batch in
   * which a subscription would be cancelled or paused, or moved twice, is done one by one instead.
   */
  async salesMoved(manager: EntityManager, moves: Array<{ sale: SaleEntity; previous: SaleStatus }>, now: Date): Promise<void> {
    const relevant = moves.filter(({ sale, previous }) => saleOutcome(sale, previous) !== null);
    if (relevant.length === 0) return;
    const ids = relevant.map(({ sale }) => sale.subscriptionId as number);
    const subscriptions = new Map((await this.subscriptions.findByIdsForUpdate([...new Set(ids)], manager)).map((s) => [s.id, s]));
    const changes = relevant.flatMap(({ sale, previous }) => {
      const subscription = subscriptions.get(sale.subscriptionId as number);
      const change = subscription && this.saleChange(subscription, sale, previous, now);
      return subscription && change ? [{ subscription, saleId: sale.id, ...change }] : [];
    });
    const oneByOne =
      new Set(ids).size !== ids.length ||
      changes.some(({ subscription, event }) => {
        const next = event ? nextSubscriptionStatus(subscription.status, event) : subscription.status;
        return next !== subscription.status && (next === 'CANCELLED' || next === 'PAUSED');
      });
    if (oneByOne) {
      for (const { sale, previous } of relevant) await this.saleMoved(manager, sale, previous, now);
      return;
    }
    await this.applyMany(manager, changes, now);
    await this.sales.markRefundDue(
      manager,
      changes.filter(({ refund }) => refund).map(({ saleId }) => saleId),
      now,
    );
  }

  /** What a move of one of its sales does to the subscription (event and columns), or null when nothing. */
  private saleChange(subscription: SubscriptionEntity, sale: SaleEntity, previous: SaleStatus, now: Date): SaleChange | null {
    const first = sale.billingPeriod === 0;
    const changes: Partial<SubscriptionEntity> = {};
    let event: SubscriptionEvent | null = null;

    switch (saleOutcome(sale, previous)) {
      case 'PAID':
        if (isStopped(subscription.status)) {
          // Nothing of a cancelled or paused subscription can be paid afterwards: a charge the acquirer
          // approved after the stop is given back (the sale is marked; SaleTransitionsService.refundDue).
          return { event: null, changes: { refundedBillings: subscription.refundedBillings + 1 }, refund: true };
        }
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
        break;
      case 'FAILED': {
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
        break;
      }
      case 'LAPSED':
        Object.assign(changes, { failedBillings: subscription.failedBillings + 1, lastPaymentStatus: 'FALHA' });
        if (first && subscription.status === 'PENDING') {
          // The first PIX expired (or was cancelled) unpaid: the subscription never starts.
          event = 'CANCEL';
          Object.assign(changes, cancelledColumns(now, 'First payment not made'));
        }
        // A PIX renewal that expired unpaid: the grace period ends the subscription.
        break;
      case null:
        return null;
    }
    return { event, changes };
  }

  // ---- the seller's routes ----

  async list(sellerId: number, query: SubscriptionQueryDto): Promise<{ subscriptions: SubscriptionListItem[]; pagination: { page: number; limit: number; total: number; totalPages: number } }> {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    if (query.startDate && query.endDate && query.startDate > query.endDate) {
      throw new DomainError('VALIDATION_ERROR', 'startDate must not be after endDate', { field: 'startDate' });
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
   * The billing job at `now`, for one seller or (null) for all: subscriptions with work due are claimed
   * a batch at a time (lease + SKIP LOCKED); the renewals due in a batch are billed together
   * (renewBatch), and every other subscription is stepped until nothing more is due: scheduled
   * cancellations, grace periods ended, PIX renewals overdue, card retries, renewals. Charges are made
   * in two commits around the acquirer; each (period, attempt) is a unique sale.
   */
  async runBilling(now: Date, sellerId: number | null, options: BillingOptions = {}): Promise<BillingSummary> {
    const summary: BillingSummary = { renewals: 0, retries: 0, cancelled: 0, pastDue: 0 };
    // Each subscription is billed once per run: one whose billing failed is released, and left for the next run.
    const seen = new Set<number>();
    // Batches in flight at once, sharing BILLING_CONCURRENCY: while one's transactions run, the other's
    // charges wait on the acquirer, so that the service and PostgreSQL both work. Claims never overlap.
    const lanes = Math.min(BATCHES_IN_FLIGHT, this.billingConcurrency);
    const concurrency = Math.floor(this.billingConcurrency / lanes);
    // Those billed already and claimed again are still due (a failure, a period written elsewhere): they come
    // first in every claim and, 500 of them, would fill it, leaving whatever falls due after them unbilled. So
    // they are passed over by the next claims. Only these: a list of every id billed would cost each claim
    // a comparison per id and per row, and a run of 100,000 would slow down as it goes.
    const stillDue = new Set<number>();
    const lane = async () => {
      for (;;) {
        const claimed = await this.subscriptions.claimDue(now, sellerId, this.dunning.graceDays, this.dunning.pixOverdueDays, BATCH, [...stillDue]);
        if (claimed.length === 0) return;
        claimed.filter((id) => seen.has(id)).forEach((id) => stillDue.add(id));
        // A blocked seller's subscriptions are not billed while it is blocked: passed over like those
        // still due, so that they cannot fill the claims; billed again once it is unblocked.
        const ofBlocked = await this.ofBlockedSellers(claimed.filter((id) => !seen.has(id)));
        ofBlocked.forEach((id) => stillDue.add(id));
        const ids = claimed.filter((id) => !seen.has(id) && !ofBlocked.has(id));
        try {
          if (ids.length === 0) continue;
          ids.forEach((id) => seen.add(id));
          const stepwise = options.batchRenewals === false ? ids : await this.renewBatch(ids, now, summary, concurrency);
          await this.billEach(stepwise, now, summary, concurrency);
        } finally {
          await this.subscriptions.releaseClaims(claimed);
        }
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
    return summary;
  }

  /** Those of these subscriptions whose seller is blocked. */
  private async ofBlockedSellers(ids: number[]): Promise<ReadonlySet<number>> {
    const sellers = await this.subscriptions.sellersOf(ids);
    const blocked = await this.sellers.blockedAmong([...sellers.values()]);
    return new Set(ids.filter((id) => blocked.has(sellers.get(id) as number)));
  }

  /**
   * The subscriptions stepped one by one (every action but the batched renewals) by `concurrency`
   * workers: each subscription by one of them, each holding at most one connection at a time.
   */
  private async billEach(ids: number[], now: Date, summary: BillingSummary, concurrency: number): Promise<void> {
    await forEachConcurrently(ids, concurrency, async (id) => {
      try {
        await this.bill(id, now, summary);
      } catch (error) {
        this.logger.error({ err: error, subscriptionId: id }, 'Billing a subscription failed; it is retried on the next pass');
      }
    });
  }

  /**
   * The renewals due among claimed subscriptions, billed together (issue 11) with the same result as
   * `charge` for each: (1) one transaction re-checks them under lock, writes every renewal sale (cards
   * sent to the acquirer, PIX announced) and moves the subscriptions to their new period; (2) outside
   * any transaction, each card is charged with its sale's id as reference, `concurrency` at once;
   * (3) one transaction applies every answer (sales, status history, ledger, balances, subscriptions,
   * postbacks). A sale left between (2) and (3) is resolved by the recovery job, as a single charge is.
   * Answers the claimed subscriptions still to be stepped one by one: those with another action due,
   * and those with more due after their renewal (a late renewal refused may be due for its retry).
   */
  private async renewBatch(ids: number[], now: Date, summary: BillingSummary, concurrency: number): Promise<number[]> {
    const claimed = await this.subscriptions.findByIds(ids);
    const renewing = claimed.filter((subscription) => dueBillingAction(subscription, now, this.dunning)?.kind === 'RENEW');
    if (renewing.length === 0) return ids;
    const batched = new Set(renewing.map((subscription) => subscription.id));
    const stepwise = ids.filter((id) => !batched.has(id));
    const schedules = await this.sellers.feeSchedulesOf([...new Set(renewing.map((subscription) => subscription.sellerId))], this.dataSource.manager);
    let opened: Array<{ subscription: SubscriptionEntity; sale: SaleEntity }>;
    try {
      opened = await this.openRenewals(renewing, schedules, now, concurrency);
    } catch (error) {
      this.logger.error({ err: error, subscriptions: renewing.length }, 'Opening a batch of renewals failed; they are billed one by one');
      return ids;
    }
    summary.renewals += opened.length;
    await this.chargeRenewals(opened, schedules, now, concurrency);
    const after = await this.subscriptions.findByIds(opened.map(({ subscription }) => subscription.id));
    return [...stepwise, ...after.filter((subscription) => dueBillingAction(subscription, now, this.dunning) !== null).map((subscription) => subscription.id)];
  }

  /** Step (1) of renewBatch: the renewals re-checked under lock and written; the subscriptions renewed with their sales. */
  private async openRenewals(
    renewing: SubscriptionEntity[],
    schedules: ReadonlyMap<number, FeeSchedule>,
    now: Date,
    concurrency: number,
  ): Promise<Array<{ subscription: SubscriptionEntity; sale: SaleEntity }>> {
    const saleIds = await this.sales.nextSaleIds(renewing.length);
    const read = new Map(renewing.map((subscription, index) => [subscription.id, { subscription, saleId: saleIds[index], dueAt: subscription.nextBillingDate as Date }]));
    const pix = renewing.filter((subscription) => subscription.paymentMethod === 'PIX');
    const documents = await this.sales.renewalPixDocuments(
      pix.map((subscription) => {
        const { saleId, dueAt } = read.get(subscription.id) as { saleId: number; dueAt: Date };
        return { sellerId: subscription.sellerId, saleId, amountCents: subscription.amountCents, expiresAt: addDays(dueAt, this.dunning.pixExpiryDays) };
      }),
      concurrency,
    );
    return this.dataSource.transaction(async (manager) => {
      const due = (await this.subscriptions.findByIdsForUpdate([...read.keys()], manager)).filter((current) => {
        const before = read.get(current.id)?.subscription;
        return dueBillingAction(current, now, this.dunning)?.kind === 'RENEW' && current.currentPeriod === before?.currentPeriod;
      });
      const renewals = due.map((current) => {
        const { subscription, saleId } = read.get(current.id) as { subscription: SubscriptionEntity; saleId: number };
        return renewalSale(current, saleId, subscription.currentPeriod + 1, 0, documents.get(saleId) ?? null);
      });
      const sales = new Map((await this.sales.openRenewals(manager, renewals, now, schedules)).map((sale) => [sale.subscriptionId as number, sale]));
      const written = due.filter((current) => sales.has(current.id));
      await this.subscriptions.updateMany(
        written.map((current) => {
          const { subscription, dueAt } = read.get(current.id) as { subscription: SubscriptionEntity; dueAt: Date };
          return { id: current.id, changes: chargeColumns(current, subscription.currentPeriod + 1, 0, dueAt, now) };
        }),
        manager,
      );
      return written.map((current) => ({ subscription: current, sale: sales.get(current.id) as SaleEntity }));
    });
  }

  /** Steps (2) and (3) of renewBatch: the cards charged, then their answers applied together (one by one if that fails). */
  private async chargeRenewals(
    opened: Array<{ subscription: SubscriptionEntity; sale: SaleEntity }>,
    schedules: ReadonlyMap<number, FeeSchedule>,
    now: Date,
    concurrency: number,
  ): Promise<void> {
    const outcomes: Array<{ saleId: number; charge: ChargeResult }> = [];
    const cards = opened.filter(({ sale }) => sale.paymentMethod === 'CREDIT_CARD');
    // The sales whose charges are still to be made (or on their way) stay out of the recovery job's
    // reach (openRenewals took its lease): renewed while they wait their turn, given back once all are made.
    const waiting = new Set(cards.map(({ sale }) => sale.id));
    const hold = setInterval(() => {
      this.transitions.holdFromRecovery([...waiting]).catch((error: unknown) => this.logger.warn({ err: error }, 'Could not renew the recovery hold of a billing batch'));
    }, RECOVERY_HOLD_RENEWAL_MS);
    hold.unref();
    const stopped = this.stoppedMeanwhile(cards.map(({ subscription }) => subscription.id));
    const uncharged: number[] = [];
    try {
      await forEachConcurrently(cards, concurrency, async ({ subscription, sale }) => {
        try {
          const reference = chargeReference(sale.id);
          if ((await stopped()).has(subscription.id)) {
            // Cancelled or paused while this charge waited its turn: the reference is voided, nothing is charged,
            // and the sale fails as the recovery job would fail it (a charge found instead is applied).
            const charge = await this.provider.voidCharge(reference);
            if (charge) outcomes.push({ saleId: sale.id, charge });
            else uncharged.push(sale.id);
            return;
          }
          const charge = await this.provider.chargeCard({ reference, token: subscription.cardToken as string, amountCents: sale.amountCents, installments: 1, kind: 'RENEWAL' });
          outcomes.push({ saleId: sale.id, charge });
        } catch (error) {
          this.logger.error({ err: error, saleId: sale.id }, 'Renewal charge did not answer; the recovery job resolves the sale');
        } finally {
          waiting.delete(sale.id);
        }
      });
    } finally {
      clearInterval(hold);
    }
    try {
      await this.transitions.applyChargeOutcomes(outcomes, schedules, now);
    } catch (error) {
      this.logger.warn({ err: error, charges: outcomes.length }, 'Applying a batch of renewal charges failed; applying them one by one');
      const sellers = new Map(cards.map(({ sale }) => [sale.id, sale.sellerId]));
      for (const { saleId, charge } of outcomes) {
        try {
          await this.transitions.applyChargeOutcome(saleId, charge, schedules.get(sellers.get(saleId) as number) as FeeSchedule, now);
        } catch (single) {
          this.logger.error({ err: single, saleId }, 'Renewal charge answered but its outcome was not saved; the recovery job will apply it');
        }
      }
    }
    for (const saleId of uncharged) {
      await this.transitions.failUncharged(saleId, now).catch((error: unknown) => this.logger.warn({ err: error, saleId }, 'A renewal voided before its charge stays in processing; the recovery job fails it'));
    }
    const approved = outcomes.filter(({ charge }) => charge.outcome === 'APPROVED').map(({ saleId }) => saleId);
    await this.transitions.refundDue(approved, now).catch((error: unknown) => this.logger.warn({ err: error }, 'Refunds of renewals approved after their subscription stopped are left to the recovery job'));
    await this.transitions
      .releaseFromRecoveryHold(cards.map(({ sale }) => sale.id))
      .catch((error: unknown) => this.logger.warn({ err: error }, 'Could not give a billing batch back to the recovery job; it takes it within a minute'));
  }

  /**
   * Which of a batch's subscriptions were cancelled, paused or expired since the batch opened their
   * renewals: one read for the whole batch, at most every STOPPED_CHECK_MS, shared by the workers. A
   * batch's last charges go out long after it opened; one stopped meanwhile is not charged. When the read
   * fails, none is taken as stopped (the charge goes out, as it would have a moment earlier).
   */
  private stoppedMeanwhile(ids: number[]): () => Promise<ReadonlySet<number>> {
    let read: Promise<ReadonlySet<number>> | null = null;
    let readAt = 0;
    return () => {
      if (read === null || Date.now() - readAt >= STOPPED_CHECK_MS) {
        readAt = Date.now();
        read = this.subscriptions.stoppedAmong(ids).then(
          (stopped) => new Set(stopped),
          (error: unknown) => {
            this.logger.warn({ err: error }, 'Could not read which subscriptions of a billing batch were stopped; charging them');
            return new Set<number>();
          },
        );
      }
      return read;
    };
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
      const sale = await this.sales.openRenewal(manager, renewalSale(current, saleId, period, attempt, document), { now, fees });
      if (!sale) return null;
      await this.subscriptions.update(current.id, chargeColumns(current, period, attempt, dueAt, now), manager);
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
    // Stopped while the acquirer answered: the approval was applied and marked; it is given back now.
    if (result.outcome === 'APPROVED') await this.transitions.refundDue([saleId], now);
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
    const moved = await this.dataSource.transaction(async (manager) => {
      const current = await this.subscriptions.findByIdForUpdate(subscription.id, manager);
      if (!current || dueBillingAction(current, now, this.dunning)?.kind !== action.kind) return null;
      return this.apply(manager, current, event, columns(current), now);
    });
    if (!moved) return false;
    await this.settleChargesInFlight(moved, now);
    return true;
  }

  /**
   * After a move to CANCELLED or PAUSED has committed: the subscription's card charges still between their
   * two commits are settled with the acquirer, outside any transaction. Each reference is voided: a
   * charge still on its way is then refused and the sale fails; a charge the acquirer made first is
   * applied, which marks it to be refunded (saleChange), and refunded at once. What fails here is left
   * to the recovery job, which resolves the charge the same way, and to refundDue's pass.
   */
  private async settleChargesInFlight(subscription: SubscriptionEntity, now: Date): Promise<void> {
    if (!isStopped(subscription.status)) return;
    const inFlight = await this.sales.inProcessingOfSubscription(subscription.id);
    if (inFlight.length === 0) return;
    const fees = await this.sellers.feeSchedule(subscription.sellerId);
    for (const { id } of inFlight) {
      try {
        const charge = await this.provider.voidCharge(chargeReference(id));
        if (charge) await this.transitions.applyChargeOutcome(id, charge, fees, now);
        else await this.transitions.failUncharged(id, now);
      } catch (error) {
        this.logger.warn({ err: error, saleId: id }, 'A charge in flight at a subscription stop was not settled; the recovery job resolves it');
      }
    }
    await this.transitions.refundDue(inFlight.map(({ id }) => id), now);
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
    const moved = await this.dataSource.transaction(async (manager) => {
      const subscription = await this.ownedForUpdate(manager, sellerId, id);
      if (!canMove(subscription.status, event)) {
        throw new DomainError(refusal(subscription), `Subscription ${id} is ${subscription.status}: it cannot ${event.toLowerCase()}`);
      }
      return this.apply(manager, subscription, event, columns(subscription), now);
    });
    await this.settleChargesInFlight(moved, now);
    return moved;
  }

  /** The one place a subscription's status changes: the table decides, the row is saved, the postback written. */
  private async apply(manager: EntityManager, subscription: SubscriptionEntity, event: SubscriptionEvent | null, changes: Partial<SubscriptionEntity>, now: Date): Promise<SubscriptionEntity> {
    const { next, columns } = transition(subscription, event, changes);
    await this.subscriptions.update(subscription.id, columns, manager);
    let moved = { ...subscription, ...columns, updatedAt: now } as SubscriptionEntity;
    if (next !== subscription.status && (next === 'CANCELLED' || next === 'PAUSED')) {
      // Nothing of a cancelled or paused subscription can be paid afterwards. Cancelling its open charges
      // moves its counters again (their lapse, through saleMoved): the postback below is built from the
      // row as those moves left it, not from the columns read before them.
      const cancelled = await this.sales.cancelOpenCharges(manager, subscription.id, null, { now, fees: await this.sellers.feeScheduleIn(manager, subscription.sellerId) });
      if (cancelled > 0) moved = { ...((await this.subscriptions.findById(subscription.id, manager)) as SubscriptionEntity), updatedAt: now };
    }
    if (next !== subscription.status && subscription.postbackUrl) {
      await this.notifications.enqueueSubscriptionStatusChange(manager, statusChange(subscription, moved, now));
    }
    return moved;
  }

  /**
   * `apply` for many subscriptions at once (a billing batch; none of them cancelled or paused by it, which
   * cancels open charges one by one): the rows saved and the postbacks written in one statement each.
   */
  private async applyMany(
    manager: EntityManager,
    changes: Array<{ subscription: SubscriptionEntity; event: SubscriptionEvent | null; changes: Partial<SubscriptionEntity> }>,
    now: Date,
  ): Promise<void> {
    const applied = changes.map(({ subscription, event, changes: columns }) => ({ subscription, ...transition(subscription, event, columns) }));
    await this.subscriptions.updateMany(
      applied.map(({ subscription, columns }) => ({ id: subscription.id, changes: columns })),
      manager,
    );
    await this.notifications.enqueueSubscriptionStatusChanges(
      manager,
      applied
        .filter(({ subscription, next }) => next !== subscription.status && subscription.postbackUrl)
        .map(({ subscription, columns }) => statusChange(subscription, { ...subscription, ...columns, updatedAt: now } as SubscriptionEntity, now)),
    );
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

/** The sale of one charge of a period of the subscription (locked and re-checked), under `saleId`. */
function renewalSale(current: SubscriptionEntity, saleId: number, period: number, attempt: number, document: PaymentDocument | null): RenewalSale {
  return {
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
    card: current.paymentMethod === 'PIX' ? null : { token: current.cardToken as string, lastFour: current.cardLastFour ?? '', brand: current.cardBrand ?? 'UNKNOWN' },
    document,
    postbackUrl: current.postbackUrl,
  };
}

/** The subscription's columns once a charge of `period` (due at `dueAt`) is written: its new period, dates and counters. */
function chargeColumns(current: SubscriptionEntity, period: number, attempt: number, dueAt: Date, now: Date): Partial<SubscriptionEntity> {
  return {
    currentPeriod: period,
    periodDueAt: dueAt,
    periodAttempts: attempt + 1,
    nextRetryAt: null,
    nextBillingDate: attempt === 0 ? nextBillingAfter(dueAt, now, current.billingCycle) : current.nextBillingDate,
    awaitingPaymentSince: current.paymentMethod === 'PIX' ? dueAt : null,
    totalBillings: current.totalBillings + 1,
    lastPaymentStatus: 'PENDENTE',
  };
}

function cancelledColumns(at: Date, reason: string | null): Partial<SubscriptionEntity> {
  return { cancelledAt: at, cancellationReason: reason };
}

/** The next status by the table (unchanged without an event) and the columns saved with it; a final status clears the dates. */
function transition(subscription: SubscriptionEntity, event: SubscriptionEvent | null, changes: Partial<SubscriptionEntity>): { next: SubscriptionStatus; columns: Partial<SubscriptionEntity> } {
  const next = event ? nextSubscriptionStatus(subscription.status, event) : subscription.status;
  const final = next === 'CANCELLED' || next === 'EXPIRED';
  return { next, columns: { ...changes, status: next, ...(final ? { nextBillingDate: null, nextRetryAt: null, scheduledCancellationDate: null } : {}) } };
}

/** The subscription.status_changed postback of a move (platform.md §5), to the subscription's postbackUrl. */
function statusChange(subscription: SubscriptionEntity, moved: SubscriptionEntity, now: Date): StatusChange<SubscriptionResponse> {
  return {
    sellerId: subscription.sellerId,
    resourceId: subscription.id,
    url: subscription.postbackUrl as string,
    previousStatus: subscription.status,
    status: moved.status,
    changedAt: now,
    data: toSubscription(moved),
  };
}

/** What a sale's move does to its subscription: the event and columns, and whether the sale is to be refunded. */
interface SaleChange {
  event: SubscriptionEvent | null;
  changes: Partial<SubscriptionEntity>;
  refund?: boolean;
}

/** Cancelled or paused: nothing of it can be paid (a charge approved now is refunded). */
function isStopped(status: SubscriptionStatus): boolean {
  return status === 'CANCELLED' || status === 'PAUSED';
}

/** How a sale's move concerns its subscription: its payment, its failure, or its lapse unpaid (null: not at all). */
function saleOutcome(sale: SaleEntity, previous: SaleStatus): 'PAID' | 'FAILED' | 'LAPSED' | null {
  if (sale.status === 'PAGO') return previous === 'PENDENTE' || previous === 'EM_PROCESSAMENTO' || previous === 'FALHA' ? 'PAID' : null;
  if (sale.status === 'RECUSADO' || sale.status === 'FALHA') return 'FAILED';
  if (sale.status === 'CANCELADO' && previous === 'PENDENTE') return 'LAPSED';
  return null;
}

