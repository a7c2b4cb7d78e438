import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { DomainError } from '../domain/domain-error';
import { FeeSchedule } from '../domain/fees';
import { Cents } from '../domain/money';
import { reserveReleaseEffect } from '../domain/sale-ledger';
import { planSaleMove } from '../domain/sale-move';
import { SaleEvent } from '../domain/sale-status';
import { LedgerService } from '../ledger/ledger.service';
import { NotificationsService } from '../notifications/notifications.service';
import { chargeReference, ChargeResult, PAYMENT_PROVIDER, PaymentProvider } from '../providers/payment-provider.port';
import { SellerService } from '../seller/seller.service';
import { TransactionResponse } from './dto/sale.response';
import { SaleEntity } from './entities/sale.entity';
import { toTransaction } from './sale.presenter';
import { SaleHooks } from './sale-hooks';
import { SalesRepository } from './sales.repository';

/** Rows one scheduler pass handles per kind of work. */
const BATCH = 500;


const CHARGE_EVENTS: Record<ChargeResult['outcome'], SaleEvent> = {
  APPROVED: 'ACQUIRER_APPROVED',
  REFUSED: 'ACQUIRER_REFUSED',
  FAILED: 'PROCESSING_FAILED',
};

export interface SaleDueWorkSummary {
  expiredSales: number;
  releasedReserves: number;
  recoveredCharges: number;
  refundedCharges: number;
}

/** What a move needs besides the sale: the clock, and the seller's fees read before or inside the transaction. */
export interface MoveContext {
  now: Date;
  fees: FeeSchedule;
}

/**
 * Every change of a sale's status after its creation: provider events, the acquirer's answer, the
 * scheduled expiry and reserve release, and the recovery of card sales left between their two commits.
 * `move` is the only code that changes a sale's status, writes its ledger entries and its outbox row.
 */
@Injectable()
export class SaleTransitionsService {
  private readonly logger = new Logger(SaleTransitionsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sales: SalesRepository,
    private readonly sellers: SellerService,
    private readonly ledger: LedgerService,
    private readonly notifications: NotificationsService,
    @Inject(PAYMENT_PROVIDER) private readonly provider: PaymentProvider,
    private readonly config: AppConfig,
    private readonly hooks: SaleHooks,
  ) {}

  /**
   * The one way a sale changes status, inside the caller's transaction: the transition table decides the
   * next status (or refuses with INVALID_TRANSITION); the first payment fixes the fees; the balance effect
   * and the postback are written through the same manager. `extra` columns are saved with the move.
   */
  async move(manager: EntityManager, sale: SaleEntity, event: SaleEvent, context: MoveContext, extra: Partial<SaleEntity> = {}): Promise<SaleEntity> {
    const { now, fees: schedule } = context;
    const { next, columns, effect } = planSaleMove(sale, event, schedule, now);
    const changes: Partial<SaleEntity> & { status: typeof next } = { ...extra, ...columns, status: next };

    if (!(await this.sales.updateStatusIfCurrent(sale.id, sale.status, changes, manager))) {
      throw new DomainError('CONFLICT', `Sale ${sale.id} was changed by another request; retry`);
    }
    const moved: SaleEntity = { ...sale, ...changes };
    if (effect) {
      await this.ledger.post(manager, { sellerId: sale.sellerId, referenceType: 'SALE', referenceId: sale.id, effect });
    }
    if (sale.subscriptionId !== null) await this.hooks.subscriptions.saleMoved(manager, moved, sale.status, now);
    if (sale.postbackUrl) {
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
    return moved;
  }

  /**
   * The acquirer's answer to a card sale's charge, in the caller's transaction, on the sale locked by it.
   * EM_PROCESSAMENTO moves by the answer; a sale the recovery job already marked FALHA is paid by a late
   * approval (the FALHA retry of spec 3.1); a sale already resolved is left as it is.
   */
  async applyCharge(manager: EntityManager, sale: SaleEntity, charge: ChargeResult, context: MoveContext): Promise<SaleEntity> {
    const extra = { externalTransactionId: charge.externalId };
    if (sale.status === 'EM_PROCESSAMENTO') return this.move(manager, sale, CHARGE_EVENTS[charge.outcome], context, extra);
    if (sale.status === 'FALHA' && charge.outcome === 'APPROVED') return this.move(manager, sale, 'PAYMENT_CONFIRMED', context, extra);
    return sale;
  }

  /**
   * The acquirer's answer to a card sale's charge, in its own transaction (the second commit around
   * the charge): the sale as it is afterwards.
   */
  async applyChargeOutcome(saleId: number, charge: ChargeResult, fees: FeeSchedule, now = new Date()): Promise<SaleEntity> {
    return this.dataSource.transaction(async (manager) => {
      const sale = (await this.sales.findByIdForUpdate(saleId, manager)) as SaleEntity;
      return this.applyCharge(manager, sale, charge, { now, fees });
    });
  }

  /** A provider event (sandbox route): the move of spec 3.1 with its balance effect, in one transaction. */
  async applyEvent(sellerId: number, saleId: number, event: SaleEvent, now = new Date()): Promise<TransactionResponse> {
    const fees = await this.sellers.feeSchedule(sellerId);
    const moved = await this.dataSource.transaction(async (manager) => {
      const sale = await this.sales.findByIdForUpdate(saleId, manager);
      assertOwnedSale(sale, sellerId, saleId);
      const result = await this.move(manager, sale, event, { now, fees });
      return toTransaction(result, await this.sales.itemsOf(saleId, manager));
    });
    return moved;
  }

  /**
   * What the scheduled jobs do to sales at `now`, for one seller or (null) for all: PENDENTE PIX and
   * boletos past their expiry become CANCELADO; card reserves past their holding period go back to
   * available; card sales left EM_PROCESSAMENTO are resolved with the provider (by the real clock,
   * whatever `now` says: a caller cannot hurry the recovery of a charge that may still be on its way).
   */
  async runDueWork(now: Date, sellerId: number | null): Promise<SaleDueWorkSummary> {
    const expiredSales = await this.dataSource.transaction(async (manager) => {
      const ids = await this.sales.claimExpired(now, sellerId, BATCH, manager);
      const sales = await this.sales.findByIdsForUpdate(ids, manager);
      const schedules = await this.sellers.feeSchedulesOf([...new Set(sales.map((sale) => sale.sellerId))], manager);
      for (const sale of sales) await this.move(manager, sale, 'EXPIRED', { now, fees: schedules.get(sale.sellerId) as FeeSchedule });
      return sales.length;
    });
    const releasedReserves = await this.dataSource.transaction(async (manager) => {
      const ids = await this.sales.claimReservesDue(now, sellerId, BATCH, manager);
      const due = (await this.sales.findByIdsForUpdate(ids, manager)).filter((sale) => sale.reserveAmountCents);
      await this.sales.settleReserves(due.map((sale) => sale.id), now, manager);
      // One posting for the batch: its sellers' balances are locked in seller order, as a billing batch
      // locks them, so two instances (or this job and billing) cannot wait on each other's sellers.
      await this.ledger.postMany(
        manager,
        due.map((sale) => ({ sellerId: sale.sellerId, referenceType: 'SALE' as const, referenceId: sale.id, effect: reserveReleaseEffect(sale.reserveAmountCents as Cents) })),
      );
      return due.length;
    });
    const recoveredCharges = await this.recoverCharges(sellerId);
    const refundedCharges = await this.refundDue(null, new Date(), sellerId);
    return { expiredSales, releasedReserves, recoveredCharges, refundedCharges };
  }

  /**
   * Paid sales marked refund_due_at (a card charge the acquirer approved after its subscription was
   * cancelled or paused): each refunded by the acquirer outside any transaction (idempotent by
   * reference), then moved PAGO → ESTORNADO with its ledger posting and postback. Among `saleIds`, or
   * (null) every one due, of one seller or all: the recovery job finishes what a crash left between the
   * two. A refund that fails stays due and is tried again on the next pass.
   */
  async refundDue(saleIds: number[] | null, now: Date, sellerId: number | null = null): Promise<number> {
    const due = await this.sales.findRefundsDue(saleIds, sellerId, BATCH);
    let refunded = 0;
    for (const { id, sellerId: owner } of due) {
      try {
        await this.provider.refundCharge(chargeReference(id));
        const fees = await this.sellers.feeSchedule(owner);
        const done = await this.dataSource.transaction(async (manager) => {
          const sale = await this.sales.findByIdForUpdate(id, manager);
          if (!sale || sale.status !== 'PAGO' || !sale.refundDueAt) return false;
          await this.move(manager, sale, 'REFUNDED', { now, fees });
          return true;
        });
        if (done) refunded += 1;
      } catch (error) {
        this.logger.warn({ err: error, saleId: id }, 'Could not refund a charge approved after its subscription stopped; retrying later');
      }
    }
    return refunded;
  }

  /**
   * Card sales left EM_PROCESSAMENTO for longer than PROVIDER_RECOVERY_AFTER_SECONDS: each is claimed (a
   * short lease, so several instances never ask twice at once), and the provider is asked about its
   * reference outside any transaction: the charge it made is applied; when it has none, the reference
   * is voided first (a charge still on its way is then refused, never made) and the sale becomes FALHA.
   * Either way the sale ends with at most one charge, and its record in the right state.
   */
  async recoverCharges(sellerId: number | null): Promise<number> {
    const ids = await this.sales.claimStuckInProcessing(this.config.providerRecoveryAfterSeconds, sellerId, BATCH);
    let recovered = 0;
    for (const id of ids) {
      try {
        const reference = chargeReference(id);
        const charge = (await this.provider.findCharge(reference)) ?? (await this.provider.voidCharge(reference));
        if (await this.resolveStuckCharge(id, charge, new Date())) recovered += 1;
      } catch (error) {
        this.logger.warn({ err: error, saleId: id }, 'Could not resolve a card sale left in processing; retrying later');
      }
    }
    return recovered;
  }

  /** A card sale whose charge reference was voided before any charge (a renewal of a subscription stopped meanwhile): FALHA, if still EM_PROCESSAMENTO. */
  async failUncharged(saleId: number, now: Date): Promise<boolean> {
    return this.resolveStuckCharge(saleId, null, now);
  }

  private async resolveStuckCharge(saleId: number, charge: ChargeResult | null, now: Date): Promise<boolean> {
    const sellerId = (await this.sales.findById(saleId))?.sellerId;
    if (sellerId === undefined) return false;
    const fees = await this.sellers.feeSchedule(sellerId);
    return this.dataSource.transaction(async (manager) => {
      const sale = await this.sales.findByIdForUpdate(saleId, manager);
      if (!sale || sale.status !== 'EM_PROCESSAMENTO') return false;
      if (charge) await this.applyCharge(manager, sale, charge, { now, fees });
      else await this.move(manager, sale, 'PROCESSING_FAILED', { now, fees });
      return true;
    });
  }

  // ---- batches (the subscription billing) ----

  /**
   * Many moves in the caller's transaction, with the same result as `move` for each in turn (the
   * domain's planSaleMove decides each): the sales saved by conditional multi-row updates with their
   * status lines, the balance effects posted at once (LedgerService.postMany), the subscriptions told
   * (SaleHooks.salesMoved), the postbacks written in one statement. Throws CONFLICT, and so rolls the
   * caller back, if any sale was moved by someone else first. The sales as they are afterwards, in the
   * order given.
   */
  async moveMany(manager: EntityManager, moves: Array<{ sale: SaleEntity; event: SaleEvent; extra?: Partial<SaleEntity> }>, now: Date, schedules: ReadonlyMap<number, FeeSchedule>): Promise<SaleEntity[]> {
    if (moves.length === 0) return [];
    const planned = moves.map(({ sale, event, extra }) => {
      const plan = planSaleMove(sale, event, scheduleOf(schedules, sale.sellerId), now);
      const changes: Partial<SaleEntity> & { status: SaleEntity['status'] } = { ...extra, ...plan.columns, status: plan.next };
      return { sale, plan, changes, moved: { ...sale, ...changes } as SaleEntity };
    });
    const saved = await this.sales.updateStatusesIfCurrent(
      planned.map(({ sale, changes }) => ({ id: sale.id, expected: sale.status, changes })),
      manager,
    );
    const lost = planned.find(({ sale }) => !saved.has(sale.id));
    if (lost) throw new DomainError('CONFLICT', `Sale ${lost.sale.id} was changed by another request; retry`);
    await this.ledger.postMany(
      manager,
      planned.flatMap(({ sale, plan }) => (plan.effect ? [{ sellerId: sale.sellerId, referenceType: 'SALE' as const, referenceId: sale.id, effect: plan.effect }] : [])),
    );
    const charges = planned.filter(({ sale }) => sale.subscriptionId !== null);
    if (charges.length > 0) await this.hooks.subscriptions.salesMoved(manager, charges.map(({ sale, moved }) => ({ sale: moved, previous: sale.status })), now);
    const announced = planned.filter(({ sale }) => sale.postbackUrl);
    const items = await this.sales.itemsOfMany(announced.map(({ sale }) => sale.id), manager);
    await this.notifications.enqueueSaleStatusChanges(
      manager,
      announced.map(({ sale, moved }) => ({
        sellerId: sale.sellerId,
        resourceId: sale.id,
        url: sale.postbackUrl as string,
        previousStatus: sale.status,
        status: moved.status,
        changedAt: now,
        data: toTransaction(moved, items.get(sale.id) ?? []),
      })),
    );
    return planned.map(({ moved }) => moved);
  }

  /**
   * Card sales of a billing batch committed EM_PROCESSAMENTO whose charges are still to be made, kept
   * from the recovery job (its lease, renewed by the batch while it charges): a batch sends its charges
   * `concurrency` at a time, so its last ones may go out after PROVIDER_RECOVERY_AFTER_SECONDS, and the
   * recovery would void them first (the charge then refused, a good card's renewal failed). Through the
   * caller's manager when given (the transaction that opens them).
   */
  holdFromRecovery(saleIds: number[], manager?: EntityManager): Promise<void> {
    return this.sales.holdFromRecovery(saleIds, manager);
  }

  /** The batch's charges made (or given up): its sales left EM_PROCESSAMENTO go back to the recovery job at once. */
  releaseFromRecoveryHold(saleIds: number[]): Promise<void> {
    return this.sales.releaseFromRecoveryHold(saleIds);
  }

  /**
   * The acquirer's answers to many card charges in one transaction (the second commit around a billing
   * batch's charges), with the same result as applyChargeOutcome for each: the sales locked, those
   * EM_PROCESSAMENTO moved by their answers at once (moveMany), any other one by applyCharge (a sale the
   * recovery job already marked FALHA is paid by a late approval; one already resolved is left). If it
   * fails nothing is applied, and the caller may apply the answers one by one.
   */
  async applyChargeOutcomes(outcomes: Array<{ saleId: number; charge: ChargeResult }>, schedules: ReadonlyMap<number, FeeSchedule>, now: Date): Promise<SaleEntity[]> {
    if (outcomes.length === 0) return [];
    const charges = new Map(outcomes.map((outcome) => [outcome.saleId, outcome.charge]));
    return this.dataSource.transaction(async (manager) => {
      const sales = await this.sales.findByIdsForUpdate([...charges.keys()], manager);
      const processing = sales.filter((sale) => sale.status === 'EM_PROCESSAMENTO');
      const moved = await this.moveMany(
        manager,
        processing.map((sale) => {
          const charge = charges.get(sale.id) as ChargeResult;
          return { sale, event: CHARGE_EVENTS[charge.outcome], extra: { externalTransactionId: charge.externalId } };
        }),
        now,
        schedules,
      );
      const others: SaleEntity[] = [];
      for (const sale of sales.filter((s) => s.status !== 'EM_PROCESSAMENTO')) {
        others.push(await this.applyCharge(manager, sale, charges.get(sale.id) as ChargeResult, { now, fees: scheduleOf(schedules, sale.sellerId) }));
      }
      return [...moved, ...others];
    });
  }
}

export function assertOwnedSale<T extends Pick<SaleEntity, 'sellerId'>>(sale: T | null, sellerId: number, saleId: number): asserts sale is T {
  if (!sale) throw new DomainError('NOT_FOUND', `Sale ${saleId} not found`);
  if (sale.sellerId !== sellerId) throw new DomainError('FORBIDDEN', `Sale ${saleId} belongs to another account`);
}

function scheduleOf(schedules: ReadonlyMap<number, FeeSchedule>, sellerId: number): FeeSchedule {
  const schedule = schedules.get(sellerId);
  if (!schedule) throw new Error(`No fee schedule read for seller ${sellerId}`);
  return schedule;
}
