import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { Janitor } from '../janitor/janitor.service';
import { InjectDataSource } from '@nestjs/typeorm';
import { Queue } from 'bull';
import { DataSource, EntityManager } from 'typeorm';
import { CteStatement } from '../database/cte-statement';
import { SettingsService } from '../admin/settings.service';
import { AppConfig } from '../config/app-config';
import { WITHDRAWAL_MAXIMUM_CENTS, WITHDRAWAL_MINIMUM_CENTS } from '../domain/withdrawal-limits';
import { DomainError, RequestValidationError } from '../domain/domain-error';
import { withdrawalFees } from '../domain/fees';
import { Cents, cents, centsToReaisString, reaisToCents } from '../domain/money';
import { pixKeyProblem, samePixKey } from '../domain/pix-key';
import { withdrawalLedgerEffect, withdrawalRequestedEffect } from '../domain/withdrawal-ledger';
import { payoutCheckDelaySeconds } from '../domain/retry-schedule';
import { nextWithdrawalStatus, withdrawalCatchUp, WithdrawalEvent, WithdrawalStatus } from '../domain/withdrawal-status';
import { IdempotencyService, PriorUse } from '../idempotency/idempotency.service';
import { LedgerService } from '../ledger/ledger.service';
import { NotificationsService } from '../notifications/notifications.service';
import { PayoutReceipt, payoutReference, PayoutResult } from '../providers/payout-provider.port';
import { ProviderRegistry } from '../providers/provider-registry';
import { SellerService, WithdrawalProfile } from '../seller/seller.service';
import { CashoutRepository } from './cashout.repository';
import { CreateWithdrawalDto, WithdrawalLookupResponse, WithdrawalResponse } from './dto/withdrawal.dto';
import { WithdrawalEntity } from './entities/withdrawal.entity';
import { toWithdrawal, toWithdrawalLookup, toWithdrawalWebhook } from './withdrawal.presenter';
import { ProviderOperation, runOperation } from '../providers/provider-operation';

export const PAYOUTS_QUEUE = 'payouts';
export const REQUEST_PAYOUT_JOB = 'request-payout';
const RECOVERY_BATCH = 500;

/** Statuses the withdrawal webhook announces (spec 6.2). */
const ANNOUNCED: ReadonlySet<WithdrawalStatus> = new Set(['PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED']);

/** What a pass of the withdrawal recovery job did: payouts the provider never received, sent again; withdrawals recorded or moved on what it said. */
export interface WithdrawalRecoverySummary {
  sent: number;
  recovered: number;
}

export interface CreatedWithdrawal {
  status: number;
  body: WithdrawalResponse;
  replayed: boolean;
}

/**
 * Withdrawals of available balance to a PIX key (spec 4.5, platform.md §4). The request commits the
 * withdrawal PENDING with its balance hold (available → blocked, under the balance row's lock, so
 * parallel requests never overdraw) and its answer; the payout is then requested from the provider by a
 * job, outside any transaction, with the withdrawal's id as reference, and a recovery job asks the
 * provider about any withdrawal left without news (sending again, under the same reference, a payout it
 * never received). COMPLETED removes the hold; a rejection or a cancellation returns it.
 */
@Injectable()
export class CashoutService implements OnModuleInit {
  private readonly logger = new Logger(CashoutService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly withdrawals: CashoutRepository,
    private readonly sellers: SellerService,
    private readonly settings: SettingsService,
    private readonly ledger: LedgerService,
    private readonly idempotency: IdempotencyService,
    private readonly notifications: NotificationsService,
    private readonly providers: ProviderRegistry,
    @InjectQueue(PAYOUTS_QUEUE) private readonly payoutQueue: Queue,
    private readonly config: AppConfig,
    private readonly janitor: Janitor,
  ) {
    this.payoutQueue.on('error', (error: Error) => this.logger.warn({ err: error }, 'Payouts queue cannot reach Redis'));
  }

  /** Left pending: withdrawals with no news from their payout provider (recoverWithdrawals). */
  onModuleInit(): void {
    this.janitor.register({
      name: 'payouts',
      settle: async (sellerId) => {
        const { sent, recovered } = await this.recoverWithdrawals(sellerId);
        return { sentPayouts: sent, recoveredPayouts: recovered };
      },
    });
  }

  async request(sellerId: number, request: CreateWithdrawalDto, idempotencyKey: string | undefined): Promise<CreatedWithdrawal> {
    const amountCents = reaisToCents(request.amount);
    if (amountCents === null || amountCents <= 0) {
      throw new RequestValidationError([], [{ field: 'amount', message: 'amount must be a number of reais greater than zero, with at most two decimals' }]);
    }
    const pixKeyType = request.pixKeyType ?? 'CPF';
    const keyProblem = pixKeyProblem(request.pixKey, pixKeyType);
    if (keyProblem) throw new RequestValidationError([], [{ field: 'pixKey', message: keyProblem }]);

    const idempotent = this.idempotency.prepare(sellerId, 'POST /api/public/cashout', idempotencyKey, { ...request, pixKeyType });
    const prior = await this.idempotency.priorUse(idempotent);
    if (prior) return this.answerPriorUse(prior);

    if (!(await this.settings.current()).apiWithdrawalsEnabled) {
      throw new DomainError('API_WITHDRAWAL_DISABLED_GLOBALLY', 'Cashouts through the API are disabled on the platform for now');
    }
    const profile = await this.sellers.withdrawalProfile(sellerId);
    if (!profile.transferEnabled) throw new DomainError('TRANSFER_NOT_ALLOWED', 'Cashouts are not enabled for this account');
    if (amountCents < WITHDRAWAL_MINIMUM_CENTS) {
      throw new DomainError('MINIMUM_VALUE', `The smallest cashout is ${centsToReaisString(WITHDRAWAL_MINIMUM_CENTS)} reais`);
    }
    if (amountCents > WITHDRAWAL_MAXIMUM_CENTS) {
      throw new DomainError('MAXIMUM_VALUE', `The largest cashout is ${centsToReaisString(WITHDRAWAL_MAXIMUM_CENTS)} reais`);
    }
    const fees = withdrawalFees(amountCents, profile.fees);
    if (fees.totalCents >= amountCents) {
      throw new DomainError('MINIMUM_VALUE', `The cashout must be more than its fees of ${centsToReaisString(fees.totalCents)} reais`);
    }

    const provider = this.providers.forNew('PAYOUT');
    if (!profile.payee && this.providers.payout(provider, 'A new withdrawal').requiresPayeeDocument) {
      // The provider sends only to a key of the seller's own document (the safeguard against an account taken over).
      throw new DomainError('TRANSFER_NOT_ALLOWED', `Cashouts are paid only to a Pix key of the account's own CPF or CNPJ, and this account has no document on record: ask the platform to add it`);
    }
    const draft: Partial<WithdrawalEntity> & Pick<WithdrawalEntity, 'provider'> = {
      sellerId,
      provider,
      status: 'PENDING',
      amountCents,
      feeFixedCents: fees.fixedCents,
      feeVariableCents: fees.variableCents,
      feeTotalCents: fees.totalCents,
      netAmountCents: cents(amountCents - fees.totalCents),
      pixKey: request.pixKey,
      pixKeyType,
    };
    if (!idempotent) {
      const written = await this.writeFunded(this.dataSource.manager, sellerId, draft, amountCents);
      if (written) {
        this.enqueuePayout(written.id);
        return { status: 201, body: toWithdrawal(written), replayed: false };
      }
    }
    const outcome = await this.dataSource.transaction(async (manager) => {
      const claimed = await this.idempotency.claim(manager, idempotent);
      if (claimed) return claimed;
      let withdrawal = await this.writeFunded(manager, sellerId, draft, amountCents);
      if (!withdrawal) {
        // The seller had no balances row yet (every seller opens one when created): opened at zero, so the
        // statement answers the shortfall.
        await this.ledger.openBalance(sellerId, manager);
        withdrawal = await this.writeFunded(manager, sellerId, draft, amountCents);
        if (!withdrawal) throw new Error(`Seller ${sellerId} has no balances row`);
      }
      const body = toWithdrawal(withdrawal);
      await this.idempotency.attachResource(manager, idempotent, withdrawal.id);
      await this.idempotency.saveResponse(manager, idempotent, 201, body);
      return { id: withdrawal.id, body };
    });
    if ('kind' in outcome) return this.answerPriorUse(outcome);
    this.enqueuePayout(outcome.id);
    return { status: 201, body: outcome.body, replayed: false };
  }

  /**
   * A withdrawal written in one statement (the only way one is written), alone or in the caller's
   * transaction (a request with an Idempotency-Key, whose key is claimed in it first): the seller's
   * balance row locked and read, the withdrawal and its status line written only if the available
   * balance covers the amount, and the hold posted on the same condition (the balance row moved under
   * that lock, held for this statement alone when there is no transaction). Its id is taken from the
   * sequence first, for the posting's reference. INSUFFICIENT_BALANCE when the balance does not cover
   * it; null, with nothing written, when the seller has no balances row yet.
   */
  private async writeFunded(
    manager: EntityManager,
    sellerId: number,
    draft: Partial<WithdrawalEntity> & Pick<WithdrawalEntity, 'provider'>,
    amountCents: Cents,
  ): Promise<WithdrawalEntity | null> {
    const id = await this.withdrawals.nextId(manager);
    const statement = new CteStatement();
    const posting = this.ledger.add(statement, [{ sellerId, referenceType: 'WITHDRAWAL', referenceId: id, effect: withdrawalRequestedEffect(amountCents), provider: draft.provider }]);
    const available = this.ledger.lockedAvailable(statement, sellerId);
    const written = this.withdrawals.addIfFunded(statement, { ...draft, id }, `${posting.ready} AND ${available} >= ${statement.param(amountCents)}::bigint`);
    posting.write(`(SELECT count(*) FROM ${written}) = 1`);
    const [row] = await statement.run<Record<string, unknown> & { ready: boolean; available: string | null }>(
      manager,
      `SELECT r.ready, r.available, w.* FROM (SELECT ${posting.ready} AS ready, ${available} AS available) r LEFT JOIN ${written} w ON true`,
    );
    if (!row.ready || row.available === null) return null;
    if (row.id === null) throw insufficientBalance(cents(Number(row.available)), amountCents);
    return this.withdrawals.hydrate(row);
  }

  /** The withdrawals of a payout provider asked for in [from, to), and those by id (reconciliation). */
  ofProviderBetween(provider: string, from: Date, to: Date): Promise<WithdrawalEntity[]> {
    return this.withdrawals.ofProviderBetween(provider, from, to);
  }

  findById(id: number): Promise<WithdrawalEntity | null> {
    return this.withdrawals.findById(id);
  }

  /** The withdrawal of `provider` whose payout it keeps under its own id `providerReference` (recorded at the first attempt). */
  findByProviderReference(provider: string, providerReference: string): Promise<WithdrawalEntity | null> {
    return this.withdrawals.findByProviderReference(provider, providerReference);
  }

  async lookup(sellerId: number, id: number): Promise<WithdrawalLookupResponse> {
    const withdrawal = await this.withdrawals.findById(id);
    this.assertOwned(withdrawal, sellerId, id);
    return toWithdrawalLookup(withdrawal);
  }

  /** The seller's withdrawal as the dashboard shows it: the lookup, the provider's id of the payout (the Pix's end-to-end id) and why it failed. */
  async dashboardView(sellerId: number, id: number): Promise<WithdrawalLookupResponse & { payoutId: string | null; failureReason: string | null }> {
    const withdrawal = await this.withdrawals.findById(id);
    this.assertOwned(withdrawal, sellerId, id);
    return { ...toWithdrawalLookup(withdrawal), payoutId: withdrawal.externalId, failureReason: withdrawal.failureReason };
  }

  /** A page of the seller's withdrawals, newest first (spec 2.10 with updatedAt). */
  async list(sellerId: number, page: number, limit = 20): Promise<{ withdrawals: WithdrawalLookupResponse[]; pagination: { page: number; limit: number; total: number; totalPages: number } }> {
    const { rows, total } = await this.withdrawals.page(sellerId, page, limit);
    return { withdrawals: rows.map(toWithdrawalLookup), pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
  }

  /** The withdrawal's status history, oldest first (stored statuses: a rejection is FAILED); 404 unknown, 403 another seller's. */
  async statusHistory(sellerId: number, id: number): Promise<Array<{ previousStatus: WithdrawalStatus | null; status: WithdrawalStatus; changedAt: Date }>> {
    this.assertOwned(await this.withdrawals.findById(id), sellerId, id);
    return this.withdrawals.statusHistory(id);
  }

  /**
   * The payout job: asks the provider to pay out a PENDING withdrawal not yet recorded as sent (requestPayout).
   * Safe to run twice, from the queue and from the recovery job at once.
   */
  async sendPayout(withdrawalId: number): Promise<void> {
    const withdrawal = await this.withdrawals.findById(withdrawalId);
    if (!withdrawal || withdrawal.status !== 'PENDING' || withdrawal.externalId !== null) return;
    await this.requestPayout(withdrawal);
  }

  /**
   * The withdrawal recovery job (every minute; the sandbox scheduler route for one seller): open withdrawals
   * (PENDING or PROCESSING) with no news for PROVIDER_RECOVERY_AFTER_SECONDS — the answer to the payout
   * request lost (a timeout, a 5xx, the process killed between the send and its answer), its callback
   * lost, the job lost with Redis — are claimed under the recovery lease (instances never ask about one at
   * once) and their next look-up put off first (the backoff: payoutCheckDelaySeconds). Then each, outside
   * any transaction, is asked about by its reference: a payout the provider knows is applied as its
   * answer or callback would have been (applyPayoutResult); one it never received is sent again under the
   * same reference, never a new one.
   */
  async recoverWithdrawals(sellerId: number | null): Promise<WithdrawalRecoverySummary> {
    const firstDelay = this.config.providerRecoveryAfterSeconds;
    const claimed = await this.withdrawals.claimWithdrawalsToCheck(firstDelay, sellerId, RECOVERY_BATCH, this.providers.configuredNames());
    await this.withdrawals.scheduleNextChecks(claimed.map(({ id, checks }) => ({ id, delaySeconds: payoutCheckDelaySeconds(firstDelay, checks + 1) })));
    const summary: WithdrawalRecoverySummary = { sent: 0, recovered: 0 };
    for (const { id } of claimed) {
      try {
        const done = await this.settleWithdrawal(id);
        if (done) summary[done] += 1;
      } catch (error) {
        this.logger.warn({ err: error, withdrawalId: id }, 'Could not settle a withdrawal with its payout provider; asking again later');
      }
    }
    // Asked about: the next look-up of each is when its backoff (or its next attempt's time) says, not the lease's end.
    await this.withdrawals.releaseChecks(claimed.map(({ id }) => id));
    return summary;
  }

  /**
   * The checks before the payout provider's callback `event` is played on a withdrawal (the sandbox's
   * events route): the seller's (403/404), a move the status table allows (409 changes nothing), and the
   * payout known to the provider. A provider processes or completes only a payout it received, so one
   * not recorded as sent is asked about and, if the provider does not have it, sent first; a
   * cancellation or rejection of one not recorded as sent cancels its reference at the provider first,
   * so that a payout job still on its way is refused instead of paid. Answers the payout's reference.
   */
  async admitEvent(sellerId: number, id: number, event: WithdrawalEvent): Promise<string> {
    const current = await this.withdrawals.findById(id);
    this.assertOwned(current, sellerId, id);
    // The sandbox plays the callbacks of the payouts it makes only: a real provider's moves only on its own word.
    if (current.provider !== 'sandbox') {
      throw new DomainError(
        'NOT_SUPPORTED',
        `Withdrawal ${id} is paid out by the provider ${current.provider}, not by the sandbox: the sandbox moves only its own records`,
      );
    }
    nextWithdrawalStatus(current.status, event);
    const reference = payoutReference(id);
    if (current.externalId !== null) return reference;
    const payouts = this.providers.payout(current.provider, `Withdrawal ${id}`);
    if (event === 'CANCELLED' || event === 'REJECTED') {
      if (!payouts.cancelPayout) throw new Error(`The payout provider ${current.provider} cannot cancel a payout`);
      await payouts.cancelPayout(reference);
    } else {
      const known = await payouts.findPayout(reference, current.providerReference);
      if (known?.externalId) await this.withdrawals.setExternalIdIfUnset(id, known.externalId);
      else await this.requestPayout(current);
    }
    return reference;
  }

  /**
   * The payout provider's callback (the sandbox's events route, after admitEvent): its move of the status
   * table with its balance effect and webhook, in one transaction on the withdrawal read under lock.
   */
  async applyEvent(sellerId: number, id: number, event: WithdrawalEvent): Promise<WithdrawalLookupResponse> {
    const profile = await this.sellers.withdrawalProfile(sellerId);
    // Why the provider rejected or cancelled it, as its record says (kept with the failure), read before the transaction.
    const current = event === 'REJECTED' || event === 'CANCELLED' ? await this.withdrawals.findById(id) : null;
    const said = current ? await this.providers.payout(current.provider, `Withdrawal ${id}`).findPayout(payoutReference(id), current.providerReference) : null;
    const after = await this.dataSource.transaction(async (manager) => {
      const withdrawal = await this.withdrawals.findByIdForUpdate(id, manager);
      this.assertOwned(withdrawal, sellerId, id);
      return this.applyMoves(manager, withdrawal, [event], profile.user, { reason: said?.reason ?? null });
    });
    return toWithdrawalLookup(after);
  }

  /**
   * A payout at the withdrawal's provider (the skeleton of src/providers/provider-operation.ts), under the
   * withdrawal's reference (payoutReference, the same on every try: the provider pays a reference at most
   * once, and answers a reference it has with the payout it registered), to the seller's key with the
   * seller's own document (a provider that checks the key's owner refuses another's); its answer applied
   * (applyPayoutResult: the provider's id recorded, PROCESSING where the provider says the Pix is on its
   * way). A refusal is settled by a look-up (refusedPayout).
   */
  private readonly payoutAtProvider: ProviderOperation<{ withdrawal: WithdrawalEntity; payee: WithdrawalProfile['payee']; providerReference: string }, PayoutReceipt> = {
    name: 'payout',
    provider: ({ withdrawal }) => withdrawal.provider,
    reference: ({ withdrawal }) => payoutReference(withdrawal.id),
    call: ({ withdrawal, payee, providerReference }) =>
      this.providers.payout(withdrawal.provider, `Withdrawal ${withdrawal.id}`).requestPayout({
        reference: payoutReference(withdrawal.id),
        providerReference,
        netAmountCents: withdrawal.netAmountCents,
        pixKey: withdrawal.pixKey,
        pixKeyType: withdrawal.pixKeyType,
        payee,
      }),
    apply: async ({ withdrawal }, receipt) => {
      await this.applyPayoutResult(withdrawal, { status: receipt.status, externalId: receipt.externalId, reason: null });
    },
    fail: ({ withdrawal, providerReference }, reason) => this.refusedPayout({ ...withdrawal, providerReference }, reason),
  };

  /**
   * The payout sent (payoutAtProvider) as one recorded attempt: true when the provider took it, false
   * when it refused it or the withdrawal is not PENDING any more, `notBefore` when the last attempt is too
   * recent for another. An attempt is recorded on the withdrawal before its
   * call, with the provider's id of the payout fixed at the first (every later attempt is sent under it),
   * and only when the last attempt is at least the provider's resendAfterMs old: whatever an earlier
   * attempt did at the provider shows in the look-up the recovery job makes first, so a refusal of this
   * one is the payout's fate. An answer that does not come throws: the queue retries (no sooner than that
   * spacing allows), then the recovery job asks.
   */
  private async requestPayout(withdrawal: WithdrawalEntity): Promise<boolean | { notBefore: Date }> {
    const { payee } = await this.sellers.withdrawalProfile(withdrawal.sellerId);
    const payouts = this.providers.payout(withdrawal.provider, `Withdrawal ${withdrawal.id}`);
    const reference = payoutReference(withdrawal.id);
    const attempt = await this.withdrawals.recordPayoutAttempt(withdrawal.id, payouts.providerReferenceFor?.(reference) ?? reference, payouts.resendAfterMs ?? 0);
    if (attempt === null) return false;
    if ('notBefore' in attempt) return attempt;
    const outcome = await runOperation(this.payoutAtProvider, { withdrawal, payee, providerReference: attempt.sendUnder });
    // No answer yet (the provider silent, or its outcome not saved): the queue retries and the recovery job
    // asks; a caller that waits for it (the sandbox's events route) answers 503, try again.
    if (outcome.kind === 'unknown') throw new DomainError('SERVICE_UNAVAILABLE', `Payout ${payoutReference(withdrawal.id)} got no answer from ${withdrawal.provider} yet; it is asked again later`);
    return outcome.kind === 'answered';
  }

  /**
   * A payout the provider refused. One it has under the reference (it cancelled or rejected it) is moved
   * by its callback, or the recovery job's look-up, as before; with nothing there, the refusal itself is
   * its last word (Efí's refusals of a send): the withdrawal fails with the provider's reason and its
   * money goes back to available.
   */
  private async refusedPayout(withdrawal: WithdrawalEntity, reason: string): Promise<void> {
    const known = await this.providers.payout(withdrawal.provider, `Withdrawal ${withdrawal.id}`).findPayout(payoutReference(withdrawal.id), withdrawal.providerReference);
    if (!known) await this.applyPayoutResult(withdrawal, { status: 'REJECTED', externalId: null, reason: reason.slice(0, 500) });
  }

  /**
   * A provider's notification naming a payout by the provider's own id (`providerReference`: Efí's
   * idEnvio, as the withdrawal recorded it at its first attempt; the intake's worker, src/intake).
   * 'unknown' when no withdrawal of that provider recorded it (forged, or a payout made outside the
   * gateway: the caller counts it). Otherwise as settlePayout.
   */
  async settleNotifiedPayout(provider: string, providerReference: string, note: string | null = null): Promise<'settled' | 'unknown' | 'disagrees'> {
    const withdrawal = await this.withdrawals.findByProviderReference(provider, providerReference);
    return withdrawal ? this.settlePayout(withdrawal, note) : 'unknown';
  }

  /**
   * What a withdrawal's payout provider says of it now, applied: only a look-up moves the withdrawal;
   * `note`, a notification's words about it, is kept only as the reason of a rejection the look-up
   * confirms. 'unknown' when the provider has no such payout (nothing changes); 'disagrees' when the
   * provider says of it what no move can bring the withdrawal to (left to an operator).
   */
  async settlePayout(withdrawal: WithdrawalEntity, note: string | null = null): Promise<'settled' | 'unknown' | 'disagrees'> {
    const known = await this.providers.payout(withdrawal.provider, `Withdrawal ${withdrawal.id}`).findPayout(payoutReference(withdrawal.id), withdrawal.providerReference);
    if (!known) return 'unknown';
    // The notification's words only name why a payout the look-up says was rejected failed (Efí's look-up does not say).
    const said = known.status === 'REJECTED' && note ? { ...known, reason: note } : known;
    return (await this.applyPayoutResult(withdrawal, said)) === null ? 'disagrees' : 'settled';
  }

  /** One open withdrawal settled with its provider by the recovery job: sent again, recovered (recorded or moved), or null for nothing done. */
  private async settleWithdrawal(id: number): Promise<'sent' | 'recovered' | null> {
    const withdrawal = await this.withdrawals.findById(id);
    if (!withdrawal || (withdrawal.status !== 'PENDING' && withdrawal.status !== 'PROCESSING')) return null;
    const known = await this.providers.payout(withdrawal.provider, `Withdrawal ${id}`).findPayout(payoutReference(id), withdrawal.providerReference);
    if (known) {
      const moves = await this.applyPayoutResult(withdrawal, known);
      return moves === null || (moves === 0 && withdrawal.externalId !== null) ? null : 'recovered';
    }
    if (withdrawal.status !== 'PENDING') {
      this.logger.error({ withdrawalId: id, status: withdrawal.status }, 'The payout provider has no payout for a withdrawal it called back about; left to an operator');
      return null;
    }
    const sent = await this.requestPayout(withdrawal);
    // Its last attempt too recent to send again: looked up again (and sent, if still nothing) once it is old enough.
    if (typeof sent === 'object') await this.withdrawals.checkAgainAt(id, sent.notBefore);
    return sent === true ? 'sent' : null;
  }

  /**
   * What the payout provider says of a withdrawal's payout — its answer to the request, or to a look-up
   * by our reference — applied, the one way either is: the provider's id recorded once, and the
   * withdrawal caught up with what the provider says through the provider's own callbacks
   * (withdrawalCatchUp: a payout paid while its withdrawal is PENDING is PROCESSING then COMPLETED),
   * applied by applyMoves as a callback is, all in one transaction on the withdrawal read under lock.
   * Nothing to move: the id in one statement. How many moves were made; null, with nothing changed, when
   * the withdrawal and the provider disagree beyond any move (a final withdrawal the provider says
   * otherwise of: logged for an operator).
   */
  private async applyPayoutResult(withdrawal: WithdrawalEntity, result: PayoutResult): Promise<number | null> {
    // A payout of another amount or key under the withdrawal's reference is not its payment (a send made by
    // someone else under the same id): nothing moves, the operator is told.
    if ((result.amountCents !== undefined && result.amountCents !== withdrawal.netAmountCents) || (result.pixKey !== undefined && !samePixKey(result.pixKey, withdrawal.pixKey))) {
      return this.disagreement(withdrawal, result);
    }
    const planned = withdrawalCatchUp(withdrawal.status, result.status);
    if (planned === null) return this.disagreement(withdrawal, result);
    if (planned.length === 0) {
      if (result.externalId) await this.withdrawals.setExternalIdIfUnset(withdrawal.id, result.externalId);
      return 0;
    }
    const profile = await this.sellers.withdrawalProfile(withdrawal.sellerId);
    return this.dataSource.transaction(async (manager) => {
      const locked = (await this.withdrawals.findByIdForUpdate(withdrawal.id, manager)) as WithdrawalEntity;
      // Read again under lock: a callback may have moved it since.
      const events = withdrawalCatchUp(locked.status, result.status);
      if (events === null) return this.disagreement(locked, result);
      if (result.externalId) await this.withdrawals.setExternalIdIfUnset(locked.id, result.externalId, manager);
      await this.applyMoves(manager, locked, events, profile.user, result);
      if (events.length > 0) {
        this.logger.log({ withdrawalId: locked.id, from: locked.status, events, reason: result.reason }, 'Withdrawal brought to what its payout provider says');
      }
      return events.length;
    });
  }

  private disagreement(withdrawal: WithdrawalEntity, result: PayoutResult): null {
    this.logger.error(
      { withdrawalId: withdrawal.id, status: withdrawal.status, payout: result.status, externalId: result.externalId, reason: result.reason },
      'A withdrawal and its payout provider disagree beyond any move; left to an operator',
    );
    return null;
  }

  /**
   * The payout provider's callbacks applied, in order, to a withdrawal read under lock, in the caller's
   * transaction: each a move of the status table (409 when it does not allow it), with its status line,
   * its balanced ledger posting and its webhook (spec 6.2). Every move of a withdrawal after its request
   * is made here, whether its callback came or the recovery job learned it by asking.
   */
  private async applyMoves(
    manager: EntityManager,
    withdrawal: WithdrawalEntity,
    events: readonly WithdrawalEvent[],
    user: WithdrawalProfile['user'],
    said: Pick<PayoutResult, 'reason' | 'amountCents'> = { reason: null },
  ): Promise<WithdrawalEntity> {
    let current = withdrawal;
    for (const event of events) {
      const next = nextWithdrawalStatus(current.status, event);
      const final = next !== 'PROCESSING';
      // What the provider said is kept with the move it made: why a payout failed, what it sent.
      const evidence = {
        ...(next === 'FAILED' || next === 'CANCELLED' ? { failureReason: said.reason?.slice(0, 500) ?? null } : {}),
        ...(next === 'COMPLETED' && said.amountCents !== undefined ? { providerAmountCents: said.amountCents } : {}),
      };
      if (!(await this.withdrawals.updateStatusIfCurrent(current.id, current.status, { status: next, processedAt: final ? new Date() : null, ...evidence }, manager))) {
        throw new DomainError('CONFLICT', `Withdrawal ${current.id} was changed by another request; retry`);
      }
      const effect = withdrawalLedgerEffect(
        event,
        { amountCents: current.amountCents, feeCents: current.feeTotalCents, netAmountCents: current.netAmountCents },
        current.status,
      );
      if (effect) await this.ledger.post(manager, [{ sellerId: current.sellerId, referenceType: 'WITHDRAWAL', referenceId: current.id, effect, provider: this.holderOf(current) }]);
      current = (await this.withdrawals.findById(current.id, manager)) as WithdrawalEntity;
      if (ANNOUNCED.has(next)) {
        await this.notifications.enqueueWithdrawalWebhooks(manager, current.sellerId, current.id, toWithdrawalWebhook(current, user));
      }
    }
    return current;
  }

  /** The provider whose account a withdrawal's money leaves from (its own, or the one its payout provider pays from): its ledger's provider accounts. */
  private holderOf(withdrawal: WithdrawalEntity): string {
    return this.providers.payout(withdrawal.provider, `Withdrawal ${withdrawal.id}`).paysFrom ?? withdrawal.provider;
  }

  /** After the commit, not awaited: a Redis outage must not hold the request; the recovery job covers a lost job. */
  private enqueuePayout(withdrawalId: number): void {
    this.payoutQueue
      .add(REQUEST_PAYOUT_JOB, { withdrawalId }, { jobId: `payout:${withdrawalId}`, attempts: 5, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true, removeOnFail: true })
      .catch((error: unknown) => this.logger.warn({ err: error, withdrawalId }, 'Could not enqueue a payout; the recovery job will send it'));
  }

  private async answerPriorUse(prior: PriorUse): Promise<CreatedWithdrawal> {
    if (prior.kind === 'REPLAY') return { status: prior.status, body: prior.body as WithdrawalResponse, replayed: true };
    const withdrawal = (await this.withdrawals.findById(prior.resourceId)) as WithdrawalEntity;
    return { status: 201, body: toWithdrawal(withdrawal), replayed: true };
  }

  private assertOwned(withdrawal: WithdrawalEntity | null, sellerId: number, id: number): asserts withdrawal is WithdrawalEntity {
    if (!withdrawal) throw new DomainError('NOT_FOUND', `Withdrawal ${id} not found`);
    if (withdrawal.sellerId !== sellerId) throw new DomainError('FORBIDDEN', `Withdrawal ${id} belongs to another account`);
  }
}

function insufficientBalance(availableCents: Cents, amountCents: Cents): DomainError {
  return new DomainError('INSUFFICIENT_BALANCE', `Available balance ${centsToReaisString(availableCents)} is less than ${centsToReaisString(amountCents)}`);
}
