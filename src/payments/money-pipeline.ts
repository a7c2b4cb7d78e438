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
    return (await this.plannedAndWritten(manager, work, now, schedules, true)) as WorkDone;
  }

  /**
   * `work` written the same way in one statement with no transaction, when it can be (`manager` is not
   * in one): one sale moved at most (the sales' conditional writes of one statement cannot wait on each
   * other, so a unit of several could keep one sale's move and lose another's), and nothing to lock or
   * read first — no sale of a subscription, no subscription, every seller's schedule in `schedules`, the
   * items of every sale with a postback held, one seller's balance moved. Answers null, with nothing
   * written, when it cannot be, when its sale was moved by someone else first or when the seller has no
   * balances row: the caller then writes the unit in a transaction.
   */
  async writeAlone(manager: EntityManager, work: UnitOfWork, now: Date, schedules: ReadonlyMap<number, FeeSchedule>): Promise<WorkDone | null> {
    const sales = [...(work.sales ?? []), ...(work.opened ?? [])];
    const lockFree =
      (work.sales ?? []).length <= 1 &&
      (work.subscriptions ?? []).length === 0 &&
      sales.every(({ sale, items }) => sale.subscriptionId === null && schedules.has(sale.sellerId) && (!sale.postbackUrl || items !== undefined)) &&
      new Set(sales.map(({ sale }) => sale.sellerId)).size <= 1;
    return lockFree ? this.plannedAndWritten(manager, work, now, schedules, false) : null;
  }

  /**
   * The unit planned, then written in one statement (in a transaction: a lost move throws CONFLICT;
   * alone: it answers null). The sales' moves are planned by the domain; the subscriptions they concern
   * are locked at once and moved by the domain's decision; a subscription stopped has its open charges
   * cancelled in the same unit.
   */
  private async plannedAndWritten(
    manager: EntityManager,
    work: UnitOfWork,
    now: Date,
    schedules: ReadonlyMap<number, FeeSchedule>,
    inTransaction: boolean,
  ): Promise<WorkDone | null> {
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
        // A charge approved after its subscription stopped: marked to be refunded, with its move.
        if (change.refund && move.moved.status === 'PAGO' && !move.sale.refundDueAt) {
          move.changes.refundDueAt = now;
          move.moved = { ...move.moved, refundDueAt: now };
        }
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

    return this.writePlanned(manager, { moves, tracked, opened: work.opened ?? [] }, now, inTransaction);
  }

  /**
   * The planned unit as one SQL statement (src/database/cte-statement.ts): the sales' conditional writes
   * with their status lines (signed by whoever recorded a move made on their word), gated on every
   * seller having its balances row; the subscriptions, every postback and the ledger postings with the
   * balances move, each gated on every sale's write. In a transaction, several sellers' balances rows
   * are locked first in seller order, and a missing row is created and the statement run again; alone,
   * nothing is written when a sale was moved first or a row is missing (null).
   */
  private async writePlanned(
    manager: EntityManager,
    unit: { moves: PlannedMove[]; tracked: Map<number, TrackedSubscription>; opened: NonNullable<UnitOfWork['opened']> },
    now: Date,
    inTransaction: boolean,
  ): Promise<WorkDone | null> {
    const { moves, tracked, opened } = unit;
    const statement = new CteStatement();
    const posting = this.ledger.add(
      statement,
      moves.flatMap(({ postings }) => postings),
      inTransaction,
    );
    if (inTransaction) await this.ledger.openBalances(manager, posting.sellers);
    const saved = this.sales.addStatusMoves(
      statement,
      moves.map(({ sale, changes, author }) => ({ id: sale.id, expected: sale.status, changes, author })),
      posting.ready,
    );
    const changed = [...tracked.values()].filter((subscription) => Object.keys(subscription.columns).length > 0);
    // updated_at is the unit's `now`, as each postback's `data` says (issue 35: a postback is the lookup at that moment).
    this.subscriptions.addUpdates(
      statement,
      changed.map(({ before, columns }) => ({ id: before.id, changes: { ...columns, updatedAt: now } as Partial<SubscriptionEntity> })),
      saved,
    );

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
    this.notifications.addStatusChanges(statement, { sales: saleChanges, subscriptions: subscriptionChanges }, saved);
    posting.write(saved);

    if (!posting.empty || moves.length > 0 || changed.length > 0 || saleChanges.length > 0) {
      const run = async () => (await statement.run<{ ready: boolean; saved: boolean }>(manager, `SELECT ${posting.ready} AS ready, ${saved} AS saved`))[0];
      let outcome = await run();
      if (!outcome.ready && inTransaction) {
        await this.ledger.openBalances(manager, posting.sellers, true);
        outcome = await run();
      }
      if (!outcome.saved) {
        if (!inTransaction) return null;
        if (!outcome.ready) throw new Error('A seller of these postings has no balances row');
        const ids = moves.map(({ sale }) => sale.id);
        throw new DomainError('CONFLICT', ids.length === 1 ? `Sale ${ids[0]} was changed by another request; retry` : `One of sales ${ids.join(', ')} was changed by another request; retry`);
      }
    }
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
