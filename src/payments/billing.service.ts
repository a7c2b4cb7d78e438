import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { forEachConcurrently } from '../common/concurrency';
import { AppConfig } from '../config/app-config';
import { automaticChargeDates, collectsAutomatically } from '../domain/automatic-pix';
import { addDays } from '../domain/dates';
import { FeeSchedule } from '../domain/fees';
import { BillingAction, DEFAULT_DUNNING, DunningPolicy, dueBillingAction } from '../domain/subscription-billing';
import { cancelledColumns, chargeOpenedColumns, SubscriptionColumns } from '../domain/subscription-outcome';
import { SubscriptionEvent } from '../domain/subscription-status';
import { chargeReference, ChargeResult } from '../providers/card-provider.port';
import { callProvider, ProviderOperation } from '../providers/provider-operation';
import { ProviderRegistry, railOf } from '../providers/provider-registry';
import { SaleEntity } from '../sales/entities/sale.entity';
import { SaleItemEntity } from '../sales/entities/sale-item.entity';
import { SalesRepository } from '../sales/sales.repository';
import { SalesProfile, SellerService } from '../seller/seller.service';
import { SubscriptionEntity } from '../subscriptions/entities/subscription.entity';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';
import { AutomaticPixService } from './automatic-pix.service';
import { ChargeOutcome, ChargesService } from './charges.service';
import { PaymentDocument } from './checkout.service';
import { MoneyPipeline, openedSale } from './money-pipeline';
import { PixChargesService } from './pix-charges.service';
import { cardTokenOf } from './stored-card-token';

const BATCH = 500;
/**
 * Claimed batches billed at once by one instance (runBilling). Three: with two, the service's thread
 * idled a fifth of a run waiting on PostgreSQL (bench:billing's profile); three gave 9 % more renewals
 * per second on 2 cores, four no more.
 */
const BATCHES_IN_FLIGHT = 3;
/** Rounds one billing pass takes for a claimed batch at most (a renewal, then nothing due: usually one). */
const MAX_ROUNDS = 10;
/** How often a batch renews its hold on the sales it has still to charge (the recovery job's lease lasts a minute). */
const RECOVERY_HOLD_RENEWAL_MS = 20_000;
/** How old the batch's view of which subscriptions were stopped meanwhile may be when a card's turn comes. */
const STOPPED_CHECK_MS = 1_000;
/** Renewal cards sent to the acquirer in one call at most. */
const CARDS_PER_CALL = 128;

export interface BillingSummary {
  renewals: number;
  retries: number;
  cancelled: number;
  pastDue: number;
}

/** A subscription with the billing action due for it, as read before its batch's transaction. */
interface Due {
  subscription: SubscriptionEntity;
  action: BillingAction;
}

/** One charge of a period to open: its sale's id, the period and attempt, when the period fell due, its PIX code. */
interface PlannedCharge extends Due {
  saleId: number;
  period: number;
  attempt: number;
  dueAt: Date;
}

/** The moves the billing job makes on its own: the event and the columns saved with it. */
const DUE_MOVES: Record<'CANCEL_AT_PERIOD_END' | 'GRACE_PERIOD_ENDED' | 'PIX_OVERDUE', { event: SubscriptionEvent; columns: (s: SubscriptionEntity, now: Date) => SubscriptionColumns }> = {
  CANCEL_AT_PERIOD_END: { event: 'CANCEL', columns: (s, now) => cancelledColumns(s.scheduledCancellationDate ?? now, s.cancellationReason) },
  GRACE_PERIOD_ENDED: { event: 'GRACE_PERIOD_ENDED', columns: (_s, now) => cancelledColumns(now, 'Not paid within the grace period') },
  PIX_OVERDUE: { event: 'CHARGE_FAILED', columns: (s) => ({ pastDueSince: s.awaitingPaymentSince }) },
};

const isCharge = (action: BillingAction): boolean => action.kind === 'RENEW' || action.kind === 'RETRY';

/**
 * The billing job (spec 3.2, platform.md §7): subscriptions with work due are claimed a batch at a time
 * (the billing lease + SKIP LOCKED), and each claimed batch is billed in rounds until nothing more is
 * due: the moves the job makes on its own (cancellations at period end, grace periods ended, PIX
 * renewals overdue) in one unit of work, the charges due (renewals and card retries alike) in another,
 * then the charges' cards outside any transaction and their answers in a third. Every step is the
 * batch form, a batch that cannot be saved is done again one subscription at a time. Each (period,
 * attempt) is one sale by a unique index, so two instances never charge a period twice.
 */
@Injectable()
export class BillingService {
  private readonly logger = new Logger(BillingService.name);
  private readonly dunning: DunningPolicy;
  /** Cards charged at once by this instance; always one pool connection left for requests. */
  private readonly billingConcurrency: number;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly sales: SalesRepository,
    private readonly pipeline: MoneyPipeline,
    private readonly charges: ChargesService,
    private readonly sellers: SellerService,
    private readonly providers: ProviderRegistry,
    private readonly pixCharges: PixChargesService,
    private readonly automaticPix: AutomaticPixService,
    private readonly config: AppConfig,
  ) {
    this.dunning = { ...DEFAULT_DUNNING, ...config.subscriptionDunning };
    this.billingConcurrency = Math.max(1, Math.min(config.billingConcurrency, config.database.poolSize - 1));
  }

  /** The billing job at `now`, for one seller or (null) for all. */
  async runBilling(now: Date, sellerId: number | null): Promise<BillingSummary> {
    const summary: BillingSummary = { renewals: 0, retries: 0, cancelled: 0, pastDue: 0 };
    // Each subscription is billed once per run: one whose billing failed is released, and left for the next run.
    const seen = new Set<number>();
    // Batches in flight at once, sharing BILLING_CONCURRENCY: while one's transactions run, the others'
    // charges wait on the acquirer, so that the service and PostgreSQL both work. Claims never overlap.
    // The concurrency is shared out whole (8 over three lanes: 3, 3 and 2).
    const lanes = Math.min(BATCHES_IN_FLIGHT, this.billingConcurrency);
    const shareOf = (lane: number) => Math.floor(this.billingConcurrency / lanes) + (lane < this.billingConcurrency % lanes ? 1 : 0);
    // Those billed already and claimed again are still due (a failure, a period written elsewhere): they come
    // first in every claim and, 500 of them, would fill it, leaving whatever falls due after them unbilled. So
    // they are passed over by the next claims. Only these: a list of every id billed would cost each claim
    // a comparison per id and per row, and a run of 100,000 would slow down as it goes.
    const stillDue = new Set<number>();
    const lane = async (_: unknown, index: number) => {
      const concurrency = shareOf(index);
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
          ids.forEach((id) => seen.add(id));
          await this.bill(ids, now, summary, concurrency);
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

  /** A claimed batch billed in rounds: each round does what is due now for those that acted in the last one. */
  private async bill(ids: number[], now: Date, summary: BillingSummary, concurrency: number): Promise<void> {
    let pending = ids;
    for (let round = 0; round < MAX_ROUNDS && pending.length > 0; round += 1) {
      const due = (await this.subscriptions.findDueAmong(pending, now, this.dunning.graceDays, this.dunning.pixOverdueDays)).flatMap((subscription): Due[] => {
        const action = dueBillingAction(subscription, now, this.dunning);
        return action ? [{ subscription, action }] : [];
      });
      const acted = [
        ...(await this.batchOrEach(
          due.filter(({ action }) => !isCharge(action)),
          (batch) => this.moveDue(batch, now),
        )),
        ...(await this.batchOrEach(
          due.filter(({ action }) => isCharge(action)),
          (batch) => this.chargeDue(batch, now, concurrency),
        )),
      ];
      for (const { action } of acted) {
        if (action.kind === 'RENEW') summary.renewals += 1;
        else if (action.kind === 'RETRY') summary.retries += 1;
        else if (action.kind === 'PIX_OVERDUE') summary.pastDue += 1;
        else summary.cancelled += 1;
      }
      pending = acted.map(({ subscription }) => subscription.id);
    }
  }

  /** `work` for the whole batch; if it fails, for each subscription alone (one that fails again is logged and left for the next run). */
  private async batchOrEach(due: Due[], work: (batch: Due[]) => Promise<Due[]>): Promise<Due[]> {
    if (due.length === 0) return [];
    try {
      return await work(due);
    } catch (error) {
      if (due.length === 1) {
        this.logger.error({ err: error, subscriptionId: due[0].subscription.id }, 'Billing a subscription failed; it is retried on the next pass');
        return [];
      }
      this.logger.warn({ err: error, subscriptions: due.length }, 'Billing a batch failed; billing its subscriptions one by one');
    }
    const acted: Due[] = [];
    for (const one of due) acted.push(...(await this.batchOrEach([one], work)));
    return acted;
  }

  /**
   * The moves the job makes on its own, in one unit of work on the subscriptions locked and re-checked
   * (another instance or the seller may have moved them): those done. The charges in flight of those
   * it stopped are then settled with the acquirer.
   */
  private async moveDue(due: Due[], now: Date): Promise<Due[]> {
    const done = await this.dataSource.transaction(async (manager) => {
      const kinds = new Map(due.map(({ subscription, action }) => [subscription.id, action.kind]));
      const current = (await this.subscriptions.findByIdsForUpdate([...kinds.keys()], manager)).filter((s) => dueBillingAction(s, now, this.dunning)?.kind === kinds.get(s.id));
      await this.pipeline.write(
        manager,
        {
          subscriptions: current.map((subscription) => {
            const move = DUE_MOVES[kinds.get(subscription.id) as keyof typeof DUE_MOVES];
            return { subscription, event: move.event, changes: move.columns(subscription, now) };
          }),
        },
        now,
      );
      return new Set(current.map((subscription) => subscription.id));
    });
    const acted = due.filter(({ subscription }) => done.has(subscription.id));
    const stopped = acted.filter(({ action }) => action.kind !== 'PIX_OVERDUE').map(({ subscription }) => subscription.id);
    await this.charges.settleChargesOfStopped(stopped, now);
    // Pix Automático: the recurrence of a subscription the job ended is cancelled at the PSP.
    for (const { subscription } of acted.filter(({ subscription, action }) => subscription.automaticPixStatus && action.kind !== 'PIX_OVERDUE')) {
      await this.automaticPix.afterStop(subscription.id, subscription.sellerId, new Date());
    }
    return acted;
  }

  /**
   * The charges due (renewals and card retries), as one batch: (1) sale ids and the PIX renewals' codes
   * taken outside any transaction; (2) one unit of work re-checks the subscriptions under lock, cancels
   * the open attempts a retry replaces, writes every charge's sale (cards sent to the acquirer and held
   * from the recovery job until their turn, PIX announced) and moves the subscriptions to their new period or attempt; (3) outside any transaction,
   * each card is charged with its sale's id as reference, `concurrency` calls at once; (4) one unit of work
   * applies every answer. A sale left between (3) and (4) is resolved by the recovery job.
   */
  private async chargeDue(all: Due[], now: Date, concurrency: number): Promise<Due[]> {
    // A card held by a provider configured on no rail here is not billed here (nothing could charge it):
    // left as it is, and said, until an instance where its provider is configured bills it.
    const due = all.filter(({ subscription }) => subscription.paymentMethod === 'PIX' || this.providers.isConfigured(this.providerOf(subscription)));
    if (due.length < all.length) {
      const left = all.filter((one) => !due.includes(one)).map(({ subscription }) => ({ id: subscription.id, provider: subscription.provider }));
      this.logger.error({ subscriptions: left }, 'Renewals of cards held by a provider not configured here are left unbilled');
    }
    if (due.length === 0) return [];
    const saleIds = await this.sales.nextIds(due.length);
    const planned: PlannedCharge[] = due.map(({ subscription, action }, index) => {
      const retry = action.kind === 'RETRY';
      return {
        subscription,
        action,
        saleId: saleIds[index],
        period: retry ? subscription.currentPeriod : subscription.currentPeriod + 1,
        attempt: retry ? subscription.periodAttempts : 0,
        dueAt: (retry ? subscription.periodDueAt : subscription.nextBillingDate) as Date,
      };
    });
    const documents = await this.pixDocuments(
      planned.filter(({ subscription }) => subscription.paymentMethod === 'PIX'),
      concurrency,
    );
    const schedules = await this.sellers.feeSchedulesOf([...new Set(due.map(({ subscription }) => subscription.sellerId))], this.dataSource.manager);
    const opened = await this.dataSource.transaction(async (manager) => {
      const locked = new Map((await this.subscriptions.findByIdsForUpdate(planned.map(({ subscription }) => subscription.id), manager)).map((s) => [s.id, s]));
      const valid = planned.filter(({ subscription, action }) => {
        const current = locked.get(subscription.id);
        return current && dueBillingAction(current, now, this.dunning)?.kind === action.kind && current.currentPeriod === subscription.currentPeriod;
      });
      // A retry replaces the period's earlier attempts: none of them can be paid afterwards.
      const replaced = await this.sales.findOpenChargesForUpdate(
        valid.filter(({ attempt }) => attempt > 0).map(({ subscription, period }) => ({ subscriptionId: subscription.id, period })),
        manager,
      );
      // A card's sale is written already sent to the acquirer (EM_PROCESSAMENTO after PENDENTE).
      const openings = new Map(
        valid.map((charge) => {
          const current = locked.get(charge.subscription.id) as SubscriptionEntity;
          const columns = chargeSaleColumns(current, charge, documents.get(charge.saleId) ?? null, this.providerOf(current));
          const events = current.paymentMethod === 'CREDIT_CARD' ? (['SENT_TO_ACQUIRER'] as const) : [];
          return [charge.saleId, openedSale(columns, [...events], schedules.get(current.sellerId) as FeeSchedule, now)] as const;
        }),
      );
      const subscriptionOfSale = new Map(valid.map((charge) => [charge.saleId, charge.subscription.id]));
      const written = await this.sales.insertManyIfAbsent(
        [...openings.values()].map(({ columns }) => columns),
        (saleId) => [chargeItem(locked.get(subscriptionOfSale.get(saleId) as number) as SubscriptionEntity)],
        manager,
        (saleId) => openings.get(saleId)?.history ?? [],
        // Charged after the commit, `concurrency` at a time: out of the recovery job's reach until then.
        { heldFromRecovery: true },
      );
      const bySubscription = new Map(written.map((sale) => [sale.subscriptionId as number, sale]));
      const kept = valid.filter(({ subscription }) => bySubscription.has(subscription.id));
      const done = await this.pipeline.write(
        manager,
        {
          sales: replaced.map((sale) => ({ sale, event: 'CANCELLED' as const })),
          subscriptions: kept.map(({ subscription, period, attempt, dueAt }) => {
            const current = locked.get(subscription.id) as SubscriptionEntity;
            return { subscription: current, event: null, changes: chargeOpenedColumns(current, period, attempt, dueAt, now) };
          }),
          opened: written.map((sale) => ({ sale, previous: openings.get(sale.id)?.history.at(-1) ?? null })),
        },
        now,
        schedules,
      );
      return kept.map((charge) => ({ ...charge, subscription: locked.get(charge.subscription.id) as SubscriptionEntity, sale: (done.sales.get(charge.saleId) ?? bySubscription.get(charge.subscription.id)) as SaleEntity }));
    });
    await this.chargeCards(
      opened.filter(({ sale }) => sale.paymentMethod === 'CREDIT_CARD'),
      schedules,
      now,
      concurrency,
    );
    return opened;
  }

  /**
   * Step (3) and (4) of chargeDue: the cards charged outside any transaction, `concurrency` calls to the
   * acquirer at once (each for several cards, by chargeCards), while
   * the batch keeps its sales from the recovery job (their lease renewed as they wait their turn); a
   * subscription stopped meanwhile is not charged (its reference voided: the sale fails); then every
   * answer applied together, a charge approved for a subscription stopped meanwhile refunded, and the
   * sales given back to the recovery job.
   */
  private async chargeCards(cards: Array<{ subscription: SubscriptionEntity; sale: SaleEntity }>, schedules: ReadonlyMap<number, FeeSchedule>, now: Date, concurrency: number): Promise<void> {
    if (cards.length === 0) return;
    const outcomes: ChargeOutcome[] = [];
    const waiting = new Set(cards.map(({ sale }) => sale.id));
    const hold = setInterval(() => {
      this.sales.holdFromRecovery([...waiting]).catch((error: unknown) => this.logger.warn({ err: error }, 'Could not renew the recovery hold of a billing batch'));
    }, RECOVERY_HOLD_RENEWAL_MS);
    hold.unref();
    const stopped = this.stoppedMeanwhile(cards.map(({ subscription }) => subscription.id));
    // `concurrency` calls at once, each for the next cards in turn; each worker's call twice the size of its
    // last, from one card up to CARDS_PER_CALL: the first answers come as soon as one card's would, a
    // subscription stopped while its card waits its turn is seen before the card leaves, and a batch of
    // 500 is about 30 calls instead of 500 (each a round trip, and a statement at the sandbox acquirer).
    let next = 0;
    const worker = async () => {
      for (let size = 1; next < cards.length; size = Math.min(size * 2, CARDS_PER_CALL)) {
        const turn = cards.slice(next, next + size);
        next += turn.length;
        try {
          const halted = await stopped();
          // Cancelled or paused while these charges waited their turn: the reference is voided, nothing is
          // charged, and the sale fails as the recovery job would fail it (a charge found instead is applied).
          for (const { sale } of turn.filter(({ subscription }) => halted.has(subscription.id))) {
            const voided = await callProvider(cardVoid(this.providers), sale);
            if (voided.kind === 'answered') outcomes.push({ saleId: sale.id, charge: voided.answer });
          }
          // Each card is charged by the provider that holds it (its subscription's, on the sale); one
          // provider's failure leaves its own cards to the recovery job, not the others'.
          for (const charged of groupBy(turn.filter(({ subscription }) => !halted.has(subscription.id)), ({ sale }) => sale.provider)) {
            const answered = await callProvider(renewalCharges(this.providers, this.config), charged);
            if (answered.kind === 'answered') charged.forEach(({ sale }, index) => outcomes.push({ saleId: sale.id, charge: answered.answer[index] }));
          }
        } catch (error) {
          this.logger.error({ err: error, saleIds: turn.map(({ sale }) => sale.id) }, 'Renewal charges did not answer; the recovery job resolves their sales');
        } finally {
          turn.forEach(({ sale }) => waiting.delete(sale.id));
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(concurrency, cards.length) }, worker));
    } finally {
      clearInterval(hold);
    }
    await this.charges.applyOutcomesOrEach(outcomes, now, schedules);
    // Stopped while the acquirer answered: the approval was applied and marked; it is given back now.
    const approved = outcomes.filter(({ charge }) => charge?.outcome === 'APPROVED').map(({ saleId }) => saleId);
    await this.charges.refundDue(approved, now).catch((error: unknown) => this.logger.warn({ err: error }, 'Refunds of renewals approved after their subscription stopped are left to the recovery job'));
    await this.sales
      .releaseFromRecoveryHold(cards.map(({ sale }) => sale.id))
      .catch((error: unknown) => this.logger.warn({ err: error }, 'Could not give a billing batch back to the recovery job; it takes it within a minute'));
  }

  /**
   * The provider of a subscription's next sale: the one that holds its stored card or its live Pix
   * Automático recurrence; a plain PIX renewal (never authorized, or its authorization ended) is the PIX
   * rail's provider's.
   */
  private providerOf(subscription: SubscriptionEntity): string {
    const holds = subscription.paymentMethod !== 'PIX' || collectsAutomatically(subscription.automaticPixStatus);
    return (holds ? subscription.provider : null) ?? this.providers.forNew(railOf(subscription.paymentMethod));
  }

  /**
   * Which of a batch's subscriptions were cancelled, paused or expired since the batch opened their
   * charges: one read for the whole batch, at most every STOPPED_CHECK_MS, shared by the workers. A
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

  /**
   * The PIX codes of a batch's charges, from the provider (outside any transaction), each under the id
   * its sale will have and expiring `pixExpiryDays` after its period fell due, `concurrency` asked at
   * once: by sale id.
   */
  private async pixDocuments(charges: PlannedCharge[], concurrency: number): Promise<Map<number, AutomaticDocument>> {
    const profiles = new Map<number, Promise<SalesProfile>>();
    const profileOf = (sellerId: number) => profiles.get(sellerId) ?? (profiles.set(sellerId, this.sellers.salesProfile(sellerId)).get(sellerId) as Promise<SalesProfile>);
    const documents = new Map<number, AutomaticDocument>();
    await forEachConcurrently(charges, concurrency, async ({ subscription, saleId, dueAt }) => {
      if (collectsAutomatically(subscription.automaticPixStatus)) {
        // Pix Automático: no QR; the recurring charge is sent to the PSP by AutomaticPixService, before its due date.
        const dates = automaticChargeDates(dueAt);
        documents.set(saleId, { ...NO_PAYMENT_DOCUMENT, automaticPixDueDate: dates.dueDate, expiresAt: dates.expiresAt });
        return;
      }
      const profile = await profileOf(subscription.sellerId);
      const { customerName: name, customerDocument: number } = subscription;
      const pix = await this.pixCharges.issue(
        saleId,
        {
          provider: this.providerOf(subscription),
          amountCents: subscription.amountCents,
          expiresAt: addDays(dueAt, this.dunning.pixExpiryDays),
          receiverKey: null,
          profile,
          payer: { name, documentType: subscription.customerDocumentType, documentNumber: number },
          description: subscription.productName,
        },
        new Date(),
      );
      documents.set(saleId, { ...NO_PAYMENT_DOCUMENT, ...pix });
    });
    return documents;
  }
}

/** A renewal's payment document; a renewal collected by Pix Automático has its due date instead of a QR. */
type AutomaticDocument = PaymentDocument & Partial<Pick<SaleEntity, 'automaticPixDueDate'>>;

const NO_PAYMENT_DOCUMENT: PaymentDocument = { pixCode: null, pixReceiverKey: null, boletoCode: null, externalTransactionId: null, expiresAt: null };

/** The sale of one charge of a period of the subscription (locked and re-checked), written PENDENTE under the charge's sale id. */
function chargeSaleColumns(
  current: SubscriptionEntity,
  charge: PlannedCharge,
  document: AutomaticDocument | null,
  provider: string,
): Partial<SaleEntity> & Pick<SaleEntity, 'id' | 'paymentMethod' | 'amountCents' | 'provider'> & { status: 'PENDENTE' } {
  const card = current.paymentMethod === 'CREDIT_CARD';
  return {
    id: charge.saleId,
    provider,
    sellerId: current.sellerId,
    status: 'PENDENTE',
    paymentMethod: current.paymentMethod,
    amountCents: current.amountCents,
    installments: card ? 1 : null,
    customerName: current.customerName,
    customerEmail: current.customerEmail,
    customerDocumentType: current.customerDocumentType,
    customerDocumentNumber: current.customerDocument,
    customerPhone: current.customerPhone,
    cardToken: card ? current.cardToken : null,
    cardLastFour: card ? (current.cardLastFour ?? '') : null,
    cardBrand: card ? (current.cardBrand ?? 'UNKNOWN') : null,
    ...NO_PAYMENT_DOCUMENT,
    // Every row of a batch's insert has the same columns: only a Pix Automático renewal has a date here.
    automaticPixDueDate: null,
    ...(document ?? {}),
    shipping: null,
    postbackUrl: current.postbackUrl,
    tracking: {},
    metadata: null,
    subscriptionId: current.id,
    billingPeriod: charge.period,
    billingAttempt: charge.attempt,
  };
}

/** The one item of a subscription's charge: the plan at the subscription's amount. */
function chargeItem(current: SubscriptionEntity): Partial<SaleItemEntity> {
  return { title: current.productName, unitPriceCents: current.amountCents, quantity: 1, tangible: false, productId: current.productId, planId: null, planName: null, externalId: null };
}


/** `items` in groups of equal key, in the order each key first appears. */
function groupBy<T>(items: T[], key: (item: T) => string): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return [...groups.values()];
}

/** Voiding the charge of a renewal whose subscription stopped while it waited its turn (a provider operation: src/providers/provider-operation.ts). */
function cardVoid(providers: ProviderRegistry): Pick<ProviderOperation<SaleEntity, ChargeResult | null>, 'name' | 'provider' | 'reference' | 'call'> {
  return {
    name: 'card void',
    provider: (sale) => sale.provider,
    reference: (sale) => chargeReference(sale.id),
    // Never sent: its subscription stopped while it waited its turn.
    call: (sale) => providers.card(sale.provider, `Sale ${sale.id}`).voidCharge(chargeReference(sale.id), null),
  };
}

/**
 * Renewal charges of stored cards at their one provider, in one call (a provider operation:
 * src/providers/provider-operation.ts); its answers in order. A stored token no key of the keyring opens (its
 * ENCRYPTION_KEY dropped before secrets:reencrypt resealed it) is not sent: that renewal alone is answered
 * FAILED (retried by dunning), and the others of the batch go.
 */
function renewalCharges(providers: ProviderRegistry, config: AppConfig): Pick<ProviderOperation<Array<{ subscription: SubscriptionEntity; sale: SaleEntity }>, ChargeResult[]>, 'name' | 'provider' | 'reference' | 'call'> {
  return {
    name: 'batch of renewal charges',
    provider: ([first]) => first.sale.provider,
    reference: (charged) => charged.map(({ sale }) => chargeReference(sale.id)).join(','),
    call: async (charged) => {
      // The stored card: the acquirer's token opened from its seal for this call, or the sandbox's.
      const tokens = charged.map(({ subscription }) => openedCardToken(subscription, config));
      const sendable = charged.flatMap((renewal, index) => (tokens[index] === undefined ? [] : [{ ...renewal, token: tokens[index] }]));
      const answers = sendable.length
        ? await providers.card(charged[0].sale.provider, `Sale ${charged[0].sale.id}`).chargeCards(
            sendable.map(({ subscription, sale, token }) => ({
              reference: chargeReference(sale.id),
              token: token as string,
              brand: subscription.cardBrand,
              amountCents: sale.amountCents,
              installments: 1,
              kind: 'RENEWAL',
              // When the sale was written: what the recovery job counts its "none found" wait from.
              writtenAt: sale.updatedAt,
              customerName: subscription.customerName,
              customerDocument: subscription.customerDocument && subscription.customerDocumentType ? { type: subscription.customerDocumentType, number: subscription.customerDocument } : null,
            })),
          )
        : [];
      let next = 0;
      return charged.map((_, index): ChargeResult =>
        tokens[index] === undefined
          ? { outcome: 'FAILED', externalId: '', reason: "Not sent: the stored card's token is sealed with a key this service no longer has (ENCRYPTION_KEYS; run secrets:reencrypt before dropping a key)" }
          : answers[next++],
      );
    },
  };
}

const renewalLogger = new Logger('BillingService');

/** A subscription's stored token opened (null: the sandbox's kind with none), or undefined when no key of the keyring opens its seal (logged, never the token). */
function openedCardToken(subscription: SubscriptionEntity, config: AppConfig): string | null | undefined {
  try {
    return cardTokenOf(subscription, config);
  } catch (error) {
    renewalLogger.error({ subscriptionId: subscription.id, err: (error as Error).message }, "A subscription's stored card token cannot be opened with this service's keys: its renewal is not sent");
    return undefined;
  }
}
