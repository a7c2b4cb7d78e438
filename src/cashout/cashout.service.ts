import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { CteStatement } from '../database/cte-statement';
import { SettingsService } from '../admin/settings.service';
import { AppConfig } from '../config/app-config';
import { WITHDRAWAL_MAXIMUM_CENTS, WITHDRAWAL_MINIMUM_CENTS } from '../domain/withdrawal-limits';
import { DomainError, RequestValidationError } from '../domain/domain-error';
import { withdrawalFees } from '../domain/fees';
import { Cents, cents, centsToReaisString, reaisToCents } from '../domain/money';
import { pixKeyProblem } from '../domain/pix-key';
import { withdrawalLedgerEffect, withdrawalRequestedEffect } from '../domain/withdrawal-ledger';
import { nextWithdrawalStatus, WithdrawalEvent, WithdrawalStatus } from '../domain/withdrawal-status';
import { IdempotencyService, PriorUse } from '../idempotency/idempotency.service';
import { LedgerService } from '../ledger/ledger.service';
import { NotificationsService } from '../notifications/notifications.service';
import { payoutReference, PayoutRefusedError } from '../providers/payout-provider.port';
import { ProviderRegistry } from '../providers/provider-registry';
import { SellerService } from '../seller/seller.service';
import { CashoutRepository } from './cashout.repository';
import { CreateCashoutDto, WithdrawalLookupResponse, WithdrawalResponse } from './dto/cashout.dto';
import { WithdrawalEntity } from './entities/withdrawal.entity';
import { toWithdrawal, toWithdrawalLookup, toWithdrawalWebhook } from './withdrawal.presenter';

export const PAYOUTS_QUEUE = 'payouts';
export const REQUEST_PAYOUT_JOB = 'request-payout';
const RECOVERY_BATCH = 500;

/** Statuses the withdrawal webhook announces (spec 6.2). */
const ANNOUNCED: ReadonlySet<WithdrawalStatus> = new Set(['PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED']);

export interface CreatedWithdrawal {
  status: number;
  body: WithdrawalResponse;
  replayed: boolean;
}

/**
 * Withdrawals of available balance to a PIX key (spec 4.5, platform.md §4). The request commits the
 * withdrawal PENDING with its balance hold (available → blocked, under the balance row's lock, so
 * parallel requests never overdraw) and its answer; the payout is then requested from the provider by a
 * job, outside any transaction, with the withdrawal's id as reference, and a recovery job sends any
 * payout left unsent. COMPLETED removes the hold; a rejection or a cancellation returns it.
 */
@Injectable()
export class CashoutService {
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
  ) {
    this.payoutQueue.on('error', (error: Error) => this.logger.warn({ err: error }, 'Payouts queue cannot reach Redis'));
  }

  async request(sellerId: number, request: CreateCashoutDto, idempotencyKey: string | undefined): Promise<CreatedWithdrawal> {
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

    const draft: Partial<WithdrawalEntity> & Pick<WithdrawalEntity, 'provider'> = {
      sellerId,
      provider: this.providers.forNew('PAYOUT'),
      status: 'PENDING',
      amountCents,
      feeFixedCents: fees.fixedCents,
      feeVariableCents: fees.variableCents,
      feeTotalCents: fees.totalCents,
      netAmountCents: cents(amountCents - fees.totalCents),
      pixKey: request.pixKey,
      pixKeyType,
    };
    const alone = idempotent ? null : await this.commitAlone(sellerId, draft, amountCents);
    if (alone) {
      this.enqueuePayout(alone.id);
      return { status: 201, body: toWithdrawal(alone), replayed: false };
    }
    const outcome = await this.dataSource.transaction(async (manager) => {
      const claimed = await this.idempotency.claim(manager, idempotent);
      if (claimed) return claimed;
      // The row is written before the balance is locked, so that the seller's lock is held for the
      // check and the posting only (a refusal rolls the row back).
      const withdrawal = await this.withdrawals.insert(draft, manager);
      const balance = await this.ledger.lockBalance(manager, sellerId);
      if (balance.availableCents < amountCents) throw insufficientBalance(balance.availableCents, amountCents);
      await this.ledger.post(manager, [{ sellerId, referenceType: 'WITHDRAWAL', referenceId: withdrawal.id, effect: withdrawalRequestedEffect(amountCents), provider: withdrawal.provider }]);
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
   * A withdrawal without an Idempotency-Key in one statement, outside a transaction: the seller's balance
   * row locked and read, the withdrawal and its status line written only if the available balance covers
   * the amount, and the hold posted on the same condition (the balance row moved under that lock, held
   * for this statement alone). Its id is taken from the sequence first, for the posting's reference.
   * INSUFFICIENT_BALANCE when it does not cover it; null, with nothing written, when the seller has no
   * balances row yet (the transactional path creates it).
   */
  private async commitAlone(sellerId: number, draft: Partial<WithdrawalEntity> & Pick<WithdrawalEntity, 'provider'>, amountCents: Cents): Promise<WithdrawalEntity | null> {
    const id = await this.withdrawals.nextId();
    const statement = new CteStatement();
    const posting = this.ledger.prepare(statement, [{ sellerId, referenceType: 'WITHDRAWAL', referenceId: id, effect: withdrawalRequestedEffect(amountCents), provider: draft.provider }]);
    const available = this.ledger.lockedAvailable(statement, sellerId);
    const written = this.withdrawals.addIfFunded(statement, { ...draft, id }, `${posting.ready} AND ${available} >= ${statement.param(amountCents)}::bigint`);
    posting.add(`(SELECT count(*) FROM ${written}) = 1`);
    const [row] = await statement.run<Record<string, unknown> & { ready: boolean; available: string | null }>(
      this.dataSource.manager,
      `SELECT r.ready, r.available, w.* FROM (SELECT ${posting.ready} AS ready, ${available} AS available) r LEFT JOIN ${written} w ON true`,
    );
    if (!row.ready || row.available === null) return null;
    if (row.id === null) throw insufficientBalance(cents(Number(row.available)), amountCents);
    return this.withdrawals.hydrate(row);
  }

  async lookup(sellerId: number, id: number): Promise<WithdrawalLookupResponse> {
    const withdrawal = await this.withdrawals.findById(id);
    this.assertOwned(withdrawal, sellerId, id);
    return toWithdrawalLookup(withdrawal);
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
   * The payout job: asks the provider to pay out a PENDING withdrawal not yet sent, outside any
   * transaction, with the withdrawal's id as reference (the provider pays a reference at most once), then
   * records the provider's id. Safe to run twice, from the queue and from the recovery job at once. A
   * reference the provider refuses (it cancelled it) is left to the provider's callback.
   */
  async sendPayout(withdrawalId: number): Promise<void> {
    const withdrawal = await this.withdrawals.findById(withdrawalId);
    if (!withdrawal || withdrawal.status !== 'PENDING' || withdrawal.externalId !== null) return;
    const reference = payoutReference(withdrawal.id);
    try {
      // Idempotent by reference: a payout the provider already has (a crash before its id was saved) is answered again, not sent twice.
      const receipt = await this.providers.payout(withdrawal.provider, `Withdrawal ${withdrawal.id}`).requestPayout({ reference, netAmountCents: withdrawal.netAmountCents, pixKey: withdrawal.pixKey, pixKeyType: withdrawal.pixKeyType });
      await this.withdrawals.setExternalIdIfUnset(withdrawal.id, receipt.externalId);
    } catch (error) {
      if (!(error instanceof PayoutRefusedError)) throw error;
      // The provider cancelled or rejected this reference: its own callback moves the withdrawal (and
      // returns the money); moving it here too would race that callback.
      this.logger.warn({ err: error, withdrawalId }, 'The payout provider refused the payout; waiting for its callback');
    }
  }

  /** PENDING withdrawals whose payout was never recorded as sent (a crash, Redis down): sent now. Returns how many. */
  async recoverPayouts(sellerId: number | null): Promise<number> {
    const ids = await this.withdrawals.claimUnsentPayouts(this.config.providerRecoveryAfterSeconds, sellerId, RECOVERY_BATCH);
    let sent = 0;
    for (const id of ids) {
      try {
        await this.sendPayout(id);
        sent += 1;
      } catch (error) {
        this.logger.warn({ err: error, withdrawalId: id }, 'Could not send a payout; retrying later');
      }
    }
    return sent;
  }

  /**
   * The payout provider's callback (sandbox route). The move is checked first (409 changes nothing).
   * The provider can only process or complete a payout it has received, so an unsent one is sent
   * first; a cancellation or rejection of a payout not recorded as sent cancels its reference at the
   * provider first, so a payout job still on its way is refused instead of paid.
   */
  async applyEvent(sellerId: number, id: number, event: WithdrawalEvent): Promise<WithdrawalLookupResponse> {
    const current = await this.withdrawals.findById(id);
    this.assertOwned(current, sellerId, id);
    nextWithdrawalStatus(current.status, event);
    if (current.externalId === null) {
      if (event === 'PROCESSING' || event === 'COMPLETED') await this.sendPayout(id);
      else await this.providers.payout(current.provider, `Withdrawal ${id}`).cancelPayout(payoutReference(id));
    }
    return toWithdrawalLookup(await this.move(sellerId, id, event));
  }

  /** The move of a withdrawal with its balance effect and webhooks, in one transaction. */
  private async move(sellerId: number, id: number, event: WithdrawalEvent): Promise<WithdrawalEntity> {
    const profile = await this.sellers.withdrawalProfile(sellerId);
    return this.dataSource.transaction(async (manager) => {
      const withdrawal = await this.withdrawals.findByIdForUpdate(id, manager);
      this.assertOwned(withdrawal, sellerId, id);
      const next = nextWithdrawalStatus(withdrawal.status, event);
      const final = next !== 'PROCESSING';
      if (!(await this.withdrawals.updateStatusIfCurrent(id, withdrawal.status, { status: next, processedAt: final ? new Date() : null }, manager))) {
        throw new DomainError('CONFLICT', `Withdrawal ${id} was changed by another request; retry`);
      }
      const effect = withdrawalLedgerEffect(
        event,
        { amountCents: withdrawal.amountCents, feeCents: withdrawal.feeTotalCents, netAmountCents: withdrawal.netAmountCents },
        withdrawal.status,
      );
      if (effect) await this.ledger.post(manager, [{ sellerId, referenceType: 'WITHDRAWAL', referenceId: id, effect, provider: withdrawal.provider }]);
      const after = (await this.withdrawals.findById(id, manager)) as WithdrawalEntity;
      if (ANNOUNCED.has(next)) {
        await this.notifications.enqueueWithdrawalWebhooks(manager, sellerId, id, toWithdrawalWebhook(after, profile.user));
      }
      return after;
    });
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
