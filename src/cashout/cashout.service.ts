import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SettingsService } from '../admin/settings.service';
import { CASHOUT_MAXIMUM_CENTS, CASHOUT_MINIMUM_CENTS } from '../domain/cashout-limits';
import { DomainError, RequestValidationError } from '../domain/domain-error';
import { cashoutFees } from '../domain/fees';
import { cents, centsToReaisString, reaisToCents } from '../domain/money';
import { pixKeyProblem } from '../domain/pix-key';
import { nextWithdrawalStatus, WithdrawalEvent, WithdrawalStatus } from '../domain/withdrawal-status';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { LedgerMovement, LedgerService } from '../ledger/ledger.service';
import { NotificationsService } from '../notifications/notifications.service';
import { PAYOUT_PROVIDER, PayoutProvider } from '../providers/payout-provider.port';
import { SellerService } from '../seller/seller.service';
import { CashoutRepository } from './cashout.repository';
import { CreateCashoutDto, WithdrawalLookupResponse, WithdrawalResponse } from './dto/cashout.dto';
import { WithdrawalEntity } from './entities/withdrawal.entity';
import { toWithdrawal, toWithdrawalLookup, toWithdrawalWebhook } from './withdrawal.presenter';

/** Statuses the withdrawal webhook announces (spec 6.2). */
const ANNOUNCED: ReadonlySet<WithdrawalStatus> = new Set(['PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED']);

/**
 * Cashouts of available balance to a PIX key (spec 4.5, platform.md §4): the amount moves from
 * available to blocked under the balance row's lock, so parallel requests never overdraw; COMPLETED
 * removes it; a rejection or a cancellation returns it.
 */
@Injectable()
export class CashoutService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly withdrawals: CashoutRepository,
    private readonly sellers: SellerService,
    private readonly settings: SettingsService,
    private readonly ledger: LedgerService,
    private readonly idempotency: IdempotencyService,
    private readonly notifications: NotificationsService,
    @Inject(PAYOUT_PROVIDER) private readonly payouts: PayoutProvider,
  ) {}

  async request(sellerId: number, request: CreateCashoutDto, idempotencyKey: string | undefined) {
    const amountCents = reaisToCents(request.amount);
    if (amountCents === null || amountCents <= 0) {
      throw new RequestValidationError([], [{ field: 'amount', message: 'amount must be a number of reais greater than zero, with at most two decimals' }]);
    }
    const pixKeyType = request.pixKeyType ?? 'CPF';
    const keyProblem = pixKeyProblem(request.pixKey, pixKeyType);
    if (keyProblem) throw new RequestValidationError([], [{ field: 'pixKey', message: keyProblem }]);

    if (!(await this.settings.current()).apiWithdrawalsEnabled) {
      throw new DomainError('API_WITHDRAWAL_DISABLED_GLOBALLY', 'Cashouts through the API are disabled on the platform for now');
    }
    const profile = await this.sellers.cashoutProfile(sellerId);
    if (!profile.transferEnabled) throw new DomainError('TRANSFER_NOT_ALLOWED', 'Cashouts are not enabled for this account');
    if (amountCents < CASHOUT_MINIMUM_CENTS) {
      throw new DomainError('MINIMUM_VALUE', `The smallest cashout is ${centsToReaisString(CASHOUT_MINIMUM_CENTS)} reais`);
    }
    if (amountCents > CASHOUT_MAXIMUM_CENTS) {
      throw new DomainError('MAXIMUM_VALUE', `The largest cashout is ${centsToReaisString(CASHOUT_MAXIMUM_CENTS)} reais`);
    }
    const fees = cashoutFees(amountCents, profile.fees);
    if (fees.totalCents >= amountCents) {
      throw new DomainError('MINIMUM_VALUE', `The cashout must be more than its fees of ${centsToReaisString(fees.totalCents)} reais`);
    }

    return this.idempotency.run<WithdrawalResponse>(
      { sellerId, scope: 'POST /api/public/cashout', key: idempotencyKey, request: { ...request, pixKeyType } },
      async (manager) => {
        const balance = await this.ledger.lockBalance(manager, sellerId);
        if (balance.availableCents < amountCents) {
          throw new DomainError('INSUFFICIENT_BALANCE', `Available balance ${centsToReaisString(balance.availableCents)} is less than ${centsToReaisString(amountCents)}`);
        }
        const withdrawal = await this.withdrawals.insert(
          {
            sellerId,
            status: 'PENDING',
            amountCents,
            feeFixedCents: fees.fixedCents,
            feeVariableCents: fees.variableCents,
            feeTotalCents: fees.totalCents,
            netAmountCents: cents(amountCents - fees.totalCents),
            pixKey: request.pixKey,
            pixKeyType,
          },
          manager,
        );
        await this.ledger.post(manager, {
          sellerId,
          kind: 'CASHOUT_REQUESTED',
          referenceType: 'WITHDRAWAL',
          referenceId: withdrawal.id,
          movements: [
            { account: 'AVAILABLE', amountCents: cents(-amountCents) },
            { account: 'BLOCKED', amountCents },
          ],
        });
        const payout = await this.payouts.requestPayout({ withdrawalId: withdrawal.id, netAmountCents: withdrawal.netAmountCents, pixKey: withdrawal.pixKey, pixKeyType });
        await this.withdrawals.setExternalId(withdrawal.id, payout.externalId, manager);
        return { status: 201, body: toWithdrawal(withdrawal) };
      },
    );
  }

  async lookup(sellerId: number, id: number): Promise<WithdrawalLookupResponse> {
    const withdrawal = await this.withdrawals.findById(id);
    this.assertOwned(withdrawal, sellerId, id);
    return toWithdrawalLookup(withdrawal);
  }

  /** The payout provider's callback (sandbox route): the move, its balance effect and the webhooks, in one transaction. */
  async applyEvent(sellerId: number, id: number, event: WithdrawalEvent): Promise<WithdrawalLookupResponse> {
    const profile = await this.sellers.cashoutProfile(sellerId);
    await this.dataSource.transaction(async (manager) => {
      const withdrawal = await this.withdrawals.findByIdForUpdate(id, manager);
      this.assertOwned(withdrawal, sellerId, id);
      const next = nextWithdrawalStatus(withdrawal.status, event);
      const final = next !== 'PROCESSING';
      if (!(await this.withdrawals.updateStatusIfCurrent(id, withdrawal.status, { status: next, processedAt: final ? new Date() : null }, manager))) {
        throw new DomainError('CONFLICT', `Withdrawal ${id} was changed by another request; retry`);
      }
      const movements = balanceMovements(next, withdrawal);
      if (movements) {
        await this.ledger.post(manager, {
          sellerId,
          kind: next === 'COMPLETED' ? 'CASHOUT_COMPLETED' : 'CASHOUT_RETURNED',
          referenceType: 'WITHDRAWAL',
          referenceId: id,
          movements,
        });
      }
      if (ANNOUNCED.has(next)) {
        const moved = (await this.withdrawals.findById(id, manager)) as WithdrawalEntity;
        await this.notifications.enqueueWithdrawalWebhooks(manager, sellerId, id, toWithdrawalWebhook(moved, profile.user));
      }
    });
    return this.lookup(sellerId, id);
  }

  private assertOwned(withdrawal: WithdrawalEntity | null, sellerId: number, id: number): asserts withdrawal is WithdrawalEntity {
    if (!withdrawal) throw new DomainError('NOT_FOUND', `Withdrawal ${id} not found`);
    if (withdrawal.sellerId !== sellerId) throw new DomainError('FORBIDDEN', `Withdrawal ${id} belongs to another account`);
  }
}

/** platform.md §4: COMPLETED removes the blocked amount; FAILED (rejected) and CANCELLED return it to available. */
function balanceMovements(next: WithdrawalStatus, withdrawal: WithdrawalEntity): LedgerMovement[] | null {
  const amount = withdrawal.amountCents;
  switch (next) {
    case 'COMPLETED':
      return [{ account: 'BLOCKED', amountCents: cents(-amount) }];
    case 'FAILED':
    case 'CANCELLED':
      return [
        { account: 'BLOCKED', amountCents: cents(-amount) },
        { account: 'AVAILABLE', amountCents: amount },
      ];
    default:
      return null;
  }
}
