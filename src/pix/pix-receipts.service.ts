import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ProviderIntake } from '../intake/provider-intake.service';
import { Janitor, SettledCounts } from '../janitor/janitor.service';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { pixReturnDueEffect, pixReturnedEffect } from '../domain/refund-ledger';
import { LedgerService } from '../ledger/ledger.service';
import { MetricsService } from '../metrics/metrics.service';
import { MoneyPipeline } from '../payments/money-pipeline';
import { RefundsService } from '../payments/refunds.service';
import { saleIdOfRecurringTxid } from '../providers/automatic-pix.port';
import { PixReturn, ReceivedPix, saleIdOfTxid } from '../providers/pix-provider.port';
import { ProviderRegistry } from '../providers/provider-registry';
import { SaleEntity } from '../sales/entities/sale.entity';
import { SalesRepository } from '../sales/sales.repository';
import { PixReceiptsRepository, ReceiptOutcome, ReceiptRow } from './pix-receipts.repository';
import { ProviderOperation, runOperation } from '../providers/provider-operation';

/** Pending returns looked at per pass. */
const RETURNS_BATCH = 100;

/** Why each Pix that belongs to no sale goes back to its payer (the return's description). */
const RETURN_REASONS: Record<Exclude<ReceiptOutcome, 'APPLIED'>, string> = {
  UNMATCHED: 'Pix sem cobranca correspondente',
  LATE: 'Pix recebido apos o cancelamento da cobranca',
  AMOUNT_MISMATCH: 'Pix com valor diferente do cobrado',
  DUPLICATE: 'Cobranca ja paga por outro Pix',
};

/**
 * The Pix the PSP received, however the gateway learns of them (the PSP's notification, checked with the
 * PSP first, or reconciliation): each applied once, by its end-to-end id, in one transaction with its
 * receipt. A Pix that pays its sale (PENDENTE, the same amount) moves it to PAGO with the E2E id; any
 * other (no sale, a sale cancelled or expired, another amount, a sale already paid) is booked as owed
 * back to its payer and returned in full (PUT /pix/{e2eid}/devolucao): the platform never keeps money
 * that belongs to no sale. The returns of sellers' refunds reported with a Pix are applied too.
 */
@Injectable()
export class PixReceiptsService implements OnModuleInit {
  private readonly logger = new Logger(PixReceiptsService.name);
  /** PSP returns of Pix that paid no sale, already reported by this instance (each pass of reconciliation sees them again). */
  private readonly unbookedReported = new Set<string>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly receipts: PixReceiptsRepository,
    private readonly sales: SalesRepository,
    private readonly pipeline: MoneyPipeline,
    private readonly ledger: LedgerService,
    private readonly refunds: RefundsService,
    private readonly metrics: MetricsService,
    private readonly providers: ProviderRegistry,
    private readonly intake: ProviderIntake,
    private readonly janitor: Janitor,
  ) {}

  /**
   * The PSP's notifications of Pix received (`pix`: end-to-end ids), kept by the intake: each fetched from
   * the PSP (GET /pix/{e2eid}) and applied only as it reports it; an id the PSP does not have (a forged
   * notification) changes nothing and is counted.
   */
  onModuleInit(): void {
    this.intake.handle('pix', (provider, endToEndId) => this.settleNotified(provider, endToEndId));
    // Left pending: the returns of Pix that paid no sale (asked again, or asked about); reconciliation's pass runs them too.
    this.janitor.register({ name: 'pix returns', settle: async (sellerId): Promise<SettledCounts> => (sellerId === null ? { returnsChecked: await this.settlePendingReturns() } : {}) });
  }

  private async settleNotified(provider: string, endToEndId: string): Promise<void> {
    const pix = await this.providers.pix(provider).findPix(endToEndId);
    if (pix) {
      await this.apply(pix, 'NOTIFICATION', provider);
      return;
    }
    this.metrics.countPixDifference('FORGED_NOTIFICATION');
    this.logger.warn({ endToEndId, provider }, 'A notification named a Pix the PSP does not have; nothing was done');
  }

  /** A Pix the PSP confirmed: its receipt and effect once, its return asked for when it belongs to no sale, the returns it carries applied. */
  async apply(pix: ReceivedPix, seenBy: ReceiptRow['seenBy'], provider: string): Promise<ReceiptRow> {
    const receipt = await this.dataSource.transaction(async (manager) => {
      const known = await this.receipts.findForUpdate(pix.endToEndId, manager);
      if (known) return known;
      // An immediate charge's txid (GWSALE…) or a Pix Automático recurring charge's (GWREC…).
      const recurringSaleId = pix.txid ? saleIdOfRecurringTxid(pix.txid) : null;
      const saleId = saleIdOfTxid(pix.txid) ?? recurringSaleId;
      const [sale] = saleId === null ? [] : await this.sales.findByIdsForUpdate([saleId], manager);
      const ours =
        sale && sale.provider === provider && (recurringSaleId !== null ? sale.automaticPixSentAt !== null : sale.externalTransactionId === pix.txid) ? sale : null;
      // The same Pix applied already by another path (Pix Automático's charge, fetched from /cobr): recorded, nothing moves.
      const alreadyApplied = ours !== null && ours.pixEndToEndId === pix.endToEndId;
      const outcome = alreadyApplied ? 'APPLIED' : outcomeOf(ours, pix);
      const written = await this.receipts.insert(
        { provider, endToEndId: pix.endToEndId, txid: pix.txid, amountCents: pix.amountCents, paidAt: pix.paidAt, saleId: ours?.id ?? null, sellerId: ours?.sellerId ?? null, outcome, seenBy },
        manager,
      );
      if (alreadyApplied) {
        // Booked when it was applied.
      } else if (outcome === 'APPLIED') {
        await this.pipeline.write(manager, { sales: [{ sale: ours as SaleEntity, event: 'PAYMENT_CONFIRMED', extra: { pixEndToEndId: pix.endToEndId } }] }, new Date());
      } else {
        await this.ledger.post(manager, [{ sellerId: null, referenceType: 'PIX_RECEIPT', referenceId: written.id, effect: pixReturnDueEffect(pix.amountCents), provider: written.provider }]);
        this.logger.warn({ endToEndId: pix.endToEndId, txid: pix.txid, outcome }, 'A Pix belongs to no payable sale; returning it to its payer');
      }
      return written;
    });
    if (receipt.returnStatus === 'PENDING' && receipt.returnRequestedAt === null) {
      if (receipt.seenBy === seenBy) this.metrics.countPixDifference(receipt.outcome);
      await this.requestReturn(receipt);
    }
    for (const returned of pix.returns) await this.applyReturn(returned, pix.endToEndId);
    return receipt;
  }

  /**
   * What the PSP says of a return of Pix `endToEndId`: a seller's refund (GWRF…), the return of a Pix that
   * belonged to no sale (GWRT…), or any other id: a return the PSP made on its own (a MED's).
   */
  async applyReturn(returned: PixReturn, endToEndId: string): Promise<void> {
    if (returned.id.startsWith('GWRF')) {
      await this.refunds.applyReturnById(returned);
      return;
    }
    if (!returned.id.startsWith('GWRT')) {
      await this.applyPspReturn(returned, endToEndId);
      return;
    }
    if (returned.status === 'EM_PROCESSAMENTO') return;
    await this.dataSource.transaction(async (manager) => {
      const receipt = await this.receipts.findByReturnIdForUpdate(returned.id, manager);
      if (!receipt || receipt.returnStatus !== 'PENDING') return;
      await this.receipts.setReturn(receipt.id, returned.status as 'DEVOLVIDO' | 'NAO_REALIZADO', returned.reason, manager);
      if (returned.status === 'DEVOLVIDO') {
        await this.ledger.post(manager, [{ sellerId: null, referenceType: 'PIX_RECEIPT', referenceId: receipt.id, effect: pixReturnedEffect(receipt.amountCents), provider: receipt.provider }]);
      } else {
        this.metrics.countPixDifference('RETURN_NOT_MADE');
        this.logger.error({ endToEndId: receipt.endToEndId, reason: returned.reason }, 'The PSP did not return a Pix that belongs to no sale; the operator must settle it');
      }
    });
  }

  /**
   * A return the gateway did not ask for (natureza MED_OPERACIONAL or MED_FRAUDE, or any id not ours): once
   * the PSP has made it, booked against the sale its Pix paid, like a lost dispute for the part returned
   * (RefundsService.applyPspReturn), counted and logged. A return of a Pix that paid no sale cannot be
   * booked against one: it is counted and logged for the operator, never dropped silently.
   */
  private async applyPspReturn(returned: PixReturn, endToEndId: string): Promise<void> {
    if (returned.status !== 'DEVOLVIDO') return;
    const receipt = await this.receipts.findByEndToEndId(endToEndId);
    if (!receipt || receipt.outcome !== 'APPLIED' || receipt.saleId === null) {
      const key = `${endToEndId}/${returned.id}`;
      if (!this.unbookedReported.has(key)) {
        if (this.unbookedReported.size >= 10_000) this.unbookedReported.clear();
        this.unbookedReported.add(key);
        this.metrics.countPixDifference('PSP_RETURN_UNBOOKED');
        this.logger.error(
          { endToEndId, pspReturnId: returned.id, nature: returned.nature, amountCents: returned.amountCents },
          'The PSP returned part of a Pix that paid no sale here; the operator must settle it',
        );
      }
      return;
    }
    const booked = await this.refunds.applyPspReturn(receipt.saleId, returned);
    if (!booked) return;
    this.metrics.countPixDifference('PSP_RETURN');
    this.logger.warn(
      { endToEndId, saleId: receipt.saleId, pspReturnId: returned.id, nature: returned.nature, amountCents: returned.amountCents },
      'The PSP returned part of a paid Pix on its own (a MED); booked against its sale',
    );
  }

  /** Returns asked for but not settled: asked again (never sent) or asked about. How many were looked at. */
  async settlePendingReturns(): Promise<number> {
    const pending = await this.receipts.pendingReturns(RETURNS_BATCH, this.providers.configuredNames());
    for (const receipt of pending) {
      try {
        if (receipt.returnRequestedAt === null) await this.requestReturn(receipt);
        else {
          const answer = await this.providers.pix(receipt.provider).findReturn(receipt.endToEndId, receipt.returnId as string);
          if (answer) await this.applyReturn(answer, receipt.endToEndId);
        }
      } catch (error) {
        this.logger.warn({ err: error, endToEndId: receipt.endToEndId }, 'Could not settle the return of a Pix; retrying later');
      }
    }
    return pending.length;
  }

  /**
   * The return of a Pix that paid no sale, at the PSP that received it (the skeleton of
   * src/providers/provider-operation.ts), under the return id written with the receipt: its answer
   * applied; a refusal recorded NAO_REALIZADO for the operator; no answer left for the janitor's pass.
   */
  private readonly returnAtPsp: ProviderOperation<ReceiptRow, PixReturn> = {
    name: 'return of a Pix',
    provider: (receipt) => receipt.provider,
    reference: (receipt) => receipt.returnId as string,
    call: (receipt) =>
      this.providers.pix(receipt.provider).requestReturn(receipt.endToEndId, receipt.returnId as string, receipt.amountCents, RETURN_REASONS[receipt.outcome as Exclude<ReceiptOutcome, 'APPLIED'>]),
    apply: async (receipt, answer) => {
      if (answer.status === 'EM_PROCESSAMENTO') await this.receipts.setReturn(receipt.id, 'PENDING', null);
      else await this.applyReturn(answer, receipt.endToEndId);
    },
    fail: async (receipt, reason) => {
      await this.dataSource.transaction((manager) => this.receipts.setReturn(receipt.id, 'NAO_REALIZADO', reason, manager));
      this.metrics.countPixDifference('RETURN_NOT_MADE');
      this.logger.error({ endToEndId: receipt.endToEndId, reason }, 'The PSP refused to return a Pix that belongs to no sale; the operator must settle it');
    },
  };

  private async requestReturn(receipt: ReceiptRow): Promise<void> {
    await runOperation(this.returnAtPsp, receipt);
  }
}

/** What a confirmed Pix does: pays its sale, or goes back (no sale of ours, cancelled, another amount, already paid). */
function outcomeOf(sale: SaleEntity | null, pix: ReceivedPix): ReceiptOutcome {
  if (!sale) return 'UNMATCHED';
  if (sale.status === 'CANCELADO') return 'LATE';
  if (sale.status !== 'PENDENTE' && sale.status !== 'FALHA') return 'DUPLICATE';
  return sale.amountCents === pix.amountCents ? 'APPLIED' : 'AMOUNT_MISMATCH';
}
