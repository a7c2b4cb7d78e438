import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { ProviderIntake } from '../intake/provider-intake.service';
import { RefundsService } from '../payments/refunds.service';
import { API_PIX } from '../providers/api-pix/api-pix.provider';
import { PixProvider, ReceivedPix } from '../providers/pix-provider.port';
import { ProviderRegistry } from '../providers/provider-registry';
import { SalesRepository } from '../sales/sales.repository';
import { ReconciliationDifference, ReconciliationReport } from './dto/reconciliation.dto';
import { PixReceiptsRepository } from './pix-receipts.repository';
import { PixReceiptsService } from './pix-receipts.service';
import { SentPixService } from './sent-pix.service';

/** Each pass compares again this much before where the last one stopped: a Pix the PSP lists late is still seen. */
const OVERLAP_MS = 10 * 60 * 1000;
/** How often a pass renews its one-minute lease. */
const LEASE_RENEWAL_MS = 20_000;
/** Where the first pass starts when nothing was compared yet. */
const FIRST_LOOK_BACK_MS = 24 * 3600 * 1000;
const CLOSE_BATCH = 100;
/** How far back the sweep for returns looks: a MED's return can come weeks after its Pix (a refund window is 90 days). */
const RETURNS_LOOK_BACK_MS = 120 * 86_400_000;

export interface ReconciliationPass {
  received: number;
  applied: number;
  /** Pix carrying a return looked at by the sweep for returns (0 on the passes it does not run). */
  withReturnsSwept: number;
  returnsChecked: number;
  refundsChecked: number;
  chargesClosed: number;
  /** Differences between the Pix sent and the withdrawals found by this pass (counted and logged). */
  payoutDifferences: number;
}

/**
 * Reconciliation with the PSP: every API_PIX_RECONCILE_SECONDS, in one instance at a time (a lease on
 * the cursor), the Pix received since the last pass (GET /pix, every page) that the gateway has no
 * receipt of are applied as if notified, so a lost notification costs at most one interval; returns
 * and refunds still open are settled; the charges of cancelled sales are removed at the PSP; the Pix
 * sent (payouts) are compared with the withdrawals (SentPixService). The
 * operator's report lists every difference between the PSP's records and the gateway's for a period.
 */
@Injectable()
export class PixReconciliationService {
  private readonly logger = new Logger(PixReconciliationService.name);
  /** When this instance last swept the Pix that carry a return. */
  private lastReturnsSweep = 0;

  constructor(
    private readonly receipts: PixReceiptsRepository,
    private readonly sales: SalesRepository,
    private readonly pix: PixReceiptsService,
    private readonly refunds: RefundsService,
    private readonly providers: ProviderRegistry,
    private readonly intake: ProviderIntake,
    private readonly config: AppConfig,
    private readonly sentPix: SentPixService,
  ) {}

  /** The API Pix PSP whose Pix are reconciled (this module is its intake). */
  private get psp(): PixProvider {
    return this.providers.pix(API_PIX);
  }

  /** One pass; null when another instance holds the lease. */
  async reconcile(now = new Date()): Promise<ReconciliationPass | null> {
    const checkedUntil = await this.receipts.claimReconciliation(new Date(now.getTime() - FIRST_LOOK_BACK_MS));
    if (checkedUntil === null) return null;
    let reached: Date | null = null;
    // The lease is a minute long and renewed while this pass works: a pass killed with its process frees it within a minute.
    const holding = setInterval(() => {
      this.receipts.holdReconciliation().catch((error: unknown) => this.logger.warn({ err: error }, 'Could not renew the reconciliation lease'));
    }, LEASE_RENEWAL_MS);
    holding.unref();
    try {
      const from = new Date(Math.min(checkedUntil.getTime(), now.getTime()) - OVERLAP_MS);
      const received = await this.psp.listReceived(from, now);
      const known = await this.receipts.known(received.map((pix) => pix.endToEndId));
      // A Pix whose notification just came and waits in the inbox is not a lost one: the inbox worker applies
      // it. Once a check of it has failed, reconciliation applies it like any other.
      const notified = await this.intake.notifiedUnchecked(this.psp.name, 'pix', received.filter((pix) => !known.has(pix.endToEndId)).map((pix) => pix.endToEndId));
      let applied = 0;
      let failed = 0;
      for (const pix of received) {
        if (notified.has(pix.endToEndId) && !known.has(pix.endToEndId)) continue;
        // One Pix that cannot be applied now does not hold up the others; the cursor then stays where it
        // was, so that the next pass looks at it again.
        try {
          if (known.has(pix.endToEndId)) for (const returned of pix.returns) await this.pix.applyReturn(returned, pix.endToEndId);
          else {
            await this.pix.apply(pix, 'RECONCILIATION', this.psp.name);
            applied += 1;
          }
        } catch (error) {
          failed += 1;
          this.logger.warn({ err: error, endToEndId: pix.endToEndId }, 'Reconciliation could not apply a Pix or its returns; the next pass tries again');
        }
      }
      if (applied > 0) this.logger.warn({ applied }, 'Reconciliation applied Pix whose notification never came');
      reached = failed === 0 ? now : null;
      const withReturnsSwept = await this.sweepReturns(now);
      const returnsChecked = await this.pix.settlePendingReturns();
      const refundsChecked = await this.refunds.retryPending();
      const chargesClosed = await this.closeCharges();
      // The Pix sent: a failure to list them does not hold up what the Pix received settled above.
      const payoutDifferences = await this.sentPix.reconcile(from, now).catch((error: unknown) => {
        this.logger.warn({ err: error }, 'Reconciliation could not compare the Pix sent with the withdrawals; the next pass tries again');
        return 0;
      });
      return { received: received.length, applied, withReturnsSwept, returnsChecked, refundsChecked, chargesClosed, payoutDifferences };
    } finally {
      clearInterval(holding);
      await this.receipts.releaseReconciliation(reached);
    }
  }

  /**
   * Every API_PIX_RETURNS_SWEEP_SECONDS: the Pix of the last 120 days that carry a return (GET /pix with
   * devolucaoPresente), each return applied (a seller's refund settled, a return the PSP made on its own
   * booked). Returns come long after their Pix, outside the window of the pass.
   */
  private async sweepReturns(now: Date): Promise<number> {
    if (now.getTime() - this.lastReturnsSweep < this.config.apiPix.returnsSweepSeconds * 1000) return 0;
    const withReturns = await this.psp.listReceived(new Date(now.getTime() - RETURNS_LOOK_BACK_MS), now, { withReturnsOnly: true });
    const known = await this.receipts.known(withReturns.map((pix) => pix.endToEndId));
    let failed = 0;
    for (const pix of withReturns) {
      try {
        if (known.has(pix.endToEndId)) for (const returned of pix.returns) await this.pix.applyReturn(returned, pix.endToEndId);
        else await this.pix.apply(pix, 'RECONCILIATION', this.psp.name);
      } catch (error) {
        failed += 1;
        this.logger.warn({ err: error, endToEndId: pix.endToEndId }, 'The sweep for returns could not apply a Pix or its returns; the next sweep tries again');
      }
    }
    if (failed === 0) this.lastReturnsSweep = now.getTime();
    return withReturns.length;
  }

  /** Removes at the PSP the charges of sales cancelled or expired here (a Pix that still comes is returned). */
  private async closeCharges(): Promise<number> {
    const open = await this.receipts.chargesToClose(this.psp.name, CLOSE_BATCH);
    let closed = 0;
    for (const { id, txid } of open) {
      try {
        await this.psp.removeCharge(txid);
        await this.sales.markPixChargeClosedNow(id);
        closed += 1;
      } catch (error) {
        this.logger.warn({ err: error, saleId: id }, 'Could not remove a cancelled sale’s charge at the PSP; retrying later');
      }
    }
    return closed;
  }

  /**
   * Every difference between what the PSP received in [from, to) and what the gateway booked: Pix the
   * gateway returned (no sale, late, another amount, paid twice) with their return's state, Pix the PSP
   * has that the gateway has not applied yet, sales the gateway holds as paid (PAGO, reversed, disputed)
   * whose Pix the PSP does not have (none named, unknown to the PSP, another amount), and the returns the
   * PSP made on its own, booked against their sales.
   */
  async report(from: Date, to: Date): Promise<ReconciliationReport> {
    const [received, receipts, paid, pspReturns, payouts] = await Promise.all([
      this.psp.listReceived(from, to),
      this.receipts.inPeriod(from, to),
      this.receipts.salesHeldAsPaid(this.psp.name, from, to),
      this.refunds.pspReturnsBetween(from, to),
      this.sentPix.report(from, to),
    ]);
    const booked = new Set(receipts.map((receipt) => receipt.endToEndId));
    const atPsp = new Map(received.map((pix) => [pix.endToEndId, pix]));
    const notAtPsp: ReconciliationDifference[] = [];
    for (const sale of paid) {
      const detail = await this.missingAtPsp(sale, atPsp);
      if (detail) notAtPsp.push({ kind: 'NOT_AT_PSP', endToEndId: sale.endToEndId, txid: null, saleId: sale.saleId, withdrawalId: null, amount: sale.amountCents, returnStatus: null, detail });
    }
    const differences: ReconciliationDifference[] = [
      ...receipts
        .filter((receipt) => receipt.outcome !== 'APPLIED')
        .map((receipt) => ({
          kind: receipt.outcome as Exclude<typeof receipt.outcome, 'APPLIED'>,
          endToEndId: receipt.endToEndId,
          txid: receipt.txid,
          saleId: receipt.saleId,
          withdrawalId: null,
          amount: receipt.amountCents,
          returnStatus: receipt.returnStatus,
          detail: receipt.returnReason,
        })),
      ...received
        .filter((pix) => !booked.has(pix.endToEndId))
        .map((pix) => ({ kind: 'NOT_BOOKED' as const, endToEndId: pix.endToEndId, txid: pix.txid, saleId: null, withdrawalId: null, amount: pix.amountCents, returnStatus: null, detail: 'Received at the PSP, not yet applied' })),
      ...notAtPsp,
      ...pspReturns.map((returned) => ({
        kind: 'PSP_RETURN' as const,
        endToEndId: returned.endToEndId,
        txid: null,
        saleId: returned.saleId,
        withdrawalId: null,
        amount: returned.amountCents,
        returnStatus: 'DEVOLVIDO' as const,
        detail: `Returned by the PSP on its own (${returned.nature ?? 'no natureza'}, id ${returned.pspReturnId}); booked against the sale`,
      })),
      ...payouts,
    ];
    return {
      from: from.toISOString(),
      to: to.toISOString(),
      provider: this.psp.name,
      receivedAtPsp: { count: received.length, amount: received.reduce((sum, pix) => sum + pix.amountCents, 0) },
      bookedInGateway: { count: receipts.length, amount: receipts.reduce((sum, receipt) => sum + receipt.amountCents, 0) },
      differences,
    };
  }

  /**
   * Why a sale held as paid is not backed by a Pix at the PSP, or null when it is: its Pix, listed in the
   * period or (paid just before it) asked for by its end-to-end id, of the sale's amount.
   */
  private async missingAtPsp(sale: { endToEndId: string | null; amountCents: number }, listed: Map<string, ReceivedPix>): Promise<string | null> {
    if (sale.endToEndId === null) return 'Held as paid here with no Pix named: the PSP has no Pix for it';
    const pix = listed.get(sale.endToEndId) ?? (await this.psp.findPix(sale.endToEndId));
    if (!pix) return 'Held as paid here; the PSP does not have its Pix';
    if (pix.amountCents !== sale.amountCents) return `Held as paid here for ${sale.amountCents} cents; the PSP's Pix is of ${pix.amountCents}`;
    return null;
  }
}
