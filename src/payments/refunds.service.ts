import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { Janitor, SettledCounts } from '../janitor/janitor.service';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { addDays } from '../domain/dates';
import { DomainError } from '../domain/domain-error';
import { Cents, cents } from '../domain/money';
import { pspReturnEffect, refundFailedEffect, refundRequestedEffect, refundSettledEffect, refundSplit } from '../domain/refund-ledger';
import { receivableOf } from '../domain/sale-ledger';
import { refundsCoverSale } from '../domain/sale-move';
import { IdempotencyService, PriorUse } from '../idempotency/idempotency.service';
import { LedgerService } from '../ledger/ledger.service';
import { NotificationsService } from '../notifications/notifications.service';
import { CardRefundAnswer, chargeReference } from '../providers/card-provider.port';
import { ProviderOperation, runOperation } from '../providers/provider-operation';
import { ProviderRegistry } from '../providers/provider-registry';
import { PixReturn } from '../providers/pix-provider.port';
import { SaleEntity } from '../sales/entities/sale.entity';
import { assertOwnedSale } from '../sales/sales.service';
import { SalesRepository } from '../sales/sales.repository';
import { RefundListResponse, RefundResponse } from './dto/refund.dto';
import { MoneyPipeline } from './money-pipeline';
import { RefundRow, RefundsRepository } from './refunds.repository';

/** How long after its payment a sale can be refunded: PIX by the BCB's rule (a return within 90 days), cards by ours. */
export const REFUND_WINDOW_DAYS = { PIX: 90, CARD: 180 } as const;
/** A refund left PENDING this long is sent again (when its request never got through) or asked about. */
const RETRY_AFTER_SECONDS = 30;
const BATCH = 200;

export interface CreatedRefund {
  status: number;
  body: RefundResponse;
  replayed: boolean;
}

export function toRefundResponse(refund: RefundRow): RefundResponse {
  return {
    id: refund.id,
    saleId: refund.saleId,
    amount: refund.amountCents,
    status: refund.status,
    failureReason: refund.failureReason,
    initiatedBy: refund.initiatedBy,
    nature: refund.nature,
    createdAt: refund.createdAt.toISOString(),
    completedAt: refund.completedAt?.toISOString() ?? null,
  };
}

/**
 * Refunds sellers make (POST /api/sales/{id}/refunds), full or partial, for PIX (a return of the Pix at
 * the PSP) and cards (a refund by the acquirer), in two commits around the provider's call: (1) under
 * the sale's lock, the refund checked against what is left, written PENDING, the seller's part taken
 * from its available balance (REFUND_REQUESTED); (2) outside any transaction, the provider asked, idempotent
 * by the refund's own id; (3) its outcome applied: COMPLETED books the money out of the provider
 * (REFUND_SETTLED) and moves the sale to ESTORNADO once refunds cover it; FAILED gives back exactly what
 * (1) took. A PIX return's outcome may come later, by the PSP's notification or by polling. Each
 * refund's change is a signed postback (refund.status_changed).
 */
@Injectable()
export class RefundsService implements OnModuleInit {
  private readonly logger = new Logger(RefundsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sales: SalesRepository,
    private readonly refunds: RefundsRepository,
    private readonly pipeline: MoneyPipeline,
    private readonly ledger: LedgerService,
    private readonly idempotency: IdempotencyService,
    private readonly notifications: NotificationsService,
    private readonly providers: ProviderRegistry,
    private readonly janitor: Janitor,
  ) {}

  /** Left pending: refunds whose provider call did not answer, sent again (the provider makes each once) or asked about. */
  onModuleInit(): void {
    this.janitor.register({ name: 'refunds', settle: async (sellerId): Promise<SettledCounts> => (sellerId === null ? { refundsChecked: await this.retryPending() } : {}) });
  }

  async request(sellerId: number, saleId: number, amount: number | undefined, idempotencyKey: string | undefined): Promise<CreatedRefund> {
    const idempotent = this.idempotency.prepare(sellerId, `POST /api/sales/${saleId}/refunds`, idempotencyKey, { amount: amount ?? null });
    const prior = await this.idempotency.priorUse(idempotent);
    if (prior) return this.answerPriorUse(prior);
    const now = new Date();
    const created = await this.dataSource.transaction(async (manager) => {
      const claimed = await this.idempotency.claim(manager, idempotent);
      if (claimed) return claimed;
      const [sale] = await this.sales.findByIdsForUpdate([saleId], manager);
      assertOwnedSale(sale ?? null, sellerId, saleId);
      const amountCents = refundableAmount(sale, amount, now);
      // Refunded by the provider that holds the sale, or refused (409) where it is not configured.
      if (sale.paymentMethod === 'PIX') this.providers.pix(sale.provider, `Sale ${saleId}`);
      else this.providers.card(sale.provider, `Sale ${saleId}`);
      const debitedBefore = await this.refunds.debitedCents(saleId, manager);
      const split = refundSplit({ amountCents: sale.amountCents, netAmountCents: sale.netAmountCents ?? cents(0) }, sale.refundedCents, amountCents, debitedBefore);
      const refund = await this.refunds.insert(
        { saleId, sellerId, amountCents, ...split, provider: sale.provider },
        manager,
      );
      await this.sales.addRefunded(saleId, amountCents, manager);
      await this.ledger.post(manager, [{ sellerId, referenceType: 'SALE', referenceId: saleId, effect: refundRequestedEffect(split), provider: sale.provider }]);
      await this.announce(manager, sale, refund, null, now);
      await this.idempotency.attachResource(manager, idempotent, refund.id);
      return refund;
    });
    if ('kind' in created) return this.answerPriorUse(created);
    await this.dispatch(created);
    const body = toRefundResponse((await this.refunds.findById(created.id)) ?? created);
    await this.dataSource.transaction((manager) => this.idempotency.saveResponse(manager, idempotent, 201, body));
    return { status: 201, body, replayed: false };
  }

  /** The seller's refund by its id (404 unknown, 403 another seller's). */
  async findOwned(sellerId: number, refundId: number): Promise<RefundRow> {
    const refund = await this.refunds.findById(refundId);
    if (!refund) throw new DomainError('NOT_FOUND', `Refund ${refundId} not found`);
    if (refund.sellerId !== sellerId) throw new DomainError('FORBIDDEN', `Refund ${refundId} belongs to another account`);
    return refund;
  }

  async list(sellerId: number, saleId: number): Promise<RefundListResponse> {
    const sale = await this.sales.findById(saleId);
    assertOwnedSale(sale, sellerId, saleId);
    const refunds = await this.refunds.listOfSale(saleId);
    return {
      refunds: refunds.map(toRefundResponse),
      refundedAmount: sale.refundedCents,
      refundableAmount: sale.status === 'PAGO' ? Math.max(0, sale.amountCents - sale.refundedCents) : 0,
    };
  }

  /**
   * A refund at the sale's provider (the skeleton of src/providers/provider-operation.ts): asked under the
   * refund's own id (the provider makes it once), outside any transaction; a PIX return's answer applied
   * (applyReturn), a card refund's recorded (PENDING: asked again) or finished; a refusal fails it (the
   * money back where the request took it from). No answer leaves it PENDING for the janitor's pass, which
   * asks again under the same id.
   */
  private readonly refundAtProvider: ProviderOperation<{ refund: RefundRow; sale: SaleEntity }, PixReturn | CardRefundAnswer> = {
    name: 'refund',
    provider: ({ sale }) => sale.provider,
    reference: ({ refund }) => refund.providerRefundId,
    call: ({ refund, sale }) =>
      sale.paymentMethod === 'PIX'
        ? this.providers.pix(sale.provider, `Sale ${sale.id}`).requestReturn(sale.pixEndToEndId ?? sale.externalTransactionId ?? String(sale.id), refund.providerRefundId, refund.amountCents, `Estorno da venda ${sale.id}`)
        : this.refundCard(refund, sale),
    apply: async ({ refund }, answer) => {
      if ('returnId' in answer) await this.applyReturn(refund, answer);
      // A card refund pending (taken, or waiting its turn) is asked again later; when it was really sent is recorded by onSend.
      else if (answer.status === 'PENDING') await this.refunds.markWaiting(refund.id);
      else await this.finish(refund.id, 'COMPLETED', answer.externalId, null);
    },
    fail: ({ refund }, reason) => this.finish(refund.id, 'FAILED', null, reason),
  };

  /**
   * A card refund asked of the sale's acquirer with what one without idempotency on refunds (Cielo's void)
   * needs to make it at most once and in turn: the charge's id there, what the sale's completed refunds gave
   * back before, whether an older refund of the sale is pending, when one was last sent or finished, and when
   * this one was last sent (recorded as the acquirer is about to be sent it).
   */
  private async refundCard(refund: RefundRow, sale: SaleEntity): Promise<CardRefundAnswer> {
    const siblings = await this.refunds.siblingsOf(sale.id, refund.id);
    return this.providers.card(sale.provider, `Sale ${sale.id}`).refundCharge({
      reference: chargeReference(sale.id),
      refundId: refund.providerRefundId,
      amountCents: refund.amountCents,
      externalId: sale.externalTransactionId,
      refundedBeforeCents: sale.refundCompletedCents,
      ...siblings,
      sentAt: refund.requestedAt,
      onSend: () => this.refunds.markSent(refund.id, refund.requestedAt),
    });
  }

  /** A PENDING refund sent to its sale's provider, and what comes of it applied (refundAtProvider). */
  async dispatch(refund: RefundRow): Promise<void> {
    const sale = await this.sales.findById(refund.saleId);
    if (sale) await runOperation(this.refundAtProvider, { refund, sale });
  }

  /** What the PSP says of a PIX return (its answer, its notification, or polling). */
  async applyReturn(refund: RefundRow, answer: PixReturn): Promise<void> {
    if (answer.status === 'EM_PROCESSAMENTO') await this.refunds.markRequested(refund.id, answer.returnId);
    else await this.finish(refund.id, answer.status === 'DEVOLVIDO' ? 'COMPLETED' : 'FAILED', answer.returnId, answer.status === 'NAO_REALIZADO' ? (answer.reason ?? 'The PSP did not make the return') : null);
  }

  /** A PIX return by its id at the PSP, as the PSP reports it with its Pix (a notification or reconciliation). */
  async applyReturnById(answer: PixReturn): Promise<void> {
    const refund = await this.refunds.findByProviderId(answer.id);
    if (refund && refund.status === 'PENDING') await this.applyReturn(refund, answer);
  }

  /**
   * The outcome of a PENDING refund, once (a second outcome finds it finished and changes nothing), in
   * one transaction under the sale's lock: its ledger posting, the sale to ESTORNADO when its completed
   * refunds cover it (a sale in a dispute stays in it: the dispute's close moves it on), the postbacks.
   * A refund failing gives back exactly what its request took, to available, whatever the sale's state:
   * a dispute open on the sale covers only what its opening recorded (domain/sale-move.ts
   * DISPUTE_STEPS), which left this refund out.
   */
  async finish(refundId: number, status: 'COMPLETED' | 'FAILED', returnId: string | null, reason: string | null, now = new Date()): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const saleId = (await manager.query(`SELECT sale_id FROM sale_refunds WHERE id = $1`, [refundId]))[0]?.sale_id as number | undefined;
      if (saleId === undefined) return;
      const [sale] = await this.sales.findByIdsForUpdate([saleId], manager);
      const refund = await this.refunds.findForUpdate(refundId, manager);
      if (!refund || refund.status !== 'PENDING') return;
      await this.refunds.finish(refundId, status, returnId, reason, manager);
      const finished: RefundRow = { ...refund, status, returnId: returnId ?? refund.returnId, failureReason: reason, completedAt: now, updatedAt: now };
      if (status === 'FAILED') {
        await this.sales.addRefunded(saleId, -refund.amountCents, manager);
        await this.ledger.post(manager, [{ sellerId: sale.sellerId, referenceType: 'SALE', referenceId: saleId, effect: refundFailedEffect(refund), provider: sale.provider }]);
        await this.announce(manager, sale, finished, 'PENDING', now);
        return;
      }
      await this.ledger.post(manager, [{ sellerId: sale.sellerId, referenceType: 'SALE', referenceId: saleId, effect: refundSettledEffect(refund.amountCents, receivableOf(sale.paymentMethod)), provider: sale.provider }]);
      await this.announce(manager, sale, finished, 'PENDING', now);
      await this.countCompleted(manager, sale, refund.amountCents, now);
    });
  }

  /**
   * A return the PSP made on its own of part of sale `saleId`'s Pix (a MED's devolução, or any the gateway
   * did not ask for), once it is DEVOLVIDO: written once per PSP id as a COMPLETED refund initiated by the
   * PSP, in one transaction under the sale's lock with its posting (pspReturnEffect: like a lost dispute
   * for that part), what is left to refund lowered, the sale ESTORNADO once returns cover it, and the
   * postbacks. Null when it was booked already.
   */
  async applyPspReturn(saleId: number, returned: PixReturn, now = new Date()): Promise<RefundRow | null> {
    // Reconciliation sees each return again on every pass: one booked already costs a read, not the sale's lock.
    if (await this.refunds.hasPspReturn(saleId, returned.id)) return null;
    return this.dataSource.transaction(async (manager) => {
      const [sale] = await this.sales.findByIdsForUpdate([saleId], manager);
      if (!sale) return null;
      // The PSP never returns more than its Pix: a seller's refund still pending that this return leaves no
      // room for never reached it and will be refused (giving back what it took). The return's share is
      // taken on what can really have been returned before it, so the seller ends having lost exactly its
      // share of what went back to the payer.
      const returnedBefore = Math.max(0, Math.min(sale.refundedCents, sale.amountCents - returned.amountCents));
      const split = refundSplit({ amountCents: sale.amountCents, netAmountCents: sale.netAmountCents ?? cents(0) }, returnedBefore, returned.amountCents);
      const refund = await this.refunds.insertPspReturn(
        {
          saleId,
          sellerId: sale.sellerId,
          amountCents: returned.amountCents,
          ...split,
          provider: sale.provider,
          returnId: returned.returnId,
          pspReturnId: returned.id,
          nature: returned.nature,
        },
        manager,
      );
      if (!refund) return null;
      await this.sales.addRefunded(saleId, returned.amountCents, manager);
      await this.ledger.post(manager, [{ sellerId: sale.sellerId, referenceType: 'SALE', referenceId: saleId, effect: pspReturnEffect(split), provider: sale.provider }]);
      await this.announce(manager, sale, refund, null, now);
      await this.countCompleted(manager, { ...sale, refundedCents: cents(sale.refundedCents + returned.amountCents) }, returned.amountCents, now);
      return refund;
    });
  }

  /**
   * What a card sale's acquirer shows given back of it (`refundedAtAcquirerCents`: voids and refunds in
   * all, as its look-up says) beyond what this gateway booked: a void or refund made in the acquirer's back
   * office, learned by its notification. The difference is booked once (keyed by that total) as a COMPLETED
   * refund initiated by the acquirer (initiatedBy PSP, nature ACQUIRER_VOID), with the seller debited as a
   * seller's refund debits it (REFUND_REQUESTED and REFUND_SETTLED: its share of the net, the platform its
   * share of the fee), in one transaction under the sale's lock; the sale moves to ESTORNADO once refunds
   * cover it. Only a PAGO sale; while a refund of the sale is pending its outcome comes first (this throws,
   * and the notification is checked again later). Null when nothing was left to book.
   */
  async applyAcquirerRefund(saleId: number, refundedAtAcquirerCents: number, paymentId: string, now = new Date()): Promise<RefundRow | null> {
    return this.dataSource.transaction(async (manager) => {
      const [sale] = await this.sales.findByIdsForUpdate([saleId], manager);
      if (!sale || sale.status !== 'PAGO') return null;
      const amount = Math.min(refundedAtAcquirerCents, sale.amountCents) - sale.refundedCents;
      if (amount <= 0) return null;
      if (await this.refunds.hasPending(saleId, manager)) {
        throw new Error(`Sale ${saleId} has a refund pending: what its acquirer shows refunded is booked once that refund is settled`);
      }
      const amountCents = cents(amount);
      const debitedBefore = await this.refunds.debitedCents(saleId, manager);
      const split = refundSplit({ amountCents: sale.amountCents, netAmountCents: sale.netAmountCents ?? cents(0) }, sale.refundedCents, amountCents, debitedBefore);
      const refund = await this.refunds.insertPspReturn(
        { saleId, sellerId: sale.sellerId, amountCents, ...split, provider: sale.provider, returnId: paymentId, pspReturnId: `voided-${refundedAtAcquirerCents}`, nature: 'ACQUIRER_VOID' },
        manager,
      );
      if (!refund) return null;
      await this.sales.addRefunded(saleId, amountCents, manager);
      await this.ledger.post(manager, [
        { sellerId: sale.sellerId, referenceType: 'SALE', referenceId: saleId, effect: refundRequestedEffect(split), provider: sale.provider },
        { sellerId: sale.sellerId, referenceType: 'SALE', referenceId: saleId, effect: refundSettledEffect(amountCents, receivableOf(sale.paymentMethod)), provider: sale.provider },
      ]);
      this.logger.warn({ saleId, provider: sale.provider, amountCents, refundedAtAcquirerCents }, 'The acquirer refunded part or all of a sale outside this gateway (its back office): booked as a refund');
      await this.announce(manager, sale, refund, null, now);
      await this.countCompleted(manager, { ...sale, refundedCents: cents(sale.refundedCents + amountCents) }, amountCents, now);
      return refund;
    });
  }

  /** The returns PSPs made on their own, booked in [from, to) (the reconciliation report). */
  pspReturnsBetween(from: Date, to: Date): Promise<Array<RefundRow & { endToEndId: string | null }>> {
    return this.refunds.pspReturnsBetween(from, to);
  }

  /** PENDING refunds left alone for a while: sent again when their request never got through, asked about otherwise. */
  async retryPending(): Promise<number> {
    const pending = await this.refunds.pending(RETRY_AFTER_SECONDS, BATCH, this.providers.configuredNames());
    for (const refund of pending) {
      try {
        const sale = await this.sales.findById(refund.saleId);
        // A PSP's return already asked for is asked about (its answer may have been lost); anything else is asked again under its id.
        const psp = sale?.paymentMethod === 'PIX' ? this.providers.pix(refund.provider, `Refund ${refund.id}`) : null;
        if (refund.requestedAt === null || !psp?.reconciled) {
          await this.dispatch(refund);
          continue;
        }
        const answer = await psp.findReturn(sale?.pixEndToEndId ?? '', refund.providerRefundId);
        if (answer) await this.applyReturn(refund, answer);
        else await this.dispatch(refund);
      } catch (error) {
        this.logger.warn({ err: error, refundId: refund.id }, 'Could not settle a pending refund; retrying later');
      }
    }
    return pending.length;
  }

  /**
   * A refund (the seller's or the PSP's own) completed on `sale`, as the sale is after it: counted, and the
   * sale moved to ESTORNADO once its completed refunds cover it (the reversal then moves what they left).
   */
  private async countCompleted(manager: EntityManager, sale: SaleEntity, amountCents: Cents, now: Date): Promise<void> {
    const completedCents = await this.sales.addRefundCompleted(sale.id, amountCents, manager);
    if (refundsCoverSale(sale, completedCents)) {
      await this.pipeline.write(manager, { sales: [{ sale: { ...sale, refundCompletedCents: completedCents }, event: 'REFUNDED' }] }, now);
    }
  }

  private async announce(manager: EntityManager, sale: SaleEntity, refund: RefundRow, previous: RefundRow['status'] | null, now: Date): Promise<void> {
    if (!sale.postbackUrl) return;
    await this.notifications.enqueueStatusChanges(manager, {
      refunds: [{ sellerId: sale.sellerId, resourceId: refund.id, saleId: sale.id, url: sale.postbackUrl, previousStatus: previous, status: refund.status, changedAt: now, data: toRefundResponse(refund) }],
    });
  }

  private async answerPriorUse(prior: PriorUse): Promise<CreatedRefund> {
    if (prior.kind === 'REPLAY') return { status: prior.status, body: prior.body as RefundResponse, replayed: true };
    const refund = (await this.refunds.findById(prior.resourceId)) as RefundRow;
    return { status: 201, body: toRefundResponse(refund), replayed: true };
  }
}

/** The cents a refund of `requested` (absent: all that is left) takes from this sale, or the sales family's refusal. */
function refundableAmount(sale: SaleEntity, requested: number | undefined, now: Date): Cents {
  if (sale.status !== 'PAGO') throw new DomainError('SALE_NOT_REFUNDABLE', `Sale ${sale.id} is ${sale.status}: only a PAGO sale can be refunded`);
  const window = sale.paymentMethod === 'PIX' ? REFUND_WINDOW_DAYS.PIX : REFUND_WINDOW_DAYS.CARD;
  if (sale.paymentMethod !== 'PIX' && sale.paymentMethod !== 'CREDIT_CARD' && sale.paymentMethod !== 'DEBIT_CARD') {
    throw new DomainError('SALE_NOT_REFUNDABLE', `A ${sale.paymentMethod} sale cannot be refunded through the gateway: only PIX and card sales can`);
  }
  if (sale.completedAt && addDays(sale.completedAt, window) < now) {
    throw new DomainError('REFUND_WINDOW_EXPIRED', `Sale ${sale.id} was paid more than ${window} days ago: ${sale.paymentMethod === 'PIX' ? 'a Pix' : 'a card payment'} can be refunded for ${window} days`);
  }
  const left = sale.amountCents - sale.refundedCents;
  const amount = requested ?? left;
  if (left <= 0 || amount > left) throw new DomainError('REFUND_EXCEEDS_REMAINING', `Sale ${sale.id} has ${left} cents left to refund; ${amount} were asked`);
  return cents(amount);
}
