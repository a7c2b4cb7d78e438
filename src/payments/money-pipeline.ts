import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { CteStatement } from '../database/cte-statement';
import { DomainError } from '../domain/domain-error';
import { FeeSchedule } from '../domain/fees';
import { cents } from '../domain/money';
import { planOpening, planSaleMove } from '../domain/sale-move';
import { SaleEvent, SaleStatus } from '../domain/sale-status';
import { DEFAULT_DUNNING, DunningPolicy } from '../domain/subscription-billing';
import { chargeOutcome, isStopped, subscriptionChangeOnCharge, SubscriptionColumns, subscriptionTransition } from '../domain/subscription-outcome';
import { SubscriptionEvent, SubscriptionStatus } from '../domain/subscription-status';
import { LedgerPosting, LedgerService } from '../ledger/ledger.service';
import { NotificationsService, StatusChange } from '../notifications/notifications.service';
import { SaleEntity } from '../sales/entities/sale.entity';
import { toTransaction } from '../sales/sale.presenter';
import { SaleLookupItem, SalesRepository, StatusChangeAuthor } from '../sales/sales.repository';
import { SellerService } from '../seller/seller.service';
import { SubscriptionEntity } from '../subscriptions/entities/subscription.entity';
import { toSubscription } from '../subscriptions/subscription.presenter';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';

/** A sale to move by `event`, locked by the caller in this transaction; `extra` columns are saved with the move. */
export interface SaleMoveRequest {
  sale: SaleEntity;
  event: SaleEvent;
  extra?: Partial<SaleEntity>;
  /** The sale's items when the caller holds them; read here otherwise (for its postback). */
  items?: SaleLookupItem[];
  /** Who recorded the move, when it was made on someone's word (the operator's dispute events): signed on its status line. */
  author?: StatusChangeAuthor;
}

/** A subscription to move by `event` (or only to change, without one), locked by the caller in this transaction. */
export interface SubscriptionMoveRequest {
  subscription: SubscriptionEntity;
  event: SubscriptionEvent | null;
  changes: SubscriptionColumns;
}

/** What one unit of work does to money: any number of sales and subscriptions, in one transaction. */
export interface UnitOfWork {
  /** Moved first, in order; each may move its subscription (domain/subscription-outcome.ts decides). */
  sales?: SaleMoveRequest[];
  /** Moved after the sales, in order. */
  subscriptions?: SubscriptionMoveRequest[];
  /**
   * Sales this unit wrote (a PIX renewal; a card sale written EM_PROCESSAMENTO): announced to their
   * postbackUrl, from `previous` (the status before theirs, null for a sale written PENDENTE).
   */
  opened?: Array<{ sale: SaleEntity; previous: SaleStatus | null; items?: SaleLookupItem[] }>;
}

export interface WorkDone {
  /** Every sale moved, as it is afterwards, by id. */
  sales: Map<number, SaleEntity>;
  /** Every subscription changed, as it is afterwards, by id. */
  subscriptions: Map<number, SubscriptionEntity>;
}

/** A sale's move as planned: the sale as locked and as moved, what to save, its postings, its items if held, who recorded it if someone did. */
interface PlannedMove {
  sale: SaleEntity;
  moved: SaleEntity;
  changes: Partial<SaleEntity> & { status: SaleStatus };
  postings: LedgerPosting[];
  items?: SaleLookupItem[];
  author?: StatusChangeAuthor;
}

/** A subscription as the unit of work changes it: as locked, as it is now, what to save, its status changes to announce. */
interface TrackedSubscription {
  before: SubscriptionEntity;
  current: SubscriptionEntity;
  columns: SubscriptionColumns;
  changes: Array<{ previous: SubscriptionStatus; status: SubscriptionStatus; data: SubscriptionEntity | null }>;
  /** Stopped (cancelled or paused) by this unit, its open charges not yet cancelled. */
  stopping: boolean;
}

/**
 * The one pipeline every money step goes through, always in batch form (a single move is a batch of
 * one), inside the caller's transaction and in one direction: the sales' moves are planned by the
 * domain (status table, fees, ledger effect), each moves its subscription by the domain's decision,
 * the subscriptions' own moves follow, and a subscription this unit stops has its open charges
 * cancelled in the same unit (their lapse counted on it as it is then). Only then is anything written:
 * the sales with their status lines (signed by whoever recorded a move made on their word), the
 * subscriptions, the refund marks, every postback in one statement, each built from the rows as they
 * are saved, and last the ledger postings and balances
 * (their row locks held until the commit, so taken as late as possible). No hook, no
 * call back into a caller, no re-entrance.
 */
@Injectable()
export class MoneyPipeline {
  private readonly dunning: DunningPolicy;

  constructor(
    private readonly sales: SalesRepository,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly sellers: SellerService,
    private readonly ledger: LedgerService,
    private readonly notifications: NotificationsService,
    config: AppConfig,
  ) {
    this.dunning = { ...DEFAULT_DUNNING, ...config.subscriptionDunning };
  }

  /**
   * Does `work` at `now` in the caller's transaction. `schedules` holds the fee schedules the caller
   * read before its transaction (a seller missing from it is read here). Throws CONFLICT, and so rolls
   * the caller back, if a sale was moved by someone else first.
   */
  async write(manager: EntityManager, work: UnitOfWork, now: Date, schedules: ReadonlyMap<number, FeeSchedule> = new Map()): Promise<WorkDone> {
    const fees = await this.feesFor(manager, work, schedules);
    const tracked = new Map<number, TrackedSubscription>();
    const track = (subscription: SubscriptionEntity) => {
      const known = tracked.get(subscription.id);
      if (known) return known;
      const fresh: TrackedSubscription = { before: subscription, current: subscription, columns: {}, changes: [], stopping: false };
      tracked.set(subscription.id, fresh);
      return fresh;
    };
    for (const { subscription } of work.subscriptions ?? []) track(subscription);

    const moves: PlannedMove[] = [];
    const moving = new Set<number>();
    const refunds: number[] = [];
    const moveSales = async (requests: SaleMoveRequest[]) => {
      const planned = requests.map((request) => planMove(request, fees, now));
      // The subscriptions these moves concern, locked at once (those not tracked yet).
      const concerned = planned.filter(({ sale, moved }) => sale.subscriptionId !== null && chargeOutcome(moved.status, sale.status) !== null);
      const unlocked = [...new Set(concerned.map(({ sale }) => sale.subscriptionId as number))].filter((id) => !tracked.has(id));
      for (const subscription of await this.subscriptions.findByIdsForUpdate(unlocked, manager)) track(subscription);
      for (const move of planned) {
        moves.push(move);
        moving.add(move.sale.id);
        const subscription = move.sale.subscriptionId === null ? undefined : tracked.get(move.sale.subscriptionId);
        if (!subscription) continue;
        const change = subscriptionChangeOnCharge(subscription.current, move.moved, move.sale.status, now, this.dunning);
        if (!change) continue;
        step(subscription, change.event, change.changes, now);
        if (change.refund) refunds.push(move.sale.id);
      }
    };

    await moveSales(work.sales ?? []);
    for (const { subscription, event, changes } of work.subscriptions ?? []) step(track(subscription), event, changes, now);
    // Nothing of a cancelled or paused subscription can be paid afterwards: its open charges are cancelled
    // in this unit, and their lapse is counted on it as it is then (a stop they cause is followed too).
    for (;;) {
      const stopping = [...tracked.values()].filter((subscription) => subscription.stopping);
      if (stopping.length === 0) break;
      stopping.forEach((subscription) => (subscription.stopping = false));
      const open = await this.sales.findOpenChargesForUpdate(
        stopping.map(({ current }) => ({ subscriptionId: current.id, period: null })),
        manager,
      );
      await moveSales(open.filter((sale) => !moving.has(sale.id)).map((sale) => ({ sale, event: 'CANCELLED' as const })));
    }

    return this.writePlanned(manager, { moves, tracked, refunds, opened: work.opened ?? [] }, now);
  }

  /**
   * One sale's move (`request`) written in one statement with no transaction, when it can be: its
   * status line, its postback and its posting with the balance move ride in the same statement as the
   * sale's conditional write (src/database/cte-statement.ts), so the seller's balances row is locked
   * for that statement only. It can be when the sale has no subscription (nothing to lock or read
   * first), its items are held (when it has a postback), no one is named as its author (its status line
   * is signed in a transaction) and `schedules` has its seller. Answers null, with nothing written, when
   * it cannot be, or when the sale was moved by someone else first or its
   * seller has no balances row: the caller then commits the move in a transaction.
   */
  async writeAlone(manager: EntityManager, request: SaleMoveRequest, now: Date, schedules: ReadonlyMap<number, FeeSchedule>): Promise<WorkDone | null> {
    const { sale } = request;
    if (sale.subscriptionId !== null || !schedules.has(sale.sellerId) || (sale.postbackUrl && !request.items) || request.author) return null;
    const move = planMove(request, schedules, now);
    const statement = new CteStatement();
    const posting = this.ledger.prepare(statement, move.postings);
    const saved = this.sales.addStatusMoves(statement, [{ id: sale.id, expected: sale.status, changes: move.changes }], posting.ready);
    if (sale.postbackUrl) {
      const changes = saleStatusChanges([{ sale, moved: move.moved, previous: sale.status }], new Map([[sale.id, request.items ?? []]]), now);
      this.notifications.addStatusChanges(statement, { sales: changes }, saved);
    }
    posting.add(saved);
    const [row] = await statement.run<{ saved: boolean }>(manager, `SELECT ${saved} AS saved`);
    return row.saved ? { sales: new Map([[sale.id, move.moved]]), subscriptions: new Map() } : null;
  }

  private async writePlanned(
    manager: EntityManager,
    unit: { moves: PlannedMove[]; tracked: Map<number, TrackedSubscription>; refunds: number[]; opened: NonNullable<UnitOfWork['opened']> },
    now: Date,
  ): Promise<WorkDone> {
    const { moves, tracked, refunds, opened } = unit;
    if (moves.length > 0) {
      const saved = await this.sales.updateStatusesIfCurrent(
        moves.map(({ sale, changes }) => ({ id: sale.id, expected: sale.status, changes })),
        manager,
      );
      const lost = moves.find(({ sale }) => !saved.has(sale.id));
      if (lost) throw new DomainError('CONFLICT', `Sale ${lost.sale.id} was changed by another request; retry`);
      await this.sales.signLatestStatusChanges(
        moves.flatMap(({ sale, moved, author }) => (author ? [{ saleId: sale.id, status: moved.status, author }] : [])),
        manager,
      );
    }
    const changed = [...tracked.values()].filter((subscription) => Object.keys(subscription.columns).length > 0);
    // updated_at is the unit's `now`, as each postback's `data` says (issue 35: a postback is the lookup at that moment).
    await this.subscriptions.updateMany(
      changed.map(({ before, columns }) => ({ id: before.id, changes: { ...columns, updatedAt: now } as Partial<SubscriptionEntity> })),
      manager,
    );
    await this.sales.markRefundDue(refunds, now, manager);

    const announced = [
      ...opened.map(({ sale, previous }) => ({ sale, moved: sale, previous })),
      ...moves.map(({ sale, moved }) => ({ sale, moved, previous: sale.status })),
    ].filter(({ sale }) => sale.postbackUrl);
    const held = new Map([...opened, ...moves].flatMap(({ sale, items }) => (items ? [[sale.id, items] as const] : [])));
    const read = await this.sales.itemsOfMany(
      announced.map(({ sale }) => sale.id).filter((id) => !held.has(id)),
      manager,
    );
    const items = new Map<number, SaleLookupItem[]>([...read, ...held]);
    const saleChanges = saleStatusChanges(announced, items, now);
    const subscriptionChanges: Array<StatusChange<unknown>> = changed
      .filter(({ before }) => before.postbackUrl)
      .flatMap(({ before, current, changes }) =>
        changes.map(({ previous, status, data }) => ({
          sellerId: before.sellerId,
          resourceId: before.id,
          url: before.postbackUrl as string,
          previousStatus: previous,
          status,
          changedAt: now,
          data: toSubscription(data ?? current),
        })),
      );
    await this.notifications.enqueueStatusChanges(manager, { sales: saleChanges, subscriptions: subscriptionChanges });
    // Last: the postings lock their sellers' balances rows until the commit, and every unit that moves a
    // seller's money waits for those locks (two billing batches' answers, a sale's answer, a withdrawal),
    // so they are held for the postings and the commit only, not for the writes above as well.
    await this.ledger.post(
      manager,
      moves.flatMap(({ postings }) => postings),
    );
    return {
      sales: new Map(moves.map(({ moved }) => [moved.id, moved])),
      subscriptions: new Map(changed.map(({ current }) => [current.id, current])),
    };
  }

  /** The fee schedules of every seller whose sales move: the caller's, and those it did not read (one query). */
  private async feesFor(manager: EntityManager, work: UnitOfWork, schedules: ReadonlyMap<number, FeeSchedule>): Promise<ReadonlyMap<number, FeeSchedule>> {
    const sellers = new Set([...(work.sales ?? []).map(({ sale }) => sale.sellerId), ...(work.subscriptions ?? []).map(({ subscription }) => subscription.sellerId)]);
    const missing = [...sellers].filter((sellerId) => !schedules.has(sellerId));
    if (missing.length === 0) return schedules;
    const read = await this.sellers.feeSchedulesOf(missing, manager);
    return new Map([...schedules, ...read]);
  }
}

/**
 * A new sale's columns moved at once by `events` as it is written (a card sale sent to the acquirer),
 * by the status table of spec 3.1 (domain/sale-move.ts planOpening: no money moves), and the statuses
 * it went through before its own (SalesRepository.insert's `history`). Announce it through the unit of
 * work's `opened`, from the last of them.
 */
export function openedSale<T extends Partial<SaleEntity> & Pick<SaleEntity, 'paymentMethod' | 'amountCents'>>(
  columns: T,
  events: SaleEvent[],
  schedule: FeeSchedule,
  now: Date,
): { columns: T & { status: SaleStatus }; history: SaleStatus[] } {
  const state = { paymentMethod: columns.paymentMethod, amountCents: columns.amountCents, systemFeeCents: null, netAmountCents: null, reserveAmountCents: null, reserveSettledAt: null, refundedCents: cents(0), refundCompletedCents: cents(0), disputeAmountCents: null, disputeNetCents: null };
  const opening = planOpening(state, events, schedule, now);
  return { columns: { ...columns, ...opening.columns, status: opening.status }, history: opening.history };
}

/**
 * One change of a tracked subscription, by the table of spec 3.2: its columns folded into what is saved;
 * a status change is announced with the row as it is when the next change comes, or as saved at the end.
 */
function step(subscription: TrackedSubscription, event: SubscriptionEvent | null, changes: SubscriptionColumns, now: Date): void {
  const from = subscription.current.status;
  const { next, columns } = subscriptionTransition(from, event, changes);
  if (next !== from) {
    const open = subscription.changes[subscription.changes.length - 1];
    if (open && open.data === null) open.data = subscription.current;
    subscription.changes.push({ previous: from, status: next, data: null });
    if (isStopped(next)) subscription.stopping = true;
  }
  subscription.current = { ...subscription.current, ...columns, updatedAt: now } as SubscriptionEntity;
  subscription.columns = { ...subscription.columns, ...columns };
}

/** A sale's move planned by the domain (domain/sale-move.ts): what to save, the sale afterwards, its postings. */
function planMove({ sale, event, extra, items, author }: SaleMoveRequest, fees: ReadonlyMap<number, FeeSchedule>, now: Date): PlannedMove {
  const plan = planSaleMove(sale, event, feesOf(fees, sale.sellerId), now);
  const changes: Partial<SaleEntity> & { status: SaleStatus } = { ...extra, ...plan.columns, status: plan.next };
  const postings = plan.effects.map((effect) => ({ sellerId: sale.sellerId, referenceType: 'SALE' as const, referenceId: sale.id, effect, provider: sale.provider }));
  return { sale, moved: { ...sale, ...changes } as SaleEntity, changes, postings, items, author };
}

/** The postbacks of sales moved (from their status before) or opened (from `previous`), with their items. */
function saleStatusChanges(
  announced: Array<{ sale: SaleEntity; moved: SaleEntity; previous: SaleStatus | null }>,
  items: ReadonlyMap<number, SaleLookupItem[]>,
  now: Date,
): Array<StatusChange<unknown>> {
  return announced.map(({ sale, moved, previous }) => ({
    sellerId: sale.sellerId,
    resourceId: sale.id,
    url: sale.postbackUrl as string,
    previousStatus: previous,
    status: moved.status,
    changedAt: now,
    data: toTransaction(moved, items.get(sale.id) ?? []),
  }));
}

function feesOf(schedules: ReadonlyMap<number, FeeSchedule>, sellerId: number): FeeSchedule {
  const schedule = schedules.get(sellerId);
  if (!schedule) throw new Error(`No fee schedule read for seller ${sellerId}`);
  return schedule;
}
