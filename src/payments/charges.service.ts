import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { DomainError } from '../domain/domain-error';
import { FeeSchedule } from '../domain/fees';
import { Cents } from '../domain/money';
import { reserveReleaseEffect } from '../domain/sale-ledger';
import { DisputeSaleEvent, SaleEvent, SaleStatus } from '../domain/sale-status';
import { LedgerService } from '../ledger/ledger.service';
import { chargeReference, CardProvider, ChargeResult } from '../providers/card-provider.port';
import { ProviderRegistry } from '../providers/provider-registry';
import { ProviderIntake } from '../intake/provider-intake.service';
import { Janitor } from '../janitor/janitor.service';
import { TransactionResponse } from '../sales/dto/sale.response';
import { SaleEntity } from '../sales/entities/sale.entity';
import { toTransaction } from '../sales/sale.presenter';
import { assertOwnedSale, assertSaleExists } from '../sales/sales.service';
import { SaleLookupItem, SalesRepository, StatusChangeAuthor } from '../sales/sales.repository';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';
import { MoneyPipeline, SaleMoveRequest } from './money-pipeline';
import { sealCardToken } from './stored-card-token';
import { callProvider } from '../providers/provider-operation';

/** Rows one scheduler pass handles per kind of work. */
const BATCH = 500;

/** The sale event of each answer; none for PENDING (the acquirer has not decided: the sale stays as it is). */
const CHARGE_EVENTS: Record<ChargeResult['outcome'], SaleEvent | null> = {
  APPROVED: 'ACQUIRER_APPROVED',
  REFUSED: 'ACQUIRER_REFUSED',
  FAILED: 'PROCESSING_FAILED',
  PENDING: null,
};

/** What a sale keeps of its acquirer's answer: the acquirer's id for the charge, its own code and text, what it reported captured. */
function answerColumns(charge: ChargeResult): Partial<SaleEntity> {
  return {
    // A request the acquirer refused outright made no payment: it has no id.
    ...(charge.externalId ? { externalTransactionId: charge.externalId } : {}),
    ...(charge.acquirerReturn ? { acquirerReturnCode: charge.acquirerReturn.code, acquirerReturnMessage: charge.acquirerReturn.message } : {}),
    ...(charge.capturedCents !== undefined && charge.capturedCents !== null ? { providerAmountCents: charge.capturedCents } : {}),
  };
}

/**
 * The move an acquirer's answer makes of a card sale: EM_PROCESSAMENTO by the answer (FALHA when
 * nothing was charged; none while the acquirer has not decided); FALHA paid by a late approval (the
 * FALHA retry of spec 3.1); none otherwise.
 */
function answerMove(sale: SaleEntity, charge: ChargeResult | null, items: SaleLookupItem[] | undefined): SaleMoveRequest[] {
  if (sale.status === 'EM_PROCESSAMENTO') {
    if (!charge) return [{ sale, event: 'PROCESSING_FAILED', items }];
    const event = CHARGE_EVENTS[charge.outcome];
    return event ? [{ sale, event, extra: answerColumns(charge), items }] : [];
  }
  if (sale.status === 'FALHA' && charge?.outcome === 'APPROVED') {
    return [{ sale, event: 'PAYMENT_CONFIRMED', extra: answerColumns(charge), items }];
  }
  return [];
}

/**
 * What the operator may not record on a sale's word (422 NOT_SUPPORTED): a lost MED on a sale a real PSP
 * holds. Losing a MED there is the PSP returning the Pix to the payer, which the gateway books from the
 * PSP's own evidence (its notification or reconciliation: RefundsService.applyPspReturn) as the seller's
 * loss; booked first on the operator's word, it would be taken from the seller a second time when that
 * return is seen, and until then the ledger would hold money out of the PSP that the PSP has not shown
 * leaving (ledger:verify). A MED's opening and a MED won move no money at the PSP and are recorded.
 */
function assertOperatorMayRecord(sale: SaleEntity, event: DisputeSaleEvent): void {
  const psp = sale.paymentMethod === 'PIX' ? sale.provider : null;
  if (event === 'MED_LOST' && psp !== null && psp !== 'sandbox') {
    throw new DomainError(
      'NOT_SUPPORTED',
      `Sale ${sale.id} is held by the PSP ${psp}: a lost MED is its return of the Pix, booked from the PSP's own notification or reconciliation ` +
        '(the sale then shows a refund initiated by the PSP); recording it as well would take it from the seller twice',
    );
  }
}

export interface SaleDueWorkSummary {
  expiredSales: number;
  releasedReserves: number;
}

/**
 * What the acquirer said of a card sale's charge: its answer, or null when its reference was voided
 * before any charge was made (nothing charged: the sale fails).
 */
export interface ChargeOutcome {
  saleId: number;
  charge: ChargeResult | null;
  /** The sale's items when the caller holds them (its postback need not read them). */
  items?: SaleLookupItem[];
  /** The sale as the caller wrote it, when it holds it (applyOutcomes then need not read it first). */
  sale?: SaleEntity;
}

/**
 * Everything that happens to sales after their creation, through the money pipeline: the acquirer's
 * answers to card charges (the second commit around a charge, for a sale of the API or a billing
 * batch alike), provider events (the sandbox route) and the disputes the operator records, the
 * scheduled expiry and reserve release, the recovery of card sales left between their two commits, and
 * the refunds of charges approved after their subscription stopped. Provider calls are made outside
 * any transaction.
 */
@Injectable()
export class ChargesService implements OnModuleInit {
  private readonly logger = new Logger(ChargesService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sales: SalesRepository,
    private readonly pipeline: MoneyPipeline,
    private readonly ledger: LedgerService,
    private readonly providers: ProviderRegistry,
    private readonly config: AppConfig,
    private readonly intake: ProviderIntake,
    private readonly janitor: Janitor,
    private readonly subscriptions: SubscriptionsRepository,
  ) {}

  /**
   * An acquirer's notification of a card charge (`card-charge`: our reference, the sale's id), kept by the
   * intake: the charge is asked of the sale's own acquirer (findCharge) and its answer applied as the
   * charge's answer would have been. A reference that is not a card sale of that provider changes nothing.
   */
  onModuleInit(): void {
    this.intake.handle('card-charge', (provider, reference) => this.settleNotifiedCharge(provider, reference));
    // Left pending: card sales between their two commits, and charges approved after their subscription stopped.
    this.janitor.register({
      name: 'card charges',
      settle: async (sellerId, now) => ({ recoveredCharges: await this.recoverCharges(sellerId), refundedCharges: await this.refundDue(null, now, sellerId) }),
    });
  }

  private async settleNotifiedCharge(provider: string, reference: string): Promise<void> {
    const saleId = /^[1-9][0-9]{0,9}$/.test(reference) ? Number(reference) : null;
    const sale = saleId === null ? null : await this.sales.findById(saleId);
    if (!sale || sale.provider !== provider || chargeReference(sale.id) !== reference || (sale.paymentMethod !== 'CREDIT_CARD' && sale.paymentMethod !== 'DEBIT_CARD')) {
      this.logger.warn({ provider, reference }, 'A notification named a card charge that is not one of this provider’s sales; nothing was done');
      return;
    }
    const charge = await this.providers.card(provider, `Sale ${sale.id}`).findCharge(reference);
    if (charge) await this.applyOutcomesOrEach([{ saleId: sale.id, charge }], new Date());
  }

  /**
   * The acquirer's answers to card charges, in one transaction on the sales locked by it: EM_PROCESSAMENTO
   * moves by its answer (FALHA when nothing was charged); a sale the recovery job already marked FALHA is
   * paid by a late approval (the FALHA retry of spec 3.1); a sale already resolved is left as it is.
   * `within` runs last in the same transaction with the sales as they are then (the API saves its answer
   * for replays there). The sales as they are afterwards, by id.
   *
   * One answer whose caller holds its sale as written EM_PROCESSAMENTO (the API's card sale, without
   * subscription) is planned from that sale, without reading it under lock: the move is written only if
   * the sale is still EM_PROCESSAMENTO (the pipeline's conditional write), and if it is not, nothing of
   * the unit is kept and the answer is applied again to the sale as read under lock. With nothing to run
   * in its transaction (no `within`), that move is one statement without a transaction (writeAlone).
   */
  async applyOutcomes<T = void>(
    outcomes: ChargeOutcome[],
    now: Date,
    schedules?: ReadonlyMap<number, FeeSchedule>,
    within?: (manager: EntityManager, sales: Map<number, SaleEntity>) => Promise<T>,
  ): Promise<{ sales: Map<number, SaleEntity>; moved: number; result: T | undefined }> {
    const charges = new Map(outcomes.map((outcome) => [outcome.saleId, outcome.charge]));
    const items = new Map(outcomes.flatMap((outcome) => (outcome.items ? [[outcome.saleId, outcome.items] as const] : [])));
    const apply = (read: (manager: EntityManager) => Promise<SaleEntity[]>) =>
      this.dataSource.transaction(async (manager) => {
        const locked = await read(manager);
        const moves = locked.flatMap((sale) => answerMove(sale, charges.get(sale.id) ?? null, items.get(sale.id)));
        const done = await this.pipeline.write(manager, { sales: moves }, now, schedules);
        await this.keepCardTokens([...done.sales.values()], charges, manager);
        const sales = new Map(locked.map((sale) => [sale.id, done.sales.get(sale.id) ?? sale]));
        return { sales, moved: done.sales.size, result: within ? await within(manager, sales) : undefined };
      });
    const [only] = outcomes;
    // Only a sale without subscription: the pipeline locks a sale's subscription before writing the
    // sale, the reverse of every path that reads the sale under lock first (a cancel settling its charge
    // in flight, a provider event), which could then deadlock with this one.
    if (outcomes.length === 1 && only.sale?.status === 'EM_PROCESSAMENTO' && only.sale.subscriptionId === null) {
      const held = only.sale;
      if (!within && schedules) {
        // Nothing else to do in its transaction: the move in one statement, when it can be.
        const [move] = answerMove(held, only.charge, only.items);
        if (!move) return { sales: new Map([[held.id, held]]), moved: 0, result: undefined };
        const done = await this.pipeline.writeAlone(this.dataSource.manager, { sales: [move] }, now, schedules);
        if (done) return { sales: done.sales, moved: 1, result: undefined };
      }
      try {
        return await apply(() => Promise.resolve([held]));
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'CONFLICT')) throw error;
      }
    }
    return apply((manager) => this.sales.findByIdsForUpdate([...charges.keys()], manager));
  }

  /**
   * The card tokens the acquirer answered with the charges of subscriptions that moved in this unit (a
   * first charge that saved its card, a renewal refused with the issuer's new card), sealed on their
   * subscriptions: each answer's token is written once, with its sale's move.
   */
  private async keepCardTokens(moved: SaleEntity[], charges: ReadonlyMap<number, ChargeResult | null>, manager: EntityManager): Promise<void> {
    const tokens = moved.flatMap((sale) => {
      const charge = charges.get(sale.id);
      const token = charge?.cardToken;
      return token && sale.subscriptionId !== null ? [{ subscriptionId: sale.subscriptionId, sealed: sealCardToken(token, this.config), card: charge?.replacedCard ?? null }] : [];
    });
    await this.subscriptions.saveSealedCardTokens(tokens, manager);
  }

  /**
   * `applyOutcomes` for a batch, or, if the batch cannot be saved, for each outcome alone (one that
   * still fails is left EM_PROCESSAMENTO to the recovery job, which asks the acquirer again). How many
   * sales moved.
   */
  async applyOutcomesOrEach(outcomes: ChargeOutcome[], now: Date, schedules?: ReadonlyMap<number, FeeSchedule>): Promise<number> {
    if (outcomes.length === 0) return 0;
    try {
      return (await this.applyOutcomes(outcomes, now, schedules)).moved;
    } catch (error) {
      if (outcomes.length === 1) {
        this.logger.error({ err: error, saleId: outcomes[0].saleId }, 'A charge answered but its outcome was not saved; the recovery job will apply it');
        return 0;
      }
      this.logger.warn({ err: error, charges: outcomes.length }, 'Applying a batch of charge outcomes failed; applying them one by one');
    }
    let moved = 0;
    for (const outcome of outcomes) moved += await this.applyOutcomesOrEach([outcome], now, schedules);
    return moved;
  }

  /** A provider event on the seller's sale (the sandbox route): moveByEvent's move, the sale answered as its lookup shows it. */
  async applyEvent(sellerId: number, saleId: number, event: SaleEvent, now = new Date()): Promise<TransactionResponse> {
    const { sale, items } = await this.moveByEvent(saleId, event, { sellerId }, now);
    return toTransaction(sale, items);
  }

  /**
   * A dispute event the operator records on any seller's sale, whichever provider holds it (an acquirer's
   * chargeback reported in its back office or by file, a MED a PSP notified, until each is integrated):
   * the same move as the sandbox route's (moveByEvent), its status line signed OPERATOR with `reason`,
   * and a log line saying who moved what and why once it is committed. The status before and after.
   * A lost MED on a sale a real PSP holds is refused (assertOperatorMayRecord).
   */
  async recordDisputeEvent(saleId: number, event: DisputeSaleEvent, reason: string, now = new Date()): Promise<{ previousStatus: SaleStatus; status: SaleStatus }> {
    const author = { recordedBy: 'OPERATOR' as const, reason };
    const admit = (sale: SaleEntity) => assertOperatorMayRecord(sale, event);
    const { previousStatus, sale } = await this.moveByEvent(saleId, event, { author, admit }, now);
    this.logger.log(
      { who: 'operator', saleId, sellerId: sale.sellerId, event, reason, previousStatus, status: sale.status },
      `The operator recorded ${event} on sale ${saleId}: ${previousStatus} → ${sale.status}`,
    );
    return { previousStatus, status: sale.status };
  }

  /**
   * An event on a sale, in one transaction: the move of spec 3.1 through the money pipeline (its balance
   * effect, its postbacks), on the sale locked. `sellerId`: only that seller's sale (403 another's);
   * `admit`: throws to refuse the move on the sale as locked; `author`: who recorded the move, signed on
   * its status line. 404 unknown, 409 a move spec 3.1 refuses.
   */
  private moveByEvent(
    saleId: number,
    event: SaleEvent,
    scope: { sellerId?: number; admit?: (sale: SaleEntity) => void; author?: StatusChangeAuthor },
    now: Date,
  ): Promise<{ previousStatus: SaleStatus; sale: SaleEntity; items: SaleLookupItem[] }> {
    return this.dataSource.transaction(async (manager) => {
      const [sale] = await this.sales.findByIdsForUpdate([saleId], manager);
      if (scope.sellerId === undefined) assertSaleExists(sale ?? null, saleId);
      else assertOwnedSale(sale ?? null, scope.sellerId, saleId);
      scope.admit?.(sale);
      const done = await this.pipeline.write(manager, { sales: [{ sale, event, author: scope.author }] }, now);
      return { previousStatus: sale.status, sale: done.sales.get(saleId) as SaleEntity, items: await this.sales.itemsOf(saleId, manager) };
    });
  }

  /**
   * What the scheduled jobs do to sales at `now`, for one seller or (null) for all: PENDENTE PIX and
   * boletos past their expiry become CANCELADO; card reserves past their holding period go back to
   * available; card sales left EM_PROCESSAMENTO are resolved with the provider (by the real clock,
   * whatever `now` says: a caller cannot hurry the recovery of a charge that may still be on its way);
   * refunds due are made.
   */
  async runDueWork(now: Date, sellerId: number | null): Promise<SaleDueWorkSummary> {
    const expiredSales = await this.dataSource.transaction(async (manager) => {
      const ids = await this.sales.claimExpired(now, sellerId, BATCH, manager);
      const sales = await this.sales.findByIdsForUpdate(ids, manager);
      await this.pipeline.write(manager, { sales: sales.map((sale) => ({ sale, event: 'EXPIRED' as const })) }, now);
      return sales.length;
    });
    const releasedReserves = await this.dataSource.transaction(async (manager) => {
      const ids = await this.sales.claimReservesDue(now, sellerId, BATCH, manager);
      const due = (await this.sales.findByIdsForUpdate(ids, manager)).filter((sale) => sale.reserveAmountCents);
      await this.sales.settleReserves(
        due.map((sale) => sale.id),
        now,
        manager,
      );
      await this.ledger.post(
        manager,
        due.map((sale) => ({ sellerId: sale.sellerId, referenceType: 'SALE' as const, referenceId: sale.id, effect: reserveReleaseEffect(sale.reserveAmountCents as Cents), provider: sale.provider })),
      );
      return due.length;
    });
    return { expiredSales, releasedReserves };
  }

  /**
   * Paid sales marked refund_due_at (a card charge the acquirer approved after its subscription was
   * cancelled or paused): each refunded by the acquirer outside any transaction (idempotent by
   * reference), then all moved PAGO → ESTORNADO with their ledger postings and postbacks in one
   * transaction. Among `saleIds`, or (null) every one due, of one seller or all: the recovery job
   * finishes what a crash left between the two. A refund that fails stays due for the next pass.
   */
  async refundDue(saleIds: number[] | null, now: Date, sellerId: number | null = null): Promise<number> {
    const due = await this.sales.findRefundsDue(saleIds, sellerId, BATCH, this.providers.configuredNames());
    const refunded: number[] = [];
    for (const sale of due) {
      // A provider operation (src/providers/provider-operation.ts): a refusal or no answer leaves it due for the next pass.
      const answered = await callProvider(
        {
          name: 'refund of a charge approved after its subscription stopped',
          provider: ({ provider }: typeof sale) => provider,
          reference: ({ id }: typeof sale) => `STOP${id}`,
          call: ({ id, provider, amountCents }: typeof sale) => this.providers.card(provider, `Sale ${id}`).refundCharge({ reference: chargeReference(id), refundId: `STOP${id}`, amountCents }),
        },
        sale,
      );
      // Only a refund made: one the acquirer took without making yet (PENDING: Cielo's void of a sale with another processing) stays due.
      if (answered.kind === 'answered' && answered.answer.status === 'COMPLETED') refunded.push(sale.id);
    }
    if (refunded.length === 0) return 0;
    return this.dataSource.transaction(async (manager) => {
      const sales = (await this.sales.findByIdsForUpdate(refunded, manager)).filter((sale) => sale.status === 'PAGO' && sale.refundDueAt);
      await this.pipeline.write(manager, { sales: sales.map((sale) => ({ sale, event: 'REFUNDED' as const })) }, now);
      return sales.length;
    });
  }

  /**
   * Card sales left EM_PROCESSAMENTO for longer than PROVIDER_RECOVERY_AFTER_SECONDS: claimed under the
   * recovery lease (so several instances never ask twice at once), the provider asked about each
   * reference outside any transaction: the charge it made is applied; when it has none, the reference is
   * voided first (a charge still on its way is then refused, never made) and the sale becomes FALHA.
   * Either way each sale ends with at most one charge, its record in the right state.
   */
  async recoverCharges(sellerId: number | null): Promise<number> {
    const stuck = await this.sales.claimStuckInProcessing(this.config.providerRecoveryAfterSeconds, sellerId, BATCH, this.providers.configuredNames());
    // Never a charge sent again: the charge made is found by our reference, or none can come any more
    // (voidCharge: closed at once where the provider can, or, at an acquirer without idempotency, none
    // found once the sale was sent long enough ago; until then it throws and the sale waits).
    const outcomes = await this.askProvider(stuck, (acquirer, reference, sentAt) => acquirer.findCharge(reference).then((charge) => charge ?? acquirer.voidCharge(reference, sentAt)));
    return this.applyOutcomesOrEach(outcomes, new Date());
  }

  /**
   * Card sales whose subscription was stopped while their charge was between its two commits: each
   * reference voided outside any transaction (a charge still on its way is then refused and the sale
   * fails; a charge the acquirer made first is applied, which marks it to be refunded), then refunded.
   * What fails here is left to the recovery job and to refundDue's pass, which settle it the same way.
   */
  async settleChargesOfStopped(subscriptionIds: number[], now: Date): Promise<void> {
    const inFlight = await this.sales.inProcessingOfSubscriptions(subscriptionIds);
    if (inFlight.length === 0) return;
    const outcomes = await this.askProvider(inFlight, (acquirer, reference, sentAt) => acquirer.voidCharge(reference, sentAt));
    await this.applyOutcomesOrEach(outcomes, now);
    await this.refundDue(inFlight.map((sale) => sale.id), now).catch((error: unknown) => this.logger.warn({ err: error }, 'Refunds of charges approved after their subscription stopped are left to the recovery job'));
  }

  /**
   * The answer of each sale's own acquirer about its charge reference (outside any transaction); a sale
   * whose question fails (or whose acquirer is not configured any more) is left for later.
   */
  private async askProvider(
    sales: Array<{ id: number; provider: string; sentAt: Date }>,
    ask: (acquirer: CardProvider, reference: string, sentAt: Date) => Promise<ChargeResult | null>,
  ): Promise<ChargeOutcome[]> {
    const outcomes: ChargeOutcome[] = [];
    for (const { id: saleId, provider, sentAt } of sales) {
      try {
        outcomes.push({ saleId, charge: await ask(this.providers.card(provider, `Sale ${saleId}`), chargeReference(saleId), sentAt) });
      } catch (error) {
        this.logger.warn({ err: error, saleId }, 'Could not settle a card charge with the provider; retrying later');
      }
    }
    return outcomes;
  }
}
