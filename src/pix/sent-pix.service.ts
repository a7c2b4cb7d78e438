import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { CashoutService } from '../cashout/cashout.service';
import { WithdrawalEntity } from '../cashout/entities/withdrawal.entity';
import { PayoutState, WithdrawalStatus } from '../domain/withdrawal-status';
import { ProviderIntake } from '../intake/provider-intake.service';
import { MetricsService } from '../metrics/metrics.service';
import { ListedPayout, PayoutProvider, payoutReference } from '../providers/payout-provider.port';
import { ProviderRegistry } from '../providers/provider-registry';
import { ReconciliationDifference } from './dto/reconciliation.dto';

/** The withdrawal statuses each payout state of the provider agrees with. */
const AGREES: Record<PayoutState, readonly WithdrawalStatus[]> = {
  PENDING: ['PENDING', 'PROCESSING'],
  PROCESSING: ['PENDING', 'PROCESSING'],
  COMPLETED: ['COMPLETED'],
  REJECTED: ['FAILED'],
  CANCELLED: ['CANCELLED', 'FAILED'],
};

export type PayoutDifferenceKind = 'SEND_UNKNOWN' | 'PAYOUT_NOT_AT_PSP' | 'PAYOUT_AMOUNT_MISMATCH' | 'PAYOUT_STATUS_MISMATCH';

/**
 * The Pix that left (issue 38): a PSP's notification of a sent Pix (the `payout` kind of the one intake)
 * moves its withdrawal only through a look-up — one naming no withdrawal, or a send the PSP does not have,
 * changes nothing and is counted (FORGED_PAYOUT_NOTIFICATION); and the reconciliation of the payouts a
 * provider lists (listPayouts) with the withdrawals: a send the gateway did not make, a withdrawal
 * COMPLETED the provider does not list, another amount, a status that disagrees.
 */
@Injectable()
export class SentPixService implements OnModuleInit {
  private readonly logger = new Logger(SentPixService.name);

  constructor(
    private readonly intake: ProviderIntake,
    private readonly withdrawals: CashoutService,
    private readonly metrics: MetricsService,
    private readonly providers: ProviderRegistry,
  ) {}

  onModuleInit(): void {
    this.intake.handle('payout', async (provider, providerReference, note) => {
      if ((await this.withdrawals.settleNotifiedPayout(provider, providerReference, note)) !== 'unknown') return;
      this.metrics.countPixDifference('FORGED_PAYOUT_NOTIFICATION');
      this.logger.warn(
        { provider, providerReference },
        'A notification named a payout of no withdrawal, or one its provider does not have (forged, or sent outside the gateway: reconciliation lists it); nothing was done',
      );
    });
  }

  /** The configured payout providers that list their payouts. */
  listing(): Array<{ name: string; adapter: PayoutProvider & Required<Pick<PayoutProvider, 'listPayouts'>> }> {
    return this.providers.configuredWith('payout').flatMap(({ name, adapter }) => (adapter.listPayouts ? [{ name, adapter: adapter as PayoutProvider & Required<Pick<PayoutProvider, 'listPayouts'>> }] : []));
  }

  /**
   * One reconciliation pass over [from, to): a send of ours whose status disagrees with its withdrawal is
   * settled through its look-up (a lost callback); every other difference is counted and logged for the
   * operator. The differences found.
   */
  async reconcile(from: Date, to: Date): Promise<number> {
    let found = 0;
    for (const { name, adapter } of this.listing()) {
      const differences = await this.compare(name, adapter, from, to);
      for (const difference of differences) {
        if (difference.kind === 'PAYOUT_STATUS_MISMATCH' && difference.withdrawalId !== null) {
          const withdrawal = await this.withdrawals.findById(difference.withdrawalId);
          if (withdrawal && (await this.withdrawals.settlePayout(withdrawal)) === 'settled') continue;
        }
        found += 1;
        this.metrics.countPixDifference(difference.kind);
        this.logger.warn({ provider: name, ...difference }, `Payout reconciliation: ${difference.kind}`);
      }
    }
    return found;
  }

  /** Every difference between the payouts each provider lists in [from, to) and the withdrawals (the operator's report). */
  async report(from: Date, to: Date): Promise<ReconciliationDifference[]> {
    const all: ReconciliationDifference[] = [];
    for (const { name, adapter } of this.listing()) all.push(...(await this.compare(name, adapter, from, to)));
    return all;
  }

  private async compare(provider: string, adapter: PayoutProvider & Required<Pick<PayoutProvider, 'listPayouts'>>, from: Date, to: Date): Promise<ReconciliationDifference[]> {
    const [listed, ours] = await Promise.all([adapter.listPayouts(from, to), this.withdrawals.ofProviderBetween(provider, from, to)]);
    const differences: ReconciliationDifference[] = [];
    const listedOf = new Set<number>();
    const oursBySend = new Map(ours.flatMap((withdrawal) => (withdrawal.providerReference === null ? [] : [[withdrawal.providerReference, withdrawal] as const])));
    const oursByReference = new Map(ours.map((withdrawal) => [payoutReference(withdrawal.id), withdrawal]));
    for (const payout of listed) {
      // A send is a withdrawal's when it is under the id the withdrawal recorded at its first attempt
      // (whatever the provider's naming says since); one asked for just before the period is read by it.
      const withdrawal = oursBySend.get(payout.providerReference) ?? (await this.withdrawalOf(provider, payout, oursByReference));
      if (withdrawal) listedOf.add(withdrawal.id);
      if (!withdrawal) {
        differences.push(difference('SEND_UNKNOWN', payout, null, `Sent by the PSP under ${payout.providerReference}; the gateway has no withdrawal of it`));
        continue;
      }
      if (payout.status === 'COMPLETED' && payout.amountCents !== withdrawal.netAmountCents) {
        differences.push(difference('PAYOUT_AMOUNT_MISMATCH', payout, withdrawal, `The PSP sent ${payout.amountCents} cents; the withdrawal's net amount is ${withdrawal.netAmountCents}`));
      }
      if (!AGREES[payout.status].includes(withdrawal.status)) {
        differences.push(difference('PAYOUT_STATUS_MISMATCH', payout, withdrawal, `The PSP says ${payout.status}; the withdrawal is ${withdrawal.status}`));
      }
    }
    for (const withdrawal of ours) {
      if (withdrawal.status !== 'COMPLETED' || listedOf.has(withdrawal.id)) continue;
      // Listed late, or just outside the period by the PSP's clock: asked for by its reference first.
      const known = await adapter.findPayout(payoutReference(withdrawal.id), withdrawal.providerReference);
      if (known?.status === 'COMPLETED') continue;
      differences.push({
        kind: 'PAYOUT_NOT_AT_PSP',
        endToEndId: withdrawal.externalId,
        txid: null,
        saleId: null,
        withdrawalId: withdrawal.id,
        amount: withdrawal.netAmountCents,
        returnStatus: null,
        detail: known ? `COMPLETED here; the PSP says ${known.status}` : 'COMPLETED here; the PSP has no send of it',
      });
    }
    return differences;
  }

  /**
   * The withdrawal a listed send is of, outside the period's: the one that recorded its id; or, for a send
   * named with our reference, the withdrawal of that reference when it recorded no id of its own (none
   * attempted under this design: an id recorded and another means the send is someone else's).
   */
  private async withdrawalOf(provider: string, payout: ListedPayout, period: ReadonlyMap<string, WithdrawalEntity>): Promise<WithdrawalEntity | null> {
    const recorded = await this.withdrawals.findByProviderReference(provider, payout.providerReference);
    if (recorded) return recorded;
    if (payout.reference === null) return null;
    const named = period.get(payout.reference) ?? (await this.withdrawals.findById(Number(payout.reference)));
    return named && named.provider === provider && named.providerReference === null ? named : null;
  }
}

function difference(kind: PayoutDifferenceKind, payout: ListedPayout, withdrawal: WithdrawalEntity | null, detail: string): ReconciliationDifference {
  return { kind, endToEndId: payout.externalId, txid: null, saleId: null, withdrawalId: withdrawal?.id ?? null, amount: payout.amountCents, returnStatus: null, detail };
}
