import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ProviderIntake } from '../intake/provider-intake.service';
import { Janitor, SettledCounts } from '../janitor/janitor.service';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import {
  AUTOMATIC_PIX_LEAD_DAYS,
  AUTOMATIC_PIX_PERIODS,
  authorizationOutcome,
  automaticChargeDates,
  AutomaticPixJourney,
  canStillSend,
  journeyFor,
  nextRetryDate,
} from '../domain/automatic-pix';
import { addDays, brazilDate } from '../domain/dates';
import { Cents } from '../domain/money';
import { addCycle, BillingCycle } from '../domain/subscription-billing';
import { cancelledColumns } from '../domain/subscription-outcome';
import { isFinalSubscriptionStatus } from '../domain/subscription-status';
import { ProviderRegistry } from '../providers/provider-registry';
import { recurrenceContract, RecurringChargeState, recurringChargeTxid, RecurrenceState, saleIdOfRecurringTxid } from '../providers/automatic-pix.port';
import { SaleEntity } from '../sales/entities/sale.entity';
import { pixTxid } from '../providers/pix-provider.port';
import { SalesRepository } from '../sales/sales.repository';
import { SellerService } from '../seller/seller.service';
import { NotificationsService } from '../notifications/notifications.service';
import { SubscriptionEntity } from '../subscriptions/entities/subscription.entity';
import { toSubscription } from '../subscriptions/subscription.presenter';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';
import { AutomaticCharge, AutomaticPixRepository } from './automatic-pix.repository';
import { MoneyPipeline } from './money-pipeline';
import { PixChargesService } from './pix-charges.service';
import { ProviderOperation, runOperation } from '../providers/provider-operation';

const BATCH = 200;
/** Recurring charges claimed at a time for sending (see AUTOMATIC_PIX_CHARGE_SEND in sales.repository.ts: the lease must outlast their sends). */
const SEND_BATCH = 10;

/** What one janitor's pass over Pix Automático's pending operations did (the sandbox scheduler's `automaticPix` fields). */
export interface AutomaticPixSummary {
  chargesSent: number;
  chargesSettled: number;
  retriesAsked: number;
  authorizationsChanged: number;
}

/** What a sale opening a Pix Automático subscription asks for. */
export interface AuthorizationOrder {
  saleId: number;
  /** The provider that holds the sale: its recurrence is created there. */
  provider: string;
  trialDays: number;
  cycle: BillingCycle;
  amountCents: Cents;
  debtor: { document: string; documentType: 'CPF' | 'CNPJ'; name: string };
  object: string;
}

/**
 * Subscriptions by Pix Automático (issue 22). The payer authorizes a recurrence once (journey 3: the
 * QR that pays the first charge authorizes too; journey 2: a QR that only authorizes, the first charge
 * collected when the trial ends); each renewal is then a recurring charge the PSP collects on its due
 * date, sent AUTOMATIC_PIX_LEAD_DAYS before it, retried on the PERMITE_3R_7D policy's dates after a
 * failed attempt. Whatever the PSP reports (a webhook or a poll) is fetched from it and applied here:
 * the sale through the money pipeline, the subscription by spec 3.2's table. An authorization rejected
 * or expired falls back to plain PIX (a QR per cycle); one the payer revokes cancels the subscription.
 * Every provider call is outside any transaction.
 */
@Injectable()
export class AutomaticPixService implements OnModuleInit {
  private readonly logger = new Logger(AutomaticPixService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly providers: ProviderRegistry,
    private readonly repository: AutomaticPixRepository,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly sales: SalesRepository,
    private readonly pipeline: MoneyPipeline,
    private readonly pixCharges: PixChargesService,
    private readonly sellers: SellerService,
    private readonly notifications: NotificationsService,
    private readonly intake: ProviderIntake,
    private readonly janitor: Janitor,
  ) {}

  /**
   * A PSP's notifications of recurrences (`rec`, their idRec) and recurring charges (`cobr`, their txid),
   * kept by the intake: each asked about at the PSP and applied as it reports it (a repeated notification
   * finds the state applied and changes nothing). The janitor's passes still poll what a notification never
   * sent would have told (pending authorizations and open charges once a minute at most, authorized
   * recurrences once an hour: the leases of their claims).
   */
  onModuleInit(): void {
    // Only what the notifying provider holds is asked about (a notification naming another's changes nothing).
    this.intake.handle('rec', (provider, recurrenceId) => this.syncRecurrences([recurrenceId], new Date(), provider));
    this.intake.handle('cobr', async (provider, txid) => {
      const saleId = saleIdOfRecurringTxid(txid);
      if (saleId !== null) await this.syncCharges([saleId], new Date(), provider);
    });
    // Left pending at the PSP: renewals to send as recurring charges (or sent with no answer), open charges
    // and authorizations to ask about, and what was stopped here to close there.
    this.janitor.register({ name: 'pix automatico', settle: async (sellerId, now): Promise<SettledCounts> => ({ ...(await this.settlePending(sellerId, now)) }) });
  }

  /**
   * The recurrence of a sale that opens a Pix Automático subscription, created at the PSP before the
   * sale is written (its immediate charge, for journey 3, already issued under the sale's txid): the
   * BR Code the customer reads and what the subscription records.
   */
  async openAuthorization(order: AuthorizationOrder, now: Date): Promise<{ journey: AutomaticPixJourney; recurrenceId: string; brCode: string }> {
    const journey = journeyFor(order.trialDays);
    const firstDate = journey === 'JOURNEY_2' ? addDays(now, order.trialDays) : addCycle(now, order.cycle, true);
    const created = await this.providers.automaticPix(order.provider, `Sale ${order.saleId}`).createRecurrence({
      contract: recurrenceContract(order.saleId),
      object: order.object.slice(0, 35),
      debtor: order.debtor,
      period: AUTOMATIC_PIX_PERIODS[order.cycle] as NonNullable<(typeof AUTOMATIC_PIX_PERIODS)[BillingCycle]>,
      firstDate: brazilDate(firstDate),
      endDate: null,
      amountCents: order.amountCents,
      journey: journey === 'JOURNEY_3' ? { kind: 'JOURNEY_3', firstChargeTxid: pixTxid(order.saleId) } : { kind: 'JOURNEY_2' },
    });
    return { journey, recurrenceId: created.recurrenceId, brCode: created.brCode };
  }

  /**
   * The janitor's pass at `now`, for one seller or all: authorizations waiting for the payer (or stopped
   * here, still live at the PSP) asked about, charges due sent (the same claim sends one never sent and one
   * whose send had no answer), open ones asked about, stopped ones closed at the PSP. Each record is claimed
   * under its lease, only those of configured providers, and every PSP call is outside any transaction.
   */
  async settlePending(sellerId: number | null, now: Date): Promise<AutomaticPixSummary> {
    const summary: AutomaticPixSummary = { chargesSent: 0, chargesSettled: 0, retriesAsked: 0, authorizationsChanged: 0 };
    for (const id of await this.subscriptions.claimAutomaticPixAuthorizationsToCheck(sellerId, BATCH, this.providers.configuredNames())) {
      if (await this.syncAuthorization(id, now).catch((error: unknown) => this.failed(error, 'authorization', id))) summary.authorizationsChanged += 1;
    }
    summary.chargesSent = await this.sendDue(now, sellerId);
    for (const charge of await this.repository.charges(await this.sales.claimOpenAutomaticPixCharges(sellerId, BATCH, this.providers.configuredNames()))) {
      const outcome = await this.syncCharge(charge, now).catch((error: unknown) => this.failed(error, 'charge', charge.saleId));
      if (outcome === 'SETTLED') summary.chargesSettled += 1;
      if (outcome === 'RETRY_ASKED') summary.retriesAsked += 1;
    }
    await this.closeCancelledCharges(sellerId, now);
    return summary;
  }

  /**
   * A subscription the seller stopped: its recurring charges cancelled here are cancelled at the PSP (a
   * pause collects nothing), and a cancelled one's authorization is cancelled there. What fails is done
   * by the janitor's next pass.
   */
  async afterStop(subscriptionId: number, sellerId: number, now: Date): Promise<void> {
    try {
      await this.closeCancelledCharges(sellerId, now);
      await this.syncAuthorization(subscriptionId, now);
    } catch (error) {
      this.failed(error, 'closing of a stopped subscription at the PSP', subscriptionId);
    }
  }

  /** The subscriptions of these recurrences (the PSP's webhook), their authorizations asked about now. */
  async syncRecurrences(recurrenceIds: string[], now: Date, provider?: string): Promise<void> {
    for (const { id, provider: holder } of await this.repository.subscriptionsOfRecurrences(recurrenceIds)) {
      if (provider === undefined || holder === provider) await this.syncAuthorization(id, now);
    }
  }

  /** The sales of `saleIds` whose recurring charge is open, asked about now (a webhook or the sandbox's payer). */
  async syncCharges(saleIds: number[], now: Date, provider?: string): Promise<void> {
    for (const charge of await this.repository.charges(saleIds)) {
      if (provider !== undefined && charge.provider !== provider) continue;
      if (charge.sentAt && charge.status === 'PENDENTE') await this.syncCharge(charge, now);
    }
  }

  /**
   * The authorization of a subscription as the PSP has it, applied: AUTHORIZED (a journey-2 trial starts,
   * its first charge scheduled for the trial's end); REJECTED or EXPIRED (plain PIX from now on: a
   * journey-2 first charge gets a QR); CANCELLED by the payer (the subscription is cancelled, with its
   * postback). A subscription stopped here has its authorization cancelled at the PSP. Whether it changed.
   */
  async syncAuthorization(subscriptionId: number, now: Date): Promise<boolean> {
    const [subscription] = await this.subscriptions.findByIds([subscriptionId]);
    if (!subscription?.automaticPixRecurrenceId || !subscription.automaticPixStatus) return false;
    const recurrenceId = subscription.automaticPixRecurrenceId;
    const provider = this.providers.automaticPix(subscription.provider as string, `Subscription ${subscriptionId}`);
    // Ended here (cancelled, or never started: its first charge lapsed): the recurrence goes too, so the payer cannot authorize it any more.
    if ((subscription.automaticPixStatus === 'AUTHORIZED' || subscription.automaticPixStatus === 'PENDING') && isFinalSubscriptionStatus(subscription.status)) {
      await provider.cancelRecurrence(recurrenceId);
      await this.dataSource.transaction(async (manager) => {
        const [locked] = await this.subscriptions.findByIdsForUpdate([subscriptionId], manager);
        if (!locked || locked.automaticPixStatus !== subscription.automaticPixStatus) return;
        await this.subscriptions.saveAutomaticPixAuthorization(subscriptionId, { status: 'CANCELLED', endedAt: now, endReason: 'Subscription ended by the seller' }, now, manager);
        await this.announceAuthorization(manager, locked, now);
      });
      return true;
    }
    const state = await provider.findRecurrence(recurrenceId);
    const outcome = state ? authorizationOutcome(state.status) : null;
    if (!state || outcome === null || outcome === subscription.automaticPixStatus) return false;
    // A journey-2 first charge with no authorization becomes a plain PIX sale: its QR issued before the transaction.
    const opening = subscription.status === 'PENDING' ? await this.repository.openingSale(subscriptionId, this.dataSource.manager) : null;
    const fallbackPix =
      (outcome === 'REJECTED' || outcome === 'EXPIRED') && subscription.automaticPixJourney === 'JOURNEY_2' && opening !== null
        ? await this.pixCharges.issue(
            opening,
            {
              provider: subscription.provider as string,
              amountCents: subscription.amountCents,
              expiresAt: null,
              receiverKey: null,
              profile: await this.sellers.salesProfile(subscription.sellerId),
              payer: { name: subscription.customerName, documentType: subscription.customerDocumentType, documentNumber: subscription.customerDocument },
              description: subscription.productName,
            },
            now,
          )
        : null;
    await this.dataSource.transaction(async (manager) => {
      const [before] = await this.subscriptions.findByIdsForUpdate([subscriptionId], manager);
      if (!before || before.automaticPixStatus !== subscription.automaticPixStatus) return;
      // Every postback of this change carries the subscription as it is after it (issue 35): read again once the authorization is saved.
      const saved = async () => (await this.subscriptions.findByIdsForUpdate([subscriptionId], manager))[0];
      if (outcome === 'AUTHORIZED') {
        await this.subscriptions.saveAutomaticPixAuthorization(subscriptionId, { status: 'AUTHORIZED', authorizedAt: state.changedAt }, now, manager);
        const locked = await saved();
        if (locked.status === 'PENDING' && locked.automaticPixJourney === 'JOURNEY_2' && opening !== null) {
          // The trial starts with the authorization; the first charge is collected when it ends.
          const trialEndsAt = addDays(now, locked.trialDays);
          const dates = automaticChargeDates(trialEndsAt);
          await this.sales.scheduleAutomaticPixFirstCharge(opening, dates.dueDate, dates.expiresAt, manager);
          await this.pipeline.write(
            manager,
            {
              subscriptions: [
                {
                  subscription: locked,
                  event: 'FIRST_PAYMENT_CONFIRMED_WITH_TRIAL',
                  // During the trial the next billing date is its end (platform.md §7); the first charge's outcome moves it a cycle on.
                  changes: { startedAt: now, trialEndsAt, periodDueAt: trialEndsAt, awaitingPaymentSince: trialEndsAt, nextBillingDate: trialEndsAt },
                },
              ],
            },
            now,
          );
        }
        await this.announceAuthorization(manager, before, now);
        return;
      }
      await this.subscriptions.saveAutomaticPixAuthorization(subscriptionId, { status: outcome, endedAt: state.changedAt, endReason: endReason(state) }, now, manager);
      if (fallbackPix && opening !== null) {
        await this.sales.becomePlainPix(opening, { ...fallbackPix, pixCode: fallbackPix.pixCode as string, pixReceiverKey: fallbackPix.pixReceiverKey as string, externalTransactionId: fallbackPix.externalTransactionId as string }, manager);
      }
      const byPayer = state.cancelledBy === 'USUARIO_PAGADOR' || state.cancelledBy === 'PSP_PAGADOR';
      if (outcome === 'CANCELLED' && byPayer && !isFinalSubscriptionStatus(before.status)) {
        await this.pipeline.write(manager, { subscriptions: [{ subscription: await saved(), event: 'CANCEL', changes: cancelledColumns(now, 'Pix Automático authorization revoked by the payer') }] }, now);
      }
      await this.announceAuthorization(manager, before, now);
    });
    return true;
  }

  /**
   * The postback of an authorization's change (subscription.automatic_pix_changed), in the caller's
   * transaction after every write of the change: previousStatus and status are the authorization's,
   * `data` the subscription as it is now (what GET /api/subscriptions/{id} answers once it commits).
   */
  private async announceAuthorization(manager: EntityManager, before: SubscriptionEntity, now: Date): Promise<void> {
    const [current] = await this.subscriptions.findByIdsForUpdate([before.id], manager);
    if (!current?.postbackUrl || !current.automaticPixStatus || current.automaticPixStatus === before.automaticPixStatus) return;
    await this.notifications.enqueueStatusChanges(manager, {
      automaticPix: [
        {
          sellerId: current.sellerId,
          resourceId: current.id,
          url: current.postbackUrl,
          previousStatus: before.automaticPixStatus,
          status: current.automaticPixStatus,
          changedAt: now,
          data: toSubscription(current),
        },
      ],
    });
  }

  /**
   * Sends the recurring charges due within the lead, each claimed first (a lease on the sale: two
   * instances never send the same one; the PSP's txid idempotency is only the net under a lease that
   * ran out). One whose authorization no longer holds, or sent too late for the BCB's window, becomes a
   * plain PIX sale with its QR: the customer pays it by hand, as a PIX renewal. One that fails is given
   * back at the end of the pass, for the next one.
   */
  private async sendDue(now: Date, sellerId: number | null): Promise<number> {
    const sendBy = brazilDate(addDays(now, AUTOMATIC_PIX_LEAD_DAYS));
    const failed: number[] = [];
    let sent = 0;
    try {
      let looked = 0;
      for (let claimed = await this.claimChargesToSend(sendBy, sellerId); claimed.length > 0; claimed = await this.claimChargesToSend(sendBy, sellerId)) {
        for (const charge of claimed) {
          const outcome = await this.sendOne(charge, now);
          if (outcome === 'SENT') sent += 1;
          if (outcome === 'FAILED') failed.push(charge.saleId);
        }
        looked += claimed.length;
        if (looked >= BATCH) break;
      }
    } finally {
      await this.sales.releaseAutomaticPixChargesToSend(failed).catch((error: unknown) => this.failed(error, 'release of charges not sent', failed[0]));
    }
    return sent;
  }

  /** Up to SEND_BATCH charges due to be sent by `sendBy`, each claimed (leased on its sale), as the janitor reads them. */
  private async claimChargesToSend(sendBy: string, sellerId: number | null): Promise<AutomaticCharge[]> {
    return this.repository.charges(await this.sales.claimAutomaticPixChargesToSend(sendBy, sellerId, SEND_BATCH, this.providers.configuredNames()));
  }

  /**
   * A renewal's recurring charge at the PSP that holds its recurrence (a provider operation,
   * src/providers/provider-operation.ts), under the txid derived from the sale (a second send is the
   * same charge): recorded sent; refused or unanswered, its lease is given back and the next pass sends it again.
   */
  private readonly recurringChargeAtPsp: ProviderOperation<{ charge: AutomaticCharge & { recurrenceId: string }; sale: SaleEntity; now: Date }, RecurringChargeState> = {
    name: 'Pix Automático charge',
    provider: ({ charge }) => charge.provider,
    reference: ({ charge }) => recurringChargeTxid(charge.saleId),
    call: ({ charge, sale }) =>
      this.providers.automaticPix(charge.provider, `Sale ${charge.saleId}`).createRecurringCharge({
        txid: recurringChargeTxid(charge.saleId),
        recurrenceId: charge.recurrenceId,
        dueDate: charge.dueDate,
        amountCents: sale.amountCents,
        description: `Renewal of subscription ${charge.subscriptionId}`,
      }),
    apply: ({ charge, now }) => this.sales.markAutomaticPixSent(charge.saleId, now),
    fail: async () => undefined,
  };

  /** A recurring charge of a sale cancelled here, cancelled at its PSP (a provider operation): recorded closed; refused or unanswered, asked again on the next pass. */
  private readonly cancellationAtPsp: ProviderOperation<{ charge: { saleId: number; provider: string }; now: Date }, RecurringChargeState> = {
    name: 'cancellation of a Pix Automático charge',
    provider: ({ charge }) => charge.provider,
    reference: ({ charge }) => recurringChargeTxid(charge.saleId),
    call: ({ charge }) => this.providers.automaticPix(charge.provider, `Sale ${charge.saleId}`).cancelRecurringCharge(recurringChargeTxid(charge.saleId)),
    apply: ({ charge, now }) => this.sales.markPixChargeClosed(charge.saleId, now),
    fail: async () => undefined,
  };

  /** One claimed charge: sent to the PSP, fallen back to a QR, or failed (its lease given back at the end of the pass). */
  private async sendOne(charge: AutomaticCharge, now: Date): Promise<'SENT' | 'FELL_BACK' | 'FAILED'> {
    try {
      if (charge.authorization === 'AUTHORIZED' && charge.recurrenceId && canStillSend(charge.dueDate, now)) {
        const sale = await this.sales.findById(charge.saleId);
        if (!sale) return 'FAILED';
        const outcome = await runOperation(this.recurringChargeAtPsp, { charge: { ...charge, recurrenceId: charge.recurrenceId }, sale, now });
        return outcome.kind === 'answered' ? 'SENT' : 'FAILED';
      }
      if (charge.authorization !== 'PENDING') await this.fallBackToQr(charge, now);
      return 'FELL_BACK';
    } catch (error) {
      this.failed(error, 'sending of the charge', charge.saleId);
      return 'FAILED';
    }
  }

  /**
   * A sent charge as the PSP has it, applied: paid → the sale PAGO (the subscription's renewal confirmed);
   * an attempt failed with no other open → the next retry of the policy asked; the charge ended unpaid →
   * the sale is left to lapse at its expiry (the subscription is PAST_DUE from the day after its due
   * date and ends with the grace period, as plain PIX renewals do).
   */
  private async syncCharge(charge: AutomaticCharge, now: Date): Promise<'SETTLED' | 'RETRY_ASKED' | null> {
    const provider = this.providers.automaticPix(charge.provider, `Sale ${charge.saleId}`);
    const state = await provider.findRecurringCharge(recurringChargeTxid(charge.saleId));
    if (!state) return null;
    if (state.status === 'CONCLUIDA' && state.paid) {
      const paid = state.paid;
      const moved = await this.dataSource.transaction(async (manager) => {
        const [sale] = await this.sales.findByIdsForUpdate([charge.saleId], manager);
        if (sale?.status !== 'PENDENTE') return false;
        await this.pipeline.write(manager, { sales: [{ sale, event: 'PAYMENT_CONFIRMED', extra: { pixEndToEndId: paid.endToEndId } }] }, now);
        return true;
      });
      return moved ? 'SETTLED' : null;
    }
    const open = state.attempts.some((attempt) => attempt.status === 'SOLICITADA' || attempt.status === 'AGENDADA');
    if (state.status !== 'ATIVA' || open || state.attempts.length === 0) return null;
    // The first attempt settles on the due date, or on the next business day when that is not one.
    const firstAttempt = state.attempts.map((attempt) => attempt.date).sort()[0];
    const date = nextRetryDate(charge.dueDate, charge.retries, now, firstAttempt);
    if (date === null) return null;
    await provider.requestRetry(state.txid, date);
    await this.sales.markAutomaticPixRetryAsked(charge.saleId, charge.retries + 1);
    return 'RETRY_ASKED';
  }

  /** Recurring charges of sales cancelled here (their subscription stopped): cancelled at the PSP, so nothing more is collected. */
  private async closeCancelledCharges(sellerId: number | null, now: Date): Promise<void> {
    for (const charge of await this.repository.chargesToCancel(sellerId, BATCH, this.providers.configuredNames())) {
      await runOperation(this.cancellationAtPsp, { charge, now });
    }
  }

  private async fallBackToQr(charge: AutomaticCharge, now: Date): Promise<void> {
    const [subscription] = await this.subscriptions.findByIds([charge.subscriptionId]);
    const sale = await this.sales.findById(charge.saleId);
    if (!subscription || !sale) return;
    const pix = await this.pixCharges.issue(
      charge.saleId,
      {
        provider: sale.provider,
        amountCents: sale.amountCents,
        expiresAt: sale.expiresAt,
        receiverKey: null,
        profile: await this.sellers.salesProfile(charge.sellerId),
        payer: { name: subscription.customerName, documentType: subscription.customerDocumentType, documentNumber: subscription.customerDocument },
        description: subscription.productName,
      },
      now,
    );
    await this.dataSource.transaction((manager) =>
      this.sales.becomePlainPix(
        charge.saleId,
        { pixCode: pix.pixCode as string, pixReceiverKey: pix.pixReceiverKey as string, externalTransactionId: pix.externalTransactionId as string, expiresAt: pix.expiresAt },
        manager,
      ),
    );
  }

  private failed(error: unknown, what: string, id: number): null {
    this.logger.warn({ err: error, id }, `Pix Automático: the ${what} failed; retried on the next pass`);
    return null;
  }
}

function endReason(state: RecurrenceState): string {
  switch (state.status) {
    case 'REJEITADA':
      return `Rejected by the payer${state.code ? ` (${state.code})` : ''}`;
    case 'EXPIRADA':
      return 'Not authorized in time';
    default: {
      const who = state.cancelledBy === 'USUARIO_PAGADOR' || state.cancelledBy === 'PSP_PAGADOR' ? 'the payer' : state.cancelledBy === 'PSP_RECEBEDOR' ? 'the PSP' : 'the seller';
      return `Cancelled by ${who}${state.code ? ` (${state.code})` : ''}`;
    }
  }
}

